package statestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// JavaFS is FileSystemRMStateStore on local disk, in the Java RM's layout and records, so
// that either RM takes over from the other on the same yarn.resourcemanager.fs.state-store.uri
// (docs/migration.md):
//
//	FSRMStateRoot/RMVersionNode                    VersionProto (1.x)
//	FSRMStateRoot/EpochNode                        EpochProto: the epoch the next RM runs with
//	FSRMStateRoot/RMAppRoot/<app>/<app>            ApplicationStateDataProto
//	FSRMStateRoot/RMAppRoot/<app>/<attempt>        ApplicationAttemptStateDataProto
//	FSRMStateRoot/AMRMTokenSecretManagerRoot/AMRMTokenSecretManagerNode
//	FSRMStateRoot/RMDTSecretManagerRoot/DelegationKey_<id>, RMDelegationToken_<seq>,
//	                                    RMDTSequenceNumber_<seq>
//	FSRMStateRoot/BobbinRoot/...                   Bobbin's own (below); a Java RM reads past it
//
// each file with Hadoop's .crc beside it (hadoopfile.go). BobbinRoot holds what only
// Bobbin keeps — the container and NMToken master keys, the NodeManagers a restart waits
// for, the node labels — and which RM they are current for (bobbinroot.go): a Java RM
// that ran since makes the keys and nodes stale, and they are left out, as a Java RM would
// start without them.
type JavaFS struct {
	uri  string // as configured, for Location
	root string // .../FSRMStateRoot

	mu sync.Mutex // guards the maps and orders the writes of one application
	// written is what was last written (or read) of each application's files, by
	// application and file name: an unchanged record is not written again.
	written map[string]map[string][]byte
	version map[string]uint64 // the newest AppRecord.Version written, by application
	epoch   int64             // the epoch this RM runs with (NextEpoch)
	seqFile string            // the RMDTSequenceNumber_ file, once known
	stale   map[string]bool   // BobbinRoot's records that are not current (bobbinroot.go)
}

// Names in the Java RM's layout.
const (
	javaFSRoot       = "FSRMStateRoot"
	javaVersionNode  = "RMVersionNode"
	javaEpochNode    = "EpochNode"
	javaAppRoot      = "RMAppRoot"
	javaAMRMRoot     = "AMRMTokenSecretManagerRoot"
	javaAMRMNode     = "AMRMTokenSecretManagerNode"
	javaDTRoot       = "RMDTSecretManagerRoot"
	javaDTKeyPrefix  = "DelegationKey_"
	javaDTTokPrefix  = "RMDelegationToken_"
	javaDTSeqPrefix  = "RMDTSequenceNumber_"
	bobbinRoot       = "BobbinRoot"
	javaStoreMajor   = 1
	javaFSStoreMinor = 2 // Hadoop 2.7.3's FileSystemRMStateStore
)

// OpenJavaFS opens (creating it if need be) the store under dir, the path of
// yarn.resourcemanager.fs.state-store.uri. A store whose version's major is not 1 (a newer
// Java RM's) is refused, naming it.
func OpenJavaFS(uri, dir string) (*JavaFS, error) {
	s := &JavaFS{uri: uri, root: filepath.Join(dir, javaFSRoot), written: map[string]map[string][]byte{}, version: map[string]uint64{}}
	for _, d := range []string{javaAppRoot, javaAMRMRoot, javaDTRoot, bobbinRoot} {
		if err := os.MkdirAll(filepath.Join(s.root, d), 0o755); err != nil {
			return nil, fmt.Errorf("state store %s: %w", s.Location(), err)
		}
	}
	vpath := filepath.Join(s.root, javaVersionNode)
	data, err := readHadoopFile(vpath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := writeHadoopFile(vpath, versionBytes(javaFSStoreMinor)); err != nil {
			return nil, fmt.Errorf("state store %s: writing its version: %w", s.Location(), err)
		}
	case err != nil:
		return nil, fmt.Errorf("state store %s: %w", s.Location(), err)
	default:
		if err := checkVersion(s.Location(), vpath, data); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Location names the store as configured.
func (s *JavaFS) Location() string { return s.uri + "/" + javaFSRoot }

// Close has nothing to release: every write is synced when it returns.
func (s *JavaFS) Close() error { return nil }

// Load reads the whole store, finishing the writes a stopped RM left half done first.
func (s *JavaFS) Load() (*State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &State{Keys: map[string]*KeysRecord{}, Delegation: map[string]*DelegationRecord{}}
	fail := func(err error) (*State, error) { return nil, fmt.Errorf("state store %s: %w", s.Location(), err) }
	epoch, err := s.readEpoch()
	if err != nil {
		return fail(err)
	}
	st.Epoch = epoch
	// What this RM writes to BobbinRoot before it takes its epoch (its keys) is stamped
	// with the epoch it will take (for people reading the store; "run" decides).
	s.epoch = epoch

	appRoot := filepath.Join(s.root, javaAppRoot)
	dirs, err := os.ReadDir(appRoot)
	if err != nil {
		return fail(err)
	}
	// Read 8 applications at a time: the files' reads and the records' decoding overlap.
	type loaded struct {
		rec   *AppRecord
		files map[string][]byte
		err   error
	}
	var names []string
	for _, d := range dirs {
		if d.IsDir() && strings.HasPrefix(d.Name(), "application_") {
			names = append(names, d.Name())
		}
	}
	results := make([]loaded, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i].rec, results[i].files, results[i].err = loadJavaFSApp(filepath.Join(appRoot, name))
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.err != nil {
			return fail(r.err)
		}
		if r.rec != nil {
			st.Apps = append(st.Apps, r.rec)
			s.written[r.rec.ID], s.version[r.rec.ID] = r.files, r.rec.Version
		}
	}
	sort.Slice(st.Apps, func(i, j int) bool { return st.Apps[i].ID < st.Apps[j].ID })

	if err := finishHadoopWrites(filepath.Join(s.root, javaAMRMRoot)); err != nil {
		return fail(err)
	}
	amrm, err := readHadoopFile(filepath.Join(s.root, javaAMRMRoot, javaAMRMNode))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fail(err)
	default:
		ring, err := readAMRMState(filepath.Join(s.root, javaAMRMRoot, javaAMRMNode), amrm)
		if err != nil {
			return fail(err)
		}
		if ring != nil {
			st.Keys[KeysAMRM] = ring
		}
	}
	if err := s.loadDelegation(st); err != nil {
		return fail(err)
	}
	if err := s.loadBobbin(st, epoch); err != nil {
		return fail(err)
	}
	return st, nil
}

// loadJavaFSApp reads one application's directory and the files it holds (nil for a
// directory without the application's record: an attempt's record without one is an
// error, as the Java RM fails on it).
func loadJavaFSApp(dir string) (*AppRecord, map[string][]byte, error) {
	if err := finishHadoopWrites(dir); err != nil {
		return nil, nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	app := filepath.Base(dir)
	var appData []byte
	attempts := map[string][]byte{}
	files := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		data, err := readHadoopFile(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		switch {
		case name == app:
			appData = data
		case strings.HasPrefix(name, "appattempt_"):
			attempts[name] = data
		default:
			continue // the Java RM logs and skips an unknown child too
		}
		files[name] = data
	}
	if appData == nil {
		if len(attempts) > 0 {
			return nil, nil, fmt.Errorf("%s: attempt records without the application's record %s", dir, app)
		}
		return nil, nil, nil
	}
	rec, err := decodeJavaApp(filepath.Join(dir, app), appData, attempts)
	if err != nil {
		return nil, nil, err
	}
	if rec.ID != app {
		return nil, nil, fmt.Errorf("%s: the record is of application %s", filepath.Join(dir, app), rec.ID)
	}
	return rec, files, nil
}

// readEpoch is the epoch the store says the next RM runs with (0 for a new store).
func (s *JavaFS) readEpoch() (int64, error) {
	p := filepath.Join(s.root, javaEpochNode)
	if err := finishHadoopWrites(s.root); err != nil {
		return 0, err
	}
	data, err := readHadoopFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return readEpochRecord(p, data)
}

// NextEpoch is the Java RM's getAndIncrementEpoch: the stored epoch is this RM's, and the
// one after it is stored for the next.
func (s *JavaFS) NextEpoch() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.readEpoch()
	if err != nil {
		return 0, fmt.Errorf("state store %s: %w", s.Location(), err)
	}
	if _, err := s.storeEpochLocked(e + 1); err != nil {
		return 0, err
	}
	s.epoch = e
	if err := s.takeBobbinRootLocked(e); err != nil {
		return 0, err
	}
	return e, nil
}

// continueEpochs makes the store go on from an earlier store whose last RM took epoch
// next-1 (a migration): the next RM takes next, and BobbinRoot is that last RM's.
func (s *JavaFS) continueEpochs(next int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch = next - 1
	if _, err := s.storeEpochLocked(next); err != nil {
		return err
	}
	return s.takeBobbinRootLocked(next - 1)
}

// storeEpoch stores the epoch the next RM takes.
func (s *JavaFS) storeEpoch(next int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeEpochLocked(next)
}

func (s *JavaFS) storeEpochLocked(next int64) (int64, error) {
	if err := writeHadoopFile(filepath.Join(s.root, javaEpochNode), epochBytes(next)); err != nil {
		return 0, fmt.Errorf("state store %s: storing the epoch: %w", s.Location(), err)
	}
	return next, nil
}

// PutApp writes an application's records that changed, unless a newer version of it was
// written.
func (s *JavaFS) PutApp(rec *AppRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putAppLocked(rec)
}

// PutApps is PutApp for each.
func (s *JavaFS) PutApps(recs []*AppRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rec := range recs {
		if err := s.putAppLocked(rec); err != nil {
			return err
		}
	}
	return nil
}

func (s *JavaFS) putAppLocked(rec *AppRecord) error {
	if v, ok := s.version[rec.ID]; ok && rec.Version != 0 && rec.Version < v {
		return nil // a newer version is stored
	}
	appData, attempts, err := encodeJavaApp(rec)
	if err != nil {
		return fmt.Errorf("state store %s: %w", s.Location(), err)
	}
	dir := filepath.Join(s.root, javaAppRoot, rec.ID)
	files := s.written[rec.ID]
	if files == nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("state store %s: application %s: %w", s.Location(), rec.ID, err)
		}
		// The new directory's entry is synced too: an acknowledged submission survives a
		// power cut.
		if err := syncDir(filepath.Join(s.root, javaAppRoot)); err != nil {
			return fmt.Errorf("state store %s: application %s: %w", s.Location(), rec.ID, err)
		}
		files = map[string][]byte{}
		s.written[rec.ID] = files
	}
	// The application's record first: an attempt's is never without it.
	put := func(name string, data []byte) error {
		if old, ok := files[name]; ok && string(old) == string(data) {
			return nil
		}
		if err := writeHadoopFile(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("state store %s: application %s: %w", s.Location(), rec.ID, err)
		}
		files[name] = data
		return nil
	}
	if err := put(rec.ID, appData); err != nil {
		return err
	}
	id := strings.TrimPrefix(rec.ID, "application_")
	for _, a := range attempts {
		if err := put(fmt.Sprintf("appattempt_%s_%06d", id, a.attempt), a.data); err != nil {
			return err
		}
	}
	s.version[rec.ID] = rec.Version
	return nil
}

// RemoveApps removes applications' directories.
func (s *JavaFS) RemoveApps(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if err := removeAppDir(filepath.Join(s.root, javaAppRoot, id), id); err != nil {
			return fmt.Errorf("state store %s: removing %s: %w", s.Location(), id, err)
		}
		delete(s.written, id)
		delete(s.version, id)
	}
	return syncDir(filepath.Join(s.root, javaAppRoot))
}

// removeAppDir removes an application's directory so that a crash at any point leaves
// no attempt's record without the application's (which stops either RM at its next start):
// the attempts' files first, then the application's, then the directory.
func removeAppDir(dir, id string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != id && e.Name() != "."+id+".crc" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// KeysAMRM is the master-key ring of AMRMTokens, the one ring the Java RM stores.
const KeysAMRM = "amrm"

// PutKeys stores a master-key ring: the AMRMToken ring where the Java RM keeps it (its
// current and next keys), the others in BobbinRoot.
func (s *JavaFS) PutKeys(name string, keys *KeysRecord) error {
	if name != KeysAMRM {
		return s.putBobbin("keys-"+name, keys)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := writeHadoopFile(filepath.Join(s.root, javaAMRMRoot, javaAMRMNode), amrmStateBytes(keys)); err != nil {
		return fmt.Errorf("state store %s: AMRMToken keys: %w", s.Location(), err)
	}
	return nil
}

// PutNode stores a running NodeManager in BobbinRoot.
func (s *JavaFS) PutNode(rec *NodeRecord) error { return s.putBobbin("node-"+rec.ID, rec) }

// RemoveNode forgets one.
func (s *JavaFS) RemoveNode(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.stale, "node-"+id)
	return removeHadoopFile(filepath.Join(s.root, bobbinRoot, "node-"+id))
}

// PutLabels stores the node labels in BobbinRoot.
func (s *JavaFS) PutLabels(rec *LabelsRecord) error { return s.putBobbin("labels", rec) }

func (s *JavaFS) putBobbin(name string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(bobbinRecord{Epoch: s.epoch, Value: raw})
	if err := writeHadoopFile(filepath.Join(s.root, bobbinRoot, name), b); err != nil {
		return fmt.Errorf("state store %s: %s: %w", s.Location(), name, err)
	}
	delete(s.stale, name)
	return nil
}

// takeBobbinRootLocked makes BobbinRoot this RM's, which takes epoch e: the records that
// were not current are removed, and "run" says e.
func (s *JavaFS) takeBobbinRootLocked(e int64) error {
	dir := filepath.Join(s.root, bobbinRoot)
	for name := range s.stale {
		if err := removeHadoopFile(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("state store %s: %s: %w", s.Location(), name, err)
		}
	}
	s.stale = nil
	b, _ := json.Marshal(e)
	if err := writeHadoopFile(filepath.Join(dir, bobbinRun), b); err != nil {
		return fmt.Errorf("state store %s: %s: %w", s.Location(), bobbinRun, err)
	}
	return nil
}

// loadBobbin reads BobbinRoot (bobbinroot.go) for an RM that takes epoch next.
func (s *JavaFS) loadBobbin(st *State, next int64) error {
	dir := filepath.Join(s.root, bobbinRoot)
	if err := finishHadoopWrites(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	recs := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if recs[name], err = readHadoopFile(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	stale, err := readBobbinRoot(st, recs, next)
	if err != nil {
		return fmt.Errorf("%s/%w", dir, err)
	}
	s.stale = stale
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].ID < st.Nodes[j].ID })
	return nil
}

// PutDelegation stores a piece of the RM delegation-token state as the Java RM does:
// a master key as DelegationKey_<id> (its Writable), a token as RMDelegationToken_<seq>
// (RMDelegationTokenIdentifierDataProto), the sequence number as the name of an empty
// RMDTSequenceNumber_<seq>.
func (s *JavaFS) PutDelegation(name string, rec *DelegationRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Join(s.root, javaDTRoot)
	var err error
	switch {
	case name == "seq":
		// As the Java RM: the one file renamed to the new number, so that a crash never
		// leaves two.
		next := filepath.Join(dir, javaDTSeqPrefix+strconv.Itoa(int(rec.Seq)))
		switch {
		case s.seqFile == next:
		case s.seqFile != "":
			if err = os.Rename(s.seqFile, next); err == nil {
				err = syncDir(dir)
			}
		default:
			err = writeHadoopFile(next, nil)
		}
		if err == nil {
			s.seqFile = next
		}
	case len(rec.Identifier) > 0:
		seq, b, err := delegationTokenBytes(rec)
		if err != nil {
			return fmt.Errorf("state store %s: delegation token %s: %w", s.Location(), name, err)
		}
		err = writeHadoopFile(filepath.Join(dir, javaDTTokPrefix+strconv.Itoa(int(seq))), b)
	default:
		err = writeHadoopFile(filepath.Join(dir, javaDTKeyPrefix+strconv.Itoa(int(rec.KeyID))), delegationKeyBytes(rec))
	}
	if err != nil {
		return fmt.Errorf("state store %s: delegation %s: %w", s.Location(), name, err)
	}
	return nil
}

// RemoveDelegation removes a key ("key-<id>") or token ("token-<seq>").
func (s *JavaFS) RemoveDelegation(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	file := ""
	switch {
	case strings.HasPrefix(name, "key-"):
		file = javaDTKeyPrefix + strings.TrimPrefix(name, "key-")
	case strings.HasPrefix(name, "token-"):
		file = javaDTTokPrefix + strings.TrimPrefix(name, "token-")
	default:
		return fmt.Errorf("state store %s: no delegation record %q", s.Location(), name)
	}
	if err := removeHadoopFile(filepath.Join(s.root, javaDTRoot, file)); err != nil {
		return fmt.Errorf("state store %s: %w", s.Location(), err)
	}
	return nil
}

// loadDelegation reads RMDTSecretManagerRoot into the records PutDelegation takes.
func (s *JavaFS) loadDelegation(st *State) error {
	dir := filepath.Join(s.root, javaDTRoot)
	if err := finishHadoopWrites(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		switch {
		case strings.HasPrefix(name, javaDTSeqPrefix):
			n, err := strconv.Atoi(strings.TrimPrefix(name, javaDTSeqPrefix))
			if err != nil {
				return fmt.Errorf("%s: not a sequence number", p)
			}
			if r := st.Delegation["seq"]; r == nil || int32(n) > r.Seq {
				st.Delegation["seq"] = &DelegationRecord{Seq: int32(n)}
				s.seqFile = p
			}
		case strings.HasPrefix(name, javaDTKeyPrefix):
			data, err := readHadoopFile(p)
			if err != nil {
				return err
			}
			k, err := readDelegationKey(data)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			st.Delegation["key-"+strconv.Itoa(int(k.KeyID))] = k
		case strings.HasPrefix(name, javaDTTokPrefix):
			data, err := readHadoopFile(p)
			if err != nil {
				return err
			}
			name, rec, err := readDelegationToken(p, data)
			if err != nil {
				return err
			}
			st.Delegation[name] = rec
		}
	}
	return nil
}
