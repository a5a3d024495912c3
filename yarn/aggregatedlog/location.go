package aggregatedlog

import (
	"fmt"
	"path"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
)

// Where aggregated logs go, as the keys name it. Two layouts are in use by Hadoop's own
// NodeManagers, and a Hadoop client reads only its own version's:
//
//   - flat (2.x-3.2): <dir>/<user>/<suffix>/<app>, the suffix
//     yarn.nodemanager.remote-app-log-dir-suffix ("logs");
//   - bucketed (3.3+, YARN-10184): <dir>/<user>/bucket-<suffix>/<app id % 10000, %04d>/<app>,
//     the suffix yarn.log-aggregation.TFile.remote-app-log-dir-suffix or, unset, the
//     NodeManager's with "-tfile" appended ("logs-tfile"). A 3.3+ reader falls back to
//     <dir>/<user>/<suffix>/<app> with that same suffix, never to 2.x's "logs".
//
// Bobbin writes the flat layout unless bobbin.log-aggregation.layout says bucketed, so a
// 2.x-3.2 cluster's `yarn logs` and JobHistory read it; a 3.3+ cluster sets bucketed and
// its clients read Bobbin's NodeManagers' logs where they read Apache 3.3+'s. The TFile
// directory and suffix keys (3.3+) win over the NodeManager's where set, in both layouts,
// for the writer (the NM) and the retention (the RM) alike.
const (
	KeyDir          = "yarn.nodemanager.remote-app-log-dir"
	KeySuffix       = "yarn.nodemanager.remote-app-log-dir-suffix"
	KeyTFileDir     = "yarn.log-aggregation.TFile.remote-app-log-dir"
	KeyTFileSuffix  = "yarn.log-aggregation.TFile.remote-app-log-dir-suffix"
	KeyFileFormats  = "yarn.log-aggregation.file-formats"
	KeyLayout       = "bobbin.log-aggregation.layout"
	formatTFileName = "TFile"

	LayoutFlat     = "flat"
	LayoutBucketed = "bucketed"

	bucketPrefix = "bucket-" // LogAggregationUtils.BUCKET_SUFFIX
	buckets      = 10000
)

// Location is where one layout puts an application's aggregated logs.
type Location struct {
	DirKey, Dir       string // the key that named the root, and its value (unresolved)
	SuffixKey, Suffix string // the key that named the suffix, and the suffix in force
	Bucketed          bool
}

// ReadLocation reads the layout and its directory and suffix. It refuses a file format
// other than TFile, the only one Bobbin writes and reads, and a layout it does not know.
func ReadLocation(c *conf.Configuration) (Location, error) {
	formats, err := c.Trimmed(KeyFileFormats)
	if err != nil {
		return Location{}, err
	}
	for _, f := range strings.Split(formats, ",") {
		if f = strings.TrimSpace(f); f != "" && !strings.EqualFold(f, formatTFileName) {
			return Location{}, &conf.ValueError{Source: c.Source(KeyFileFormats), Key: KeyFileFormats, Value: formats,
				Reason: "Bobbin writes and reads aggregated logs in the TFile format only (IndexedFormat is not served)"}
		}
	}
	layout, err := c.Trimmed(KeyLayout)
	if err != nil {
		return Location{}, err
	}
	switch layout {
	case LayoutFlat:
		return readLocation(c, false)
	case LayoutBucketed:
		return readLocation(c, true)
	}
	return Location{}, &conf.ValueError{Source: c.Source(KeyLayout), Key: KeyLayout, Value: layout,
		Reason: fmt.Sprintf("must be %s (Hadoop 2.x-3.2's <dir>/<user>/<suffix>/<app>) or %s (Hadoop 3.3+'s <dir>/<user>/bucket-<suffix>/<bucket>/<app>)", LayoutFlat, LayoutBucketed)}
}

func readLocation(c *conf.Configuration, bucketed bool) (Location, error) {
	l := Location{DirKey: KeyDir, SuffixKey: KeySuffix, Bucketed: bucketed}
	if v, _ := c.Trimmed(KeyTFileDir); v != "" {
		l.DirKey = KeyTFileDir
	}
	var err error
	if l.Dir, err = c.Trimmed(l.DirKey); err != nil {
		return Location{}, err
	}
	if v, _ := c.Trimmed(KeyTFileSuffix); v != "" {
		l.SuffixKey, l.Suffix = KeyTFileSuffix, v
	} else if l.Suffix, err = c.Trimmed(KeySuffix); err != nil {
		return Location{}, err
	}
	// One plain path component: the writer and the retention's sweep stay under the
	// user's directory.
	if l.Suffix == "" || l.Suffix == "." || l.Suffix == ".." || strings.Contains(l.Suffix, "/") {
		return Location{}, &conf.ValueError{Source: c.Source(l.SuffixKey), Key: l.SuffixKey, Value: l.Suffix, Reason: "must be one path component"}
	}
	if bucketed && l.SuffixKey == KeySuffix {
		// LogAggregationFileController.extractRemoteRootLogDirSuffix: the NodeManager's
		// suffix with the controller's name, lower case.
		l.Suffix += "-" + strings.ToLower(formatTFileName)
	}
	return l, nil
}

// UserDir is the directory under the user's that holds the applications (flat) or their
// buckets (bucketed).
func (l Location) UserDir(root, user string) string {
	if l.Bucketed {
		return path.Join(root, user, bucketPrefix+l.Suffix)
	}
	return path.Join(root, user, l.Suffix)
}

// AppDirs are the directories from the user's down to the application's, each one
// created (0770) when missing; the last is the application's.
func (l Location) AppDirs(root, user string, app records.ApplicationID) []string {
	dirs := []string{path.Join(root, user), l.UserDir(root, user)}
	if l.Bucketed {
		dirs = append(dirs, path.Join(dirs[1], Bucket(app)))
	}
	return append(dirs, path.Join(dirs[len(dirs)-1], app.String()))
}

// AppDir is the application's directory.
func (l Location) AppDir(root, user string, app records.ApplicationID) string {
	d := l.AppDirs(root, user, app)
	return d[len(d)-1]
}

// Bucket is LogAggregationUtils.getRemoteBucketDir's: the application's sequence number
// modulo 10000, four digits.
func Bucket(app records.ApplicationID) string {
	return fmt.Sprintf("%04d", app.ID%buckets)
}

// SweepLocations are every place the keys could have put an application's logs, whatever
// the layout in force: retention deletes expired logs in all of them, so a switch of
// layout leaves none behind. The flat layout with each layout's suffix, and the bucketed.
func SweepLocations(c *conf.Configuration) ([]Location, error) {
	if _, err := ReadLocation(c); err != nil {
		return nil, err
	}
	flat, err := readLocation(c, false)
	if err != nil {
		return nil, err
	}
	bucketed, err := readLocation(c, true)
	if err != nil {
		return nil, err
	}
	olderBucketed := bucketed
	olderBucketed.Bucketed = false // a 3.3+ reader's "older" path
	out := []Location{flat, bucketed}
	if olderBucketed.Suffix != flat.Suffix {
		out = append(out, olderBucketed)
	}
	return out, nil
}

// Remote is where a cluster's aggregated logs are, for a daemon that reads or sweeps
// them whatever the layout: every location SweepLocations names, and the file system and
// absolute root they share (remotefs.Resolve of the directory key's value).
func Remote(c *conf.Configuration) (locations []Location, fsURI, root string, err error) {
	if locations, err = SweepLocations(c); err != nil {
		return nil, "", "", err
	}
	l := locations[0] // all share the directory
	if fsURI, root, err = remotefs.Resolve(c, l.Dir); err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", l.DirKey, err)
	}
	return locations, fsURI, root, nil
}
