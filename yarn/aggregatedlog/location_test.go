package aggregatedlog

import (
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
)

// The TFile format's own directory and suffix (3.3+) win where set; a format other than
// TFile is refused by name.
func TestLocationKeys(t *testing.T) {
	c := conf.New()
	dirKey, dir, suffixKey, suffix, err := LocationKeys(c)
	if err != nil || dirKey != KeyDir || dir != "/tmp/logs" || suffixKey != KeySuffix || suffix != "logs" {
		t.Fatalf("defaults: %s=%s %s=%s %v", dirKey, dir, suffixKey, suffix, err)
	}
	c.Set(KeyTFileSuffix, "logs-tfile")
	c.Set(KeyTFileDir, "file:///var/app-logs")
	c.Set(KeyFileFormats, "TFile")
	dirKey, dir, suffixKey, suffix, err = LocationKeys(c)
	if err != nil || dirKey != KeyTFileDir || dir != "file:///var/app-logs" || suffixKey != KeyTFileSuffix || suffix != "logs-tfile" {
		t.Fatalf("TFile keys: %s=%s %s=%s %v", dirKey, dir, suffixKey, suffix, err)
	}
	c.Set(KeyFileFormats, "IFile,TFile")
	if _, _, _, _, err := LocationKeys(c); err == nil || !strings.Contains(err.Error(), KeyFileFormats) {
		t.Fatalf("IFile: %v, want a refusal naming %s", err, KeyFileFormats)
	}
}
