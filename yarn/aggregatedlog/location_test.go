package aggregatedlog

import (
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/records"
)

// The flat layout is 2.x-3.2's; bucketed is 3.3+'s, with its "-tfile" suffix and
// four-digit buckets. The TFile format's own directory and suffix (3.3+) win where set; a
// format other than TFile and an unknown layout are refused by name.
func TestReadLocation(t *testing.T) {
	app := records.ApplicationID{ClusterTimestamp: 1700000000000, ID: 12345}
	c := conf.New()
	l, err := ReadLocation(c)
	if err != nil || l.DirKey != KeyDir || l.Dir != "/tmp/logs" || l.SuffixKey != KeySuffix || l.Suffix != "logs" || l.Bucketed {
		t.Fatalf("defaults: %+v %v", l, err)
	}
	if got, want := l.AppDir("/r", "alice", app), "/r/alice/logs/application_1700000000000_12345"; got != want {
		t.Errorf("flat: %s, want %s", got, want)
	}
	c.Set(KeyLayout, LayoutBucketed)
	if l, err = ReadLocation(c); err != nil || l.Suffix != "logs-tfile" || !l.Bucketed {
		t.Fatalf("bucketed: %+v %v", l, err)
	}
	// LogAggregationUtils.getRemoteAppLogDir: <root>/<user>/bucket-logs-tfile/<id % 10000>/<app>.
	wantDirs := []string{"/r/alice", "/r/alice/bucket-logs-tfile", "/r/alice/bucket-logs-tfile/2345", "/r/alice/bucket-logs-tfile/2345/application_1700000000000_12345"}
	if got := l.AppDirs("/r", "alice", app); strings.Join(got, " ") != strings.Join(wantDirs, " ") {
		t.Errorf("bucketed dirs: %v, want %v", got, wantDirs)
	}
	if b := Bucket(records.ApplicationID{ID: 7}); b != "0007" {
		t.Errorf("bucket of 7: %s", b)
	}
	c.Set(KeyTFileSuffix, "tf")
	c.Set(KeyTFileDir, "file:///var/app-logs")
	c.Set(KeyFileFormats, "TFile")
	if l, err = ReadLocation(c); err != nil || l.DirKey != KeyTFileDir || l.Dir != "file:///var/app-logs" || l.SuffixKey != KeyTFileSuffix || l.Suffix != "tf" {
		t.Fatalf("TFile keys: %+v %v", l, err)
	}
	if got, want := l.UserDir("/r", "bob"), "/r/bob/bucket-tf"; got != want {
		t.Errorf("TFile suffix, bucketed: %s, want %s", got, want)
	}
	c.Set(KeyLayout, LayoutFlat)
	if l, err = ReadLocation(c); err != nil || l.UserDir("/r", "bob") != "/r/bob/tf" {
		t.Fatalf("TFile suffix, flat: %+v %v", l, err)
	}
	c.Set(KeyLayout, "indexed")
	if _, err := ReadLocation(c); err == nil || !strings.Contains(err.Error(), KeyLayout) || !strings.Contains(err.Error(), "indexed") {
		t.Fatalf("layout indexed: %v, want a refusal naming %s", err, KeyLayout)
	}
	c.Set(KeyLayout, LayoutFlat)
	for _, bad := range []string{"..", ".", "a/b"} {
		c.Set(KeyTFileSuffix, bad)
		if _, err := ReadLocation(c); err == nil || !strings.Contains(err.Error(), KeyTFileSuffix) {
			t.Errorf("suffix %q: %v, want a refusal naming %s", bad, err, KeyTFileSuffix)
		}
	}
	c.Set(KeyTFileSuffix, "tf")
	c.Set(KeyLayout, LayoutFlat)
	c.Set(KeyFileFormats, "IFile,TFile")
	if _, err := ReadLocation(c); err == nil || !strings.Contains(err.Error(), KeyFileFormats) {
		t.Fatalf("IFile: %v, want a refusal naming %s", err, KeyFileFormats)
	}
}

// Retention looks in both layouts: 2.x's logs, 3.3+'s buckets and its older logs-tfile.
func TestSweepLocations(t *testing.T) {
	c := conf.New()
	ls, err := SweepLocations(c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.UserDir("/r", "u"))
	}
	if want := "/r/u/logs /r/u/bucket-logs-tfile /r/u/logs-tfile"; strings.Join(got, " ") != want {
		t.Errorf("sweep dirs %v, want %s", got, want)
	}
	c.Set(KeyTFileSuffix, "tf")
	ls, _ = SweepLocations(c)
	if len(ls) != 2 || ls[0].UserDir("/r", "u") != "/r/u/tf" || ls[1].UserDir("/r", "u") != "/r/u/bucket-tf" {
		t.Errorf("with a TFile suffix: %+v", ls)
	}
}
