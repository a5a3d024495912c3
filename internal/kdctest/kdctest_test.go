package kdctest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/types"
)

// The KDC serves the MIT tools (kinit with a password) and gokrb5 (a keytab login, a
// service ticket, and the service verifying it from its own keytab): the pieces Bobbin's
// Kerberos support is built from, checked against the real KDC.
func TestKDCServesMITToolsAndGokrb5(t *testing.T) {
	k := Start(t, "BOBBIN.TEST")
	k.AddPrincipal(t, "alice", "alice-secret")
	kinit := exec.Command("kinit", "alice")
	kinit.Env = k.Env()
	kinit.Stdin = strings.NewReader("alice-secret\n")
	if out, err := kinit.CombinedOutput(); err != nil {
		t.Fatalf("kinit: %v\n%s", err, out)
	}
	klist := exec.Command("klist")
	klist.Env = k.Env()
	if out, err := klist.CombinedOutput(); err != nil || !strings.Contains(string(out), "alice@BOBBIN.TEST") {
		t.Fatalf("klist: %v\n%s", err, out)
	}

	nmKeytab := k.Keytab(t, "nm.keytab", "nm/localhost")
	rmKeytab := k.Keytab(t, "rm.keytab", "rm/localhost")
	cfg, err := config.Load(k.Krb5Conf())
	if err != nil {
		t.Fatal(err)
	}
	nmKT, err := keytab.Load(nmKeytab)
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewWithKeytab("nm/localhost", k.Realm, nmKT, cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		t.Fatalf("keytab login: %v", err)
	}
	defer cl.Destroy()
	tkt, key, err := cl.GetServiceTicket("rm/localhost")
	if err != nil {
		t.Fatalf("service ticket: %v", err)
	}
	auth, err := types.NewAuthenticator(cl.Credentials.Domain(), cl.Credentials.CName())
	if err != nil {
		t.Fatal(err)
	}
	apReq, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		t.Fatal(err)
	}
	rmKT, err := keytab.Load(rmKeytab)
	if err != nil {
		t.Fatal(err)
	}
	ok, creds, err := service.VerifyAPREQ(&apReq, service.NewSettings(rmKT, service.DecodePAC(false)))
	if err != nil || !ok || creds.UserName() != "nm/localhost" || creds.Domain() != k.Realm {
		t.Fatalf("the service's verification: %v %v %v", ok, creds, err)
	}
	// A ticket for one service does not open another: the NM's own keytab lacks its key.
	if ok, _, err := service.VerifyAPREQ(&apReq, service.NewSettings(nmKT, service.DecodePAC(false))); ok || err == nil {
		t.Fatal("a ticket for rm/localhost verified against the NM's keytab")
	}
}
