package container

import "bytes"

// Mark is how a container's processes are known on the host, whatever session or
// process group they moved to: the container's id and the owner mark of the NodeManager
// that runs it, both put in their environment (MarkerEnv, OwnerEnv). Matching both keeps
// one NodeManager from counting or killing another's processes that carry the same
// container id: two clusters on one host (tests beside each other among them) each have
// a container_…_01_000001.
type Mark struct {
	ID    string
	Owner string // "": the id alone marks them
}

// Mark is the mark of the container spec describes.
func (s Spec) Mark() Mark { return Mark{ID: s.ID, Owner: s.Owner} }

// env is the environment entries that carry the mark.
func (m Mark) env() []string {
	e := []string{MarkerEnv + "=" + m.ID}
	if m.Owner != "" {
		e = append(e, OwnerEnv+"="+m.Owner)
	}
	return e
}

// carriedBy says a process's environment (/proc/<pid>/environ: NUL-separated) carries
// the mark.
func (m Mark) carriedBy(environ []byte) bool {
	marker := []byte(MarkerEnv + "=" + m.ID + "\x00")
	if !bytes.Contains(environ, marker) && !bytes.HasSuffix(environ, marker[:len(marker)-1]) {
		return false // the cheap test first: most processes carry no marker
	}
	return m.Owner == "" || hasEnv(environ, OwnerEnv, m.Owner)
}
