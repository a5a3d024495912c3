// Package labelstore keeps the cluster's node labels where, and as, the Java RM keeps
// them: the FileSystemNodeLabelsStore under yarn.node-labels.fs-store.root-dir (file://
// or hdfs://), whatever the RM's state store. Its two files are
//   - nodelabel.mirror: a delimited AddToClusterNodeLabelsRequestProto (every label, with
//     its exclusivity) and a delimited ReplaceLabelsOnNodeRequestProto (the labels on
//     nodes);
//   - nodelabel.editlog: changes since the mirror, each a big-endian int32 (0 add labels,
//     1 labels on nodes, 2 remove labels) and its delimited request.
//
// Bobbin reads both, so labels an administrator gave a Java RM are there when Bobbin's
// starts on the same directory, and labels survive a restart without RM recovery, as on
// the Java RM. It writes every change as a new mirror (written aside, then renamed) and an
// empty edit log, which a Java RM reads back the same way.
package labelstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
)

// KeyRootDir is where the Java RM keeps node labels.
const KeyRootDir = "yarn.node-labels.fs-store.root-dir"

const (
	mirrorName  = "nodelabel.mirror"
	oldName     = "nodelabel.mirror.old"
	writingName = "nodelabel.mirror.writing"
	editlogName = "nodelabel.editlog"
)

// The edit log's record types (FileSystemNodeLabelsStore.SerializedLogType, by ordinal).
const (
	opAddLabels    = 0
	opNodeToLabels = 1
	opRemoveLabels = 2
)

// maxRecord bounds one record's length: a label request is small; a damaged file must
// not make the RM allocate gigabytes.
const maxRecord = 64 << 20

// Label is a cluster node label and its exclusivity.
type Label struct {
	Name      string
	Exclusive bool
}

// State is what the store holds: the cluster's labels and the labels on node ids
// ("host:port"; port 0: every NodeManager of the host).
type State struct {
	Labels []Label
	OnNode map[string][]string
}

// Store is a node-label store directory.
type Store struct {
	fs  remotefs.FS
	dir string
}

// Open opens (creating it) the directory yarn.node-labels.fs-store.root-dir names, by
// default file:///tmp/hadoop-yarn-<user>/node-labels as in the Java RM.
func Open(c *conf.Configuration, user string) (*Store, error) {
	root, err := c.Trimmed(KeyRootDir)
	if err != nil {
		return nil, err
	}
	if root == "" {
		root = "file:///tmp/hadoop-yarn-" + user + "/node-labels"
	}
	fsURI, dir, err := remotefs.Resolve(c, root)
	if err != nil {
		return nil, &conf.ValueError{Source: c.Source(KeyRootDir), Key: KeyRootDir, Value: root, Reason: err.Error()}
	}
	f, err := remotefs.Open(c, fsURI, user)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", KeyRootDir, root, err)
	}
	if err := f.MkdirAll(dir, 0o755); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", KeyRootDir, root, err)
	}
	return &Store{fs: f, dir: dir}, nil
}

// Location names the directory, for messages.
func (s *Store) Location() string { return s.fs.URI(s.dir) }

// Close releases the file system.
func (s *Store) Close() error { return s.fs.Close() }

// Load reads the mirror (or the one a crash left renamed aside) and replays the edit log.
func (s *Store) Load() (State, error) {
	st := newState()
	mirror, err := s.openFirst(mirrorName, oldName)
	if err != nil {
		return State{}, err
	}
	if mirror != nil {
		err := st.readMirror(bufio.NewReader(mirror))
		mirror.Close()
		if err != nil {
			return State{}, fmt.Errorf("node-label store %s: %w", s.fs.URI(path.Join(s.dir, mirrorName)), err)
		}
	}
	log, err := s.openFirst(editlogName)
	if err != nil {
		return State{}, err
	}
	if log != nil {
		err := st.replay(bufio.NewReader(log))
		log.Close()
		if err != nil {
			return State{}, fmt.Errorf("node-label store %s: %w", s.fs.URI(path.Join(s.dir, editlogName)), err)
		}
	}
	return st.state(), nil
}

// openFirst opens the first of the named files that exists (nil when none does).
func (s *Store) openFirst(names ...string) (io.ReadCloser, error) {
	for _, n := range names {
		r, err := s.fs.Open(path.Join(s.dir, n))
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("node-label store %s: %w", s.fs.URI(path.Join(s.dir, n)), err)
		}
	}
	return nil, nil
}

// Save writes st as the new mirror and empties the edit log: the mirror is written aside
// and renamed into place, so a crash leaves the old state or the new one.
func (s *Store) Save(st State) error {
	var b []byte
	b = appendDelimited(b, addRequest(st.Labels))
	b = appendDelimited(b, replaceRequest(st.OnNode))
	writing, mirror, old := path.Join(s.dir, writingName), path.Join(s.dir, mirrorName), path.Join(s.dir, oldName)
	if err := s.write(writing, b); err != nil {
		return err
	}
	if _, err := s.fs.Stat(mirror); err == nil {
		s.fs.RemoveAll(old)
		if err := s.fs.Rename(mirror, old); err != nil {
			return fmt.Errorf("node-label store %s: %w", s.Location(), err)
		}
	}
	if err := s.fs.Rename(writing, mirror); err != nil {
		return fmt.Errorf("node-label store %s: %w", s.Location(), err)
	}
	s.fs.RemoveAll(old)
	return s.write(path.Join(s.dir, editlogName), nil)
}

func (s *Store) write(p string, b []byte) error {
	w, err := s.fs.Create(p)
	if err != nil {
		return fmt.Errorf("node-label store %s: %w", s.fs.URI(p), err)
	}
	_, err = w.Write(b)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("node-label store %s: %w", s.fs.URI(p), err)
	}
	return nil
}

// building is a State being replayed.
type building struct {
	exclusive map[string]bool
	onNode    map[string][]string
}

func newState() *building {
	return &building{exclusive: map[string]bool{}, onNode: map[string][]string{}}
}

func (b *building) state() State {
	st := State{OnNode: b.onNode}
	for n, e := range b.exclusive {
		st.Labels = append(st.Labels, Label{Name: n, Exclusive: e})
	}
	sort.Slice(st.Labels, func(i, j int) bool { return st.Labels[i].Name < st.Labels[j].Name })
	return st
}

func (b *building) readMirror(r *bufio.Reader) error {
	var add yarnpb.AddToClusterNodeLabelsRequestProto
	if err := readDelimited(r, &add); err != nil {
		if err == io.EOF {
			return nil // an empty mirror
		}
		return err
	}
	b.add(&add)
	var repl yarnpb.ReplaceLabelsOnNodeRequestProto
	if err := readDelimited(r, &repl); err != nil && err != io.EOF {
		return err
	}
	b.replace(&repl)
	return nil
}

func (b *building) replay(r *bufio.Reader) error {
	for n := 1; ; n++ {
		var op [4]byte
		if _, err := io.ReadFull(r, op[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("edit %d: %w", n, err)
		}
		var err error
		switch t := binary.BigEndian.Uint32(op[:]); t {
		case opAddLabels:
			var m yarnpb.AddToClusterNodeLabelsRequestProto
			if err = readDelimited(r, &m); err == nil {
				b.add(&m)
			}
		case opNodeToLabels:
			var m yarnpb.ReplaceLabelsOnNodeRequestProto
			if err = readDelimited(r, &m); err == nil {
				b.replace(&m)
			}
		case opRemoveLabels:
			var m yarnpb.RemoveFromClusterNodeLabelsRequestProto
			if err = readDelimited(r, &m); err == nil {
				b.remove(m.GetNodeLabels())
			}
		default:
			return fmt.Errorf("edit %d: unknown record type %d", n, t)
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("edit %d: %w", n, err)
		}
	}
}

// add is AddToClusterNodeLabelsRequestPBImpl.getNodeLabels: the NodeLabelProtos, or the
// names alone (exclusive) when there are none.
func (b *building) add(m *yarnpb.AddToClusterNodeLabelsRequestProto) {
	for _, l := range m.GetNodeLabels() {
		b.exclusive[l.GetName()] = l.GetIsExclusive()
	}
	if len(m.GetNodeLabels()) == 0 {
		for _, n := range m.GetDeprecatedNodeLabels() {
			b.exclusive[n] = true
		}
	}
}

func (b *building) replace(m *yarnpb.ReplaceLabelsOnNodeRequestProto) {
	for _, e := range m.GetNodeToLabels() {
		key := fmt.Sprintf("%s:%d", e.GetNodeId().GetHost(), e.GetNodeId().GetPort())
		if len(e.GetNodeLabels()) == 0 {
			delete(b.onNode, key)
			continue
		}
		b.onNode[key] = append([]string(nil), e.GetNodeLabels()...)
	}
}

func (b *building) remove(labels []string) {
	for _, l := range labels {
		delete(b.exclusive, l)
		for node, ls := range b.onNode {
			kept := ls[:0]
			for _, x := range ls {
				if x != l {
					kept = append(kept, x)
				}
			}
			if len(kept) == 0 {
				delete(b.onNode, node)
			} else {
				b.onNode[node] = kept
			}
		}
	}
}

// addRequest is the mirror's first record, both fields filled as the Java RM fills them.
func addRequest(labels []Label) *yarnpb.AddToClusterNodeLabelsRequestProto {
	m := &yarnpb.AddToClusterNodeLabelsRequestProto{}
	for _, l := range labels {
		m.DeprecatedNodeLabels = append(m.DeprecatedNodeLabels, l.Name)
		m.NodeLabels = append(m.NodeLabels, &yarnpb.NodeLabelProto{Name: proto.String(l.Name), IsExclusive: proto.Bool(l.Exclusive)})
	}
	return m
}

func replaceRequest(onNode map[string][]string) *yarnpb.ReplaceLabelsOnNodeRequestProto {
	keys := make([]string, 0, len(onNode))
	for k := range onNode {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	m := &yarnpb.ReplaceLabelsOnNodeRequestProto{}
	for _, k := range keys {
		m.NodeToLabels = append(m.NodeToLabels, &yarnpb.NodeIdToLabelsProto{NodeId: records.NodeIDFromKey(k), NodeLabels: append([]string(nil), onNode[k]...)})
	}
	return m
}

// appendDelimited is protobuf's writeDelimitedTo: a varint length, then the message.
func appendDelimited(b []byte, m proto.Message) []byte {
	body, _ := proto.Marshal(m) // these messages always marshal
	b = protowire.AppendVarint(b, uint64(len(body)))
	return append(b, body...)
}

// readDelimited is parseDelimitedFrom: io.EOF when the stream ends before a record.
func readDelimited(r *bufio.Reader, m proto.Message) error {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return io.ErrUnexpectedEOF
	}
	if n > maxRecord {
		return fmt.Errorf("record of %d bytes is past the %d allowed", n, maxRecord)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return io.ErrUnexpectedEOF
	}
	return proto.Unmarshal(body, m)
}
