package conf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func xmlProps(kv ...string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString("  <property><name>" + kv[i] + "</name><value>" + kv[i+1] + "</value></property>\n")
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

func TestDefaultsExpand(t *testing.T) {
	c := New()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	v, err := c.Get("yarn.resourcemanager.address")
	if err != nil || v != "0.0.0.0:8032" {
		t.Fatalf("address = %q %v", v, err)
	}
	if v, _ := c.Get("hadoop.tmp.dir"); strings.Contains(v, "${") || !strings.HasPrefix(v, "/tmp/hadoop-") {
		t.Fatalf("hadoop.tmp.dir = %q", v)
	}
}

func TestSiteFilesOverrideDefaultsAndFinalHolds(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "core-site.xml", `<configuration>
  <property><name>fs.defaultFS</name><value>file:///</value><final>true</final></property>
  <property><name>x.base</name><value>/data</value></property>
</configuration>`)
	writeFile(t, dir, "yarn-site.xml", xmlProps(
		"yarn.resourcemanager.hostname", "127.0.0.1",
		"fs.defaultFS", "hdfs://elsewhere:9000",
		"yarn.nodemanager.local-dirs", "${x.base}/nm,${x.base}/nm2",
	))
	c, used, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if used != dir {
		t.Fatalf("dir %q", used)
	}
	if v, _ := c.Get("yarn.resourcemanager.scheduler.address"); v != "127.0.0.1:8030" {
		t.Fatalf("scheduler address = %q", v)
	}
	if v, _ := c.Get("fs.defaultFS"); v != "file:///" {
		t.Fatalf("final property overridden: %q", v)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "final parameter fs.defaultFS") {
		t.Fatalf("warnings %v", c.Warnings)
	}
	dirs, _ := c.Strings("yarn.nodemanager.local-dirs")
	if strings.Join(dirs, "|") != "/data/nm|/data/nm2" {
		t.Fatalf("local dirs %v", dirs)
	}
	if c.Source("yarn.resourcemanager.hostname") != filepath.Join(dir, "yarn-site.xml") {
		t.Fatal(c.Source("yarn.resourcemanager.hostname"))
	}
}

func TestConfDirPrecedence(t *testing.T) {
	t.Setenv("YARN_CONF_DIR", "/y")
	t.Setenv("HADOOP_CONF_DIR", "/h")
	if ResolveDir("/x") != "/x" || ResolveDir("") != "/y" {
		t.Fatal("explicit or YARN_CONF_DIR not preferred")
	}
	t.Setenv("YARN_CONF_DIR", "")
	if ResolveDir("") != "/h" {
		t.Fatal("HADOOP_CONF_DIR not used")
	}
	if _, _, err := LoadDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing conf dir accepted")
	}
}

func TestExpansion(t *testing.T) {
	c := Empty()
	c.SetEnv(func(k string) (string, bool) {
		v, ok := map[string]string{"HOME_X": "/home/x", "EMPTY": ""}[k]
		return v, ok
	})
	c.Set("a", "${b}/a")
	c.Set("b", "${env.HOME_X}")
	c.Set("c", "${env.NOPE:-fallback}-${env.EMPTY:-e}-${env.EMPTY-f}")
	c.Set("d", "${unknown.key}")
	c.Set("e", "${java.io.tmpdir}/x")
	c.Set("loop1", "${loop2}")
	c.Set("loop2", "x${loop1}")
	c.Set("self", "${self}")
	for k, want := range map[string]string{"a": "/home/x/a", "c": "fallback-e-", "d": "${unknown.key}", "e": "/tmp/x"} {
		if got, err := c.Get(k); err != nil || got != want {
			t.Errorf("%s = %q %v, want %q", k, got, err, want)
		}
	}
	_, err := c.Get("loop1")
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Key != "loop1" || !strings.Contains(err.Error(), "variable loop: loop1 -> loop2 -> loop1") {
		t.Fatalf("loop: %v", err)
	}
	if _, err := c.Get("self"); err == nil {
		t.Fatal("self reference accepted")
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "loop2") {
		t.Fatalf("Validate: %v", err)
	}
}

func TestTypedGetters(t *testing.T) {
	c := Empty()
	c.Set("i", " 42 ")
	c.Set("hex", "0x10")
	c.Set("bad", "forty")
	c.Set("b", "TRUE")
	c.Set("bb", "yes")
	c.Set("d1", "30s")
	c.Set("d2", "1500")
	c.Set("d3", "2h")
	c.Set("d4", "10 minutes")
	c.Set("s1", "64m")
	c.Set("s2", "1G")
	c.Set("s3", "12xb")
	c.Set("hp1", "host:8032")
	c.Set("hp2", "host")
	c.Set("hp3", "hdfs://nn:9000/path")
	c.Set("hp4", "host:99999")
	c.Set("f", "0.5")
	if v, err := c.Int("i"); err != nil || v != 42 {
		t.Errorf("Int = %d %v", v, err)
	}
	if v, err := c.Int("hex"); err != nil || v != 16 {
		t.Errorf("hex = %d %v", v, err)
	}
	if _, err := c.Int("bad"); err == nil || err.Error() != `conf: set: bad = "forty": not an integer` {
		t.Errorf("bad int: %v", err)
	}
	if _, err := c.Int("missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing: %v", err)
	}
	if v, err := c.Bool("b"); err != nil || !v {
		t.Error("Bool")
	}
	if _, err := c.Bool("bb"); err == nil {
		t.Error("yes accepted as a boolean")
	}
	for k, want := range map[string]time.Duration{"d1": 30 * time.Second, "d2": 1500 * time.Millisecond, "d3": 2 * time.Hour} {
		if v, err := c.Duration(k, time.Millisecond); err != nil || v != want {
			t.Errorf("%s = %v %v", k, v, err)
		}
	}
	if _, err := c.Duration("d4", time.Millisecond); err == nil {
		t.Error("10 minutes accepted")
	}
	if v, _ := c.Size("s1"); v != 64<<20 {
		t.Errorf("s1 = %d", v)
	}
	if v, _ := c.Size("s2"); v != 1<<30 {
		t.Errorf("s2 = %d", v)
	}
	if _, err := c.Size("s3"); err == nil {
		t.Error("12xb accepted")
	}
	if h, p, err := c.HostPort("hp1", -1); err != nil || h != "host" || p != 8032 {
		t.Errorf("hp1 %s %d %v", h, p, err)
	}
	if h, p, err := c.HostPort("hp2", 8030); err != nil || h != "host" || p != 8030 {
		t.Errorf("hp2 %s %d %v", h, p, err)
	}
	if _, _, err := c.HostPort("hp2", -1); err == nil {
		t.Error("port required but missing accepted")
	}
	if h, p, err := c.HostPort("hp3", -1); err != nil || h != "nn" || p != 9000 {
		t.Errorf("hp3 %s %d %v", h, p, err)
	}
	if _, _, err := c.HostPort("hp4", -1); err == nil {
		t.Error("port 99999 accepted")
	}
	if v, err := c.Float("f"); err != nil || v != 0.5 {
		t.Error("Float")
	}
}

func TestBadXMLNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"unclosed":   `<configuration><property><name>a</name><value>1</value></property>`,
		"wrong root": `<conf><property><name>a</name><value>1</value></property></conf>`,
		"no name":    `<configuration><property><value>1</value></property></configuration>`,
		"bad final":  `<configuration><property><name>a</name><value>1</value><final>maybe</final></property></configuration>`,
		"stray elem": `<configuration><prop><name>a</name></prop></configuration>`,
		"not xml":    `this is not xml`,
		"empty":      ``,
	}
	for name, body := range cases {
		p := writeFile(t, dir, "yarn-site.xml", body)
		c := New()
		err := c.AddFile(p)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := c.Get("a"); err != nil {
			t.Errorf("%s: the bad file left state behind", name)
		}
		if _, ok := c.Raw("a"); ok {
			t.Errorf("%s: properties of a bad file were applied", name)
		}
	}
	// LoadDir refuses to start half-configured.
	writeFile(t, dir, "yarn-site.xml", cases["unclosed"])
	if _, _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "yarn-site.xml") {
		t.Fatalf("LoadDir: %v", err)
	}
}

func TestXIncludeAndAttributes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "extra.xml", xmlProps("inc.key", "from-include"))
	p := writeFile(t, dir, "yarn-site.xml", `<configuration xmlns:xi="http://www.w3.org/2001/XInclude">
  <xi:include href="extra.xml"/>
  <xi:include href="missing.xml"><xi:fallback><property><name>fb</name><value>yes</value></property></xi:fallback></xi:include>
  <property name="attr.key" value="attr-value"/>
</configuration>`)
	c := Empty()
	if err := c.AddFile(p); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"inc.key": "from-include", "fb": "yes", "attr.key": "attr-value"} {
		if v, _ := c.Get(k); v != want {
			t.Errorf("%s = %q", k, v)
		}
	}
}

func TestDocsListEveryDefault(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Defaults {
		row := "| `" + d.Key + "` | `" + d.Value + "` |"
		if d.Value == "" {
			row = "| `" + d.Key + "` | (empty) |"
		}
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/configuration.md lacks the row %s", row)
		}
	}
}

// A NodeManager reads mapred-site.xml and hdfs-site.xml over yarn-site.xml, as the Java
// NM's configuration ends up doing: the shuffle port set in mapred-site.xml wins.
func TestNodeManagerFilesOverYarnSite(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "yarn-site.xml", xmlProps("mapreduce.shuffle.port", "14000", "dfs.replication", "3"))
	writeFile(t, dir, "mapred-site.xml", xmlProps("mapreduce.shuffle.port", "14001"))
	writeFile(t, dir, "hdfs-site.xml", xmlProps("dfs.replication", "1"))
	rm, _, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	nm, _, err := LoadDir(dir, NodeManagerFiles()...)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := rm.Get("mapreduce.shuffle.port"); v != "14000" {
		t.Fatalf("without the NodeManager's files: %q", v)
	}
	if v, _ := nm.Get("mapreduce.shuffle.port"); v != "14001" || !strings.HasSuffix(nm.Source("mapreduce.shuffle.port"), "mapred-site.xml") {
		t.Fatalf("shuffle port %q from %s; want 14001 from mapred-site.xml", v, nm.Source("mapreduce.shuffle.port"))
	}
	if v, _ := nm.Get("dfs.replication"); v != "1" {
		t.Fatalf("dfs.replication %q; want hdfs-site.xml's 1", v)
	}
}

// Security modes Bobbin does not serve are refused, each naming its key; the served ones
// pass.
func TestCheckSecurityModes(t *testing.T) {
	c := New()
	if err := c.CheckSecurityModes(false); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	c.Set("hadoop.rpc.protection", "authentication,integrity,privacy")
	c.Set("hadoop.http.authentication.type", "simple")
	if err := c.CheckSecurityModes(false); err != nil {
		t.Fatalf("served modes: %v", err)
	}
	c.Set("hadoop.security.authentication", "kerberos")
	c.Set("hadoop.rpc.protection", "authentication,privacy")
	c.Set("hadoop.http.authentication.type", "kerberos")
	if err := c.CheckSecurityModes(true); err != nil {
		t.Errorf("a daemon serving Kerberos and SPNEGO: %v", err)
	}
	err := c.CheckSecurityModes(false)
	for _, want := range []string{`hadoop.security.authentication = "kerberos"`, `hadoop.http.authentication.type = "kerberos"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not name %s: %v", want, err)
		}
	}
	c = New()
	c.Set("hadoop.rpc.protection", "secret")
	if err := c.CheckSecurityModes(false); err == nil || !strings.Contains(err.Error(), "secret is not one of authentication, integrity, privacy") {
		t.Fatalf("unknown protection: %v", err)
	}
}

// A deprecated name sets the current one, as Hadoop's deprecation table does.
func TestDeprecatedNames(t *testing.T) {
	c := New()
	if err := c.AddXML("core-site.xml", []byte(`<configuration><property><name>fs.default.name</name><value>hdfs://nn:9000</value></property></configuration>`)); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("fs.defaultFS"); v != "hdfs://nn:9000" || c.Source("fs.defaultFS") != "core-site.xml" {
		t.Fatalf("fs.defaultFS = %q from %s", v, c.Source("fs.defaultFS"))
	}
}
