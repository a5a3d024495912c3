package aggregatedlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Dir is what finding a container's logs needs of the remote file system (remotefs.FS).
type Dir interface {
	ReadDir(p string) ([]os.FileInfo, error)
	Open(p string) (io.ReadCloser, error)
}

// MaxFileBytes bounds what a daemon reads whole (the node's files of an application
// together) to show a container's logs on a page.
const MaxFileBytes = 512 << 20

// Found is a container's logs as aggregated: its log files (one per type, the parts of
// rolled uploads joined in upload order), the application's owner and ACLs, and the
// files they came from.
type Found struct {
	Logs  []Log
	Owner string
	ACLs  []ACL
	Files []string
}

// ErrNoLogs says the application's directory holds no logs of the container.
var ErrNoLogs = errors.New("no aggregated logs of the container")

// ContainerLogs reads a container's logs from an application's aggregated directory:
// the files of node (NodeFileName; a rolled upload is <node>_<time>), or of every node
// when node is empty. Files being written are skipped.
func ContainerLogs(d Dir, appDir, container, node string) (*Found, error) {
	entries, err := d.ReadDir(appDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist (not aggregated yet, or expired)", ErrNoLogs, appDir)
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool {
		if !entries[i].ModTime().Equal(entries[j].ModTime()) {
			return entries[i].ModTime().Before(entries[j].ModTime())
		}
		return entries[i].Name() < entries[j].Name()
	})
	out := &Found{}
	byType := map[string]int{}
	var total int64
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, TmpSuffix) || node != "" && name != node && !strings.HasPrefix(name, node+"_") {
			continue
		}
		if total += e.Size(); total > MaxFileBytes {
			return nil, fmt.Errorf("the node's aggregated files of the application hold over %d bytes, more than a page reads: use yarn logs", MaxFileBytes)
		}
		b, err := readAll(d, path.Join(appDir, name))
		if err != nil {
			return nil, err
		}
		f, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(appDir, name), err)
		}
		for _, c := range f.Containers {
			if c.ID != container {
				continue
			}
			out.Owner, out.ACLs = f.Owner, f.ACLs
			out.Files = append(out.Files, name)
			for _, l := range c.Logs {
				if i, ok := byType[l.Type]; ok {
					out.Logs[i].Data = append(out.Logs[i].Data, l.Data...)
					continue
				}
				byType[l.Type] = len(out.Logs)
				out.Logs = append(out.Logs, Log{Type: l.Type, Data: l.Data})
			}
		}
	}
	if len(out.Files) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoLogs, appDir)
	}
	return out, nil
}

func readAll(d Dir, p string) ([]byte, error) {
	r, err := d.Open(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
}
