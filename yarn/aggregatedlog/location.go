package aggregatedlog

import (
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
)

// Where aggregated logs go, as the keys name it. Hadoop 3.3+ lets the TFile format have
// its own directory and suffix (yarn.log-aggregation.TFile.remote-app-log-dir and
// ...-suffix), which its `yarn logs` reads first: where they are set they win over the
// NodeManager's yarn.nodemanager.remote-app-log-dir(-suffix), for the writer (the NM), the
// retention (the RM) and the readers alike. The layout under them is 2.x-3.2's,
// <dir>/<user>/<suffix>/<app>: a 3.3+ client reads it as its "older" layout.
const (
	KeyDir          = "yarn.nodemanager.remote-app-log-dir"
	KeySuffix       = "yarn.nodemanager.remote-app-log-dir-suffix"
	KeyTFileDir     = "yarn.log-aggregation.TFile.remote-app-log-dir"
	KeyTFileSuffix  = "yarn.log-aggregation.TFile.remote-app-log-dir-suffix"
	KeyFileFormats  = "yarn.log-aggregation.file-formats"
	formatTFileName = "TFile"
)

// LocationKeys returns the keys that name the remote log directory and suffix, and their
// values: the TFile ones where set. It refuses a file format other than TFile, the only
// one Bobbin writes and reads.
func LocationKeys(c *conf.Configuration) (dirKey, dir, suffixKey, suffix string, err error) {
	formats, err := c.Trimmed(KeyFileFormats)
	if err != nil {
		return "", "", "", "", err
	}
	for _, f := range strings.Split(formats, ",") {
		if f = strings.TrimSpace(f); f != "" && !strings.EqualFold(f, formatTFileName) {
			return "", "", "", "", &conf.ValueError{Source: c.Source(KeyFileFormats), Key: KeyFileFormats, Value: formats,
				Reason: "Bobbin writes and reads aggregated logs in the TFile format only (IndexedFormat is not served)"}
		}
	}
	dirKey, suffixKey = KeyDir, KeySuffix
	if v, _ := c.Trimmed(KeyTFileDir); v != "" {
		dirKey = KeyTFileDir
	}
	if v, _ := c.Trimmed(KeyTFileSuffix); v != "" {
		suffixKey = KeyTFileSuffix
	}
	if dir, err = c.Trimmed(dirKey); err != nil {
		return "", "", "", "", err
	}
	if suffix, err = c.Trimmed(suffixKey); err != nil {
		return "", "", "", "", err
	}
	return dirKey, dir, suffixKey, suffix, nil
}
