package webapp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
)

// /conf shows every key Hadoop 3's ConfigRedactor masks, with its list or the one
// configured, and Bobbin's additions, as <redacted>; other values as they are. A list
// that does not compile is refused, naming the key.
func TestConfRedactsSensitiveKeys(t *testing.T) {
	c := conf.New()
	secrets := []string{"fs.azure.account.key.acct.blob.core.windows.net", "fs.s3a.secret.key", "fs.s3a.session.token",
		"dfs.webhdfs.oauth2.access.token", "fs.adl.oauth2.refresh.token", "hadoop.zk.auth", "yarn.resourcemanager.zk-auth",
		"ssl.server.keystore.password", "hadoop.http.authentication.signature.secret", "fs.s3a.encryption.key", "my.db.credential"}
	for _, k := range secrets {
		c.Set(k, "s3cr3t-"+k)
	}
	c.Set("yarn.resourcemanager.address", "rm:8032")
	r, err := NewRedactor(c)
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{Service: "ResourceManager", Conf: c, Redact: r}
	mux := http.NewServeMux()
	d.Install(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/conf?format=json", nil))
	var out struct{ Properties []confProperty }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range out.Properties {
		got[p.Key] = p.Value
	}
	for _, k := range secrets {
		if got[k] != Redacted {
			t.Errorf("/conf shows %s as %q", k, got[k])
		}
	}
	if got["yarn.resourcemanager.address"] != "rm:8032" || strings.Contains(rec.Body.String(), "s3cr3t") {
		t.Errorf("/conf:\n%s", rec.Body.String())
	}
	c.Set(KeySensitive, "password$")
	if r, _ := NewRedactor(c); r.Redact("fs.s3a.secret.key", "v") != "v" || r.Redact("fs.s3a.session.token", "v") != Redacted {
		t.Error("a configured list replaces Hadoop's; Bobbin's additions stay")
	}
	c.Set(KeySensitive, "secret$,([")
	if _, err := NewRedactor(c); err == nil || !strings.Contains(err.Error(), KeySensitive) {
		t.Errorf("a bad list: %v", err)
	}
}
