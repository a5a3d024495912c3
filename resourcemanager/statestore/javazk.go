package statestore

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"
)

// JavaZK is ZKRMStateStore in the Java RM's layout and records, so that either RM takes
// over from the other on the same ZooKeeper (docs/migration.md). Under
// <yarn.resourcemanager.zk-state-store.parent-path>/ZKRMStateRoot:
//
//	RMVersionNode                        VersionProto (1.x)
//	EpochNode                            EpochProto: the epoch the next RM takes
//	RMAppRoot/<app>                      ApplicationStateDataProto; its children the
//	RMAppRoot/<app>/<attempt>            attempts' ApplicationAttemptStateDataProto
//	RMAppRoot/HIERARCHIES/<n>/<head>/<tail>  an application split by
//	                                     yarn.resourcemanager.zk-appid-node.split-index (3.x)
//	AMRMTokenSecretManagerRoot           AMRMTokenSecretManagerStateProto, as its data
//	RMDTSecretManagerRoot/RMDTMasterKeysRoot/DelegationKey_<id>
//	RMDTSecretManagerRoot/RMDelegationTokensRoot/RMDelegationToken_<seq>
//	RMDTSecretManagerRoot/RMDTSequentialNumber    a big-endian int32
//	BobbinRoot/...                       Bobbin's own, as in JavaFS, and its fence
//
// Every write is one multi-operation that, as the Java RM's, creates and deletes
// RM_ZK_FENCING_LOCK under the root (an RM the root's ACL shuts out has every write
// refused), and first checks Bobbin's fence: an RM that opens the store sets the fence
// znode's data, moving its version, so a paused old active's writes are refused with
// ErrFenced and never overwrite the new active's state.
type JavaZK struct {
	conn  *zk.Conn
	addr  string
	root  string // .../ZKRMStateRoot
	acl   []zk.ACL
	split int // yarn.resourcemanager.zk-appid-node.split-index for new applications
	log   *logrus.Entry

	mu       sync.Mutex // one writer at a time; guards the fields below
	fence    string
	fenceVer int32
	epoch    int64
	// where each application's znode is, and what was last written of it and its
	// attempts (by znode name; "" the application's own): an unchanged record is not
	// written again, and a znode known to exist is set, not created.
	appPath map[string]string
	written map[string]map[string][]byte
	version map[string]uint64
	stale   map[string]bool // BobbinRoot's records that are not current (bobbinroot.go)
	// tokenPath is where each delegation token read at load is (a Java RM's split layout
	// keeps them under <n>/<head>/<tail>); new ones go flat.
	tokenPath map[string]string
}

// Names in the Java RM's ZooKeeper layout.
const (
	javaZKRoot       = "ZKRMStateRoot"
	javaFencingLock  = "RM_ZK_FENCING_LOCK"
	javaHierarchies  = "HIERARCHIES"
	javaDTKeysRoot   = "RMDTMasterKeysRoot"
	javaDTTokensRoot = "RMDelegationTokensRoot"
	javaDTSeqNode    = "RMDTSequentialNumber"
	javaZKStoreMinor = 2 // Hadoop 2.7.3's ZKRMStateStore
)

// OpenJavaZK connects to the quorum addr, creates the layout if need be and takes the
// fence as owner. split is yarn.resourcemanager.zk-appid-node.split-index (0..4). With
// rootFence (high availability), it also fences as the Java RM does when it becomes
// active: the root's ACL is set so that only this RM (a digest identity of its own, with
// a password no other process knows) may create and delete its children — which every
// write does (the fencing lock) — so the RM that was active before, Java's or Bobbin's,
// has every write refused.
func OpenJavaZK(addr, parent string, timeout time.Duration, owner string, split int, rootFence bool, log *logrus.Entry) (*JavaZK, error) {
	return openJavaZK(addr, parent, timeout, 0, owner, split, rootFence, log)
}

// openJavaZK is OpenJavaZK waiting up to connectWait for a session.
func openJavaZK(addr, parent string, timeout, connectWait time.Duration, owner string, split int, rootFence bool, log *logrus.Entry) (*JavaZK, error) {
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	if split < 0 || split > 4 {
		return nil, fmt.Errorf("state store: yarn.resourcemanager.zk-appid-node.split-index %d is not 0 to 4", split)
	}
	conn, err := connectZK(addr, timeout, connectWait, log)
	if err != nil {
		return nil, err
	}
	var rootACL []zk.ACL
	if rootFence {
		var pw [16]byte
		if _, err := rand.Read(pw[:]); err != nil {
			conn.Close()
			return nil, err
		}
		user, password := strings.ReplaceAll(owner, ":", "_"), hex.EncodeToString(pw[:])
		if err := conn.AddAuth("digest", []byte(user+":"+password)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("state store: ZooKeeper %s: authenticating: %w", addr, err)
		}
		rootACL = append(zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermAdmin), zk.DigestACL(zk.PermCreate|zk.PermDelete, user, password)...)
	}
	s := &JavaZK{conn: conn, addr: addr, root: path.Join(parent, javaZKRoot), acl: zk.WorldACL(zk.PermAll), split: split, log: log,
		appPath: map[string]string{}, written: map[string]map[string][]byte{}, version: map[string]uint64{}, tokenPath: map[string]string{}}
	s.fence = path.Join(s.root, bobbinRoot, "fence")
	dirs := []string{parent, s.root, path.Join(s.root, javaAppRoot), path.Join(s.root, javaAMRMRoot), path.Join(s.root, javaDTRoot),
		path.Join(s.root, javaDTRoot, javaDTKeysRoot), path.Join(s.root, javaDTRoot, javaDTTokensRoot), path.Join(s.root, bobbinRoot), s.fence}
	for i, p := range dirs {
		if i == 2 && rootACL != nil {
			// The root's ACL first: creating under it, even a child that exists, needs
			// its create permission, which the RM active before kept to itself.
			if _, err := conn.SetACL(s.root, rootACL, -1); err != nil {
				conn.Close()
				return nil, fmt.Errorf("state store %s: fencing the root (its ACL): %w", s.Location(), err)
			}
		}
		if err := ensureZNode(conn, p, s.acl); err != nil {
			conn.Close()
			return nil, fmt.Errorf("state store %s: %w", s.Location(), err)
		}
	}
	if err := s.checkVersion(); err != nil {
		conn.Close()
		return nil, err
	}
	stat, err := conn.Set(s.fence, []byte(owner), -1)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("state store %s: taking the fence: %w", s.Location(), err)
	}
	s.fenceVer = stat.Version
	// A fencing lock left by a Java RM's client that died mid-operation (the Java RM
	// deletes it at start too).
	if err := conn.Delete(path.Join(s.root, javaFencingLock), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		conn.Close()
		return nil, fmt.Errorf("state store %s: %s: %w", s.Location(), javaFencingLock, err)
	}
	return s, nil
}

// connectZK opens a session with the quorum ("host:port,host:port"), waiting for it up to
// wait (at least the session timeout): as the Java RM's client retries a quorum that is
// not up yet (zk-num-retries × zk-retry-interval-ms), logging while it waits.
func connectZK(addr string, timeout, wait time.Duration, log *logrus.Entry) (*zk.Conn, error) {
	servers := strings.Split(addr, ",")
	for i := range servers {
		servers[i] = strings.TrimSpace(servers[i])
	}
	conn, events, err := zk.Connect(servers, timeout, zk.WithLogger(zkLogger{log}))
	if err != nil {
		return nil, fmt.Errorf("state store: ZooKeeper %s: %w", addr, err)
	}
	wait = max(wait, timeout)
	deadline := time.After(wait)
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	start := time.Now()
	for connected := false; !connected; {
		select {
		case ev := <-events:
			connected = ev.State == zk.StateHasSession
		case <-tick.C:
			log.WithFields(logrus.Fields{"zookeeper": addr, "waited": time.Since(start).Round(time.Second).String(), "up_to": wait.String()}).Warn("state store: waiting for a ZooKeeper session")
		case <-deadline:
			conn.Close()
			return nil, fmt.Errorf("state store: ZooKeeper %s: no session within %s (yarn.resourcemanager.zk-num-retries × zk-retry-interval-ms)", addr, wait)
		}
	}
	go func() { // drain the session's events (the library blocks on a full channel)
		for range events {
		}
	}()
	return conn, nil
}

// ensureZNode creates p and what is missing above it.
func ensureZNode(conn *zk.Conn, p string, acl []zk.ACL) error {
	if p == "/" || p == "" {
		return nil
	}
	_, err := conn.Create(p, nil, 0, acl)
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case errors.Is(err, zk.ErrNoNode):
		if err := ensureZNode(conn, path.Dir(p), acl); err != nil {
			return err
		}
		return ensureZNode(conn, p, acl)
	}
	return fmt.Errorf("creating %s: %w", p, err)
}

// checkVersion refuses a store of another major version; a new store gets its version.
func (s *JavaZK) checkVersion() error {
	p := path.Join(s.root, javaVersionNode)
	data, _, err := s.conn.Get(p)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		if _, err := s.conn.Create(p, versionBytes(javaZKStoreMinor), 0, s.acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("state store %s: writing its version: %w", s.Location(), err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("state store %s: %s: %w", s.Location(), p, err)
	}
	return checkVersion(s.Location(), p, data)
}

// Location names the quorum and the root.
func (s *JavaZK) Location() string { return "zk://" + s.addr + s.root }

// Close ends the ZooKeeper session.
func (s *JavaZK) Close() error {
	s.conn.Close()
	return nil
}

// multi runs ops as the Java RM does, between the fencing lock's create and delete, behind
// Bobbin's fence check; a moved fence is ErrFenced, a root that shuts this RM out
// (another RM's ACL) too.
func (s *JavaZK) multi(ops ...any) error {
	lock := path.Join(s.root, javaFencingLock)
	all := make([]any, 0, len(ops)+3)
	all = append(all, &zk.CheckVersionRequest{Path: s.fence, Version: s.fenceVer}, &zk.CreateRequest{Path: lock, Acl: s.acl})
	all = append(all, ops...)
	all = append(all, &zk.DeleteRequest{Path: lock, Version: -1})
	res, err := s.conn.Multi(all...)
	if err == nil {
		for _, r := range res { // a failed multi may say so only per operation
			if r.Error != nil {
				err = r.Error
				break
			}
		}
	}
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, zk.ErrBadVersion):
		if _, stat, gerr := s.conn.Get(s.fence); gerr == nil && stat.Version != s.fenceVer {
			return fmt.Errorf("state store %s: %w", s.Location(), ErrFenced)
		}
	case errors.Is(err, zk.ErrNoAuth):
		return fmt.Errorf("state store %s: the root's ACL shuts this RM out (another RM is active): %w", s.Location(), ErrFenced)
	}
	return fmt.Errorf("state store %s: %w", s.Location(), err)
}

// getAll reads znodes concurrently (the connection pipelines requests).
func (s *JavaZK) getAll(paths []string) (datas [][]byte, errs []error) {
	datas, errs = make([][]byte, len(paths)), make([]error, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			datas[i], _, errs[i] = s.conn.Get(p)
		}()
	}
	wg.Wait()
	return datas, errs
}

// appNodes lists every application's znode: name → path, flat or split.
func (s *JavaZK) appNodes() (map[string]string, error) {
	root := path.Join(s.root, javaAppRoot)
	names, _, err := s.conn.Children(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	apps := map[string]string{}
	for _, n := range names {
		if strings.HasPrefix(n, "application_") {
			apps[n] = path.Join(root, n)
		}
	}
	for split := 1; split <= 4; split++ {
		dir := path.Join(root, javaHierarchies, strconv.Itoa(split))
		heads, _, err := s.conn.Children(dir)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		for _, h := range heads {
			tails, _, err := s.conn.Children(path.Join(dir, h))
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return nil, fmt.Errorf("%s/%s: %w", dir, h, err)
			}
			for _, t := range tails {
				apps[h+t] = path.Join(dir, h, t)
			}
		}
	}
	return apps, nil
}

// Load reads the whole store.
func (s *JavaZK) Load() (*State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) (*State, error) { return nil, fmt.Errorf("state store %s: %w", s.Location(), err) }
	st := &State{Keys: map[string]*KeysRecord{}, Delegation: map[string]*DelegationRecord{}}
	epoch, err := s.readEpoch()
	if err != nil {
		return fail(err)
	}
	st.Epoch, s.epoch = epoch, epoch
	apps, err := s.appNodes()
	if err != nil {
		return fail(err)
	}
	ids := make([]string, 0, len(apps))
	for id := range apps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = apps[id]
	}
	// Each application is its znode, its children's names and theirs: read 32 at a time
	// over the one session (one after the other, 10,000 applications were 3 s of round
	// trips at a failover).
	type loaded struct {
		rec   *AppRecord
		files map[string][]byte
		err   error
	}
	results := make([]loaded, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i].rec, results[i].files, results[i].err = s.loadApp(paths[i])
		}()
	}
	wg.Wait()
	for i, id := range ids {
		r := results[i]
		if r.err != nil {
			return fail(r.err)
		}
		if r.rec == nil {
			continue // removed while reading
		}
		if r.rec.ID != id {
			return fail(fmt.Errorf("%s: the record is of application %s", paths[i], r.rec.ID))
		}
		st.Apps = append(st.Apps, r.rec)
		s.appPath[id], s.written[id], s.version[id] = paths[i], r.files, r.rec.Version
	}

	data, _, err := s.conn.Get(path.Join(s.root, javaAMRMRoot))
	if err != nil {
		return fail(fmt.Errorf("%s: %w", path.Join(s.root, javaAMRMRoot), err))
	}
	if len(data) > 0 {
		ring, err := readAMRMState(path.Join(s.root, javaAMRMRoot), data)
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

// loadApp reads one application's znode and its attempts' (nil, nil, nil when it was
// removed while reading).
func (s *JavaZK) loadApp(p string) (*AppRecord, map[string][]byte, error) {
	data, stat, err := s.conn.Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	attempts := map[string][]byte{}
	files := map[string][]byte{"": data}
	// An application with n children nearly always has attempts 1..n: read them by name
	// (a round trip less each, a third of a failover's reads); otherwise list them.
	id := strings.TrimPrefix(path.Base(p), "application_")
	if !strings.HasPrefix(path.Base(p), "application_") { // split: <head>/<tail>
		id = strings.TrimPrefix(path.Base(path.Dir(p))+path.Base(p), "application_")
	}
	guessed := true
	for n := int32(1); n <= stat.NumChildren && guessed; n++ {
		name := fmt.Sprintf("appattempt_%s_%06d", id, n)
		d, _, err := s.conn.Get(path.Join(p, name))
		switch {
		case errors.Is(err, zk.ErrNoNode):
			guessed = false
		case err != nil:
			return nil, nil, fmt.Errorf("%s/%s: %w", p, name, err)
		default:
			attempts[name], files[name] = d, d
		}
	}
	if !guessed {
		names, _, err := s.conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, n := range names {
			if !strings.HasPrefix(n, "appattempt_") || attempts[n] != nil {
				continue
			}
			d, _, err := s.conn.Get(path.Join(p, n))
			if err != nil {
				return nil, nil, fmt.Errorf("%s/%s: %w", p, n, err)
			}
			attempts[n], files[n] = d, d
		}
	}
	rec, err := decodeJavaApp(p, data, attempts)
	if err != nil {
		return nil, nil, err
	}
	return rec, files, nil
}

func (s *JavaZK) readEpoch() (int64, error) {
	p := path.Join(s.root, javaEpochNode)
	data, _, err := s.conn.Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return readEpochRecord(p, data)
}

// NextEpoch is the Java RM's getAndIncrementEpoch.
func (s *JavaZK) NextEpoch() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.readEpoch()
	if err != nil {
		return 0, fmt.Errorf("state store %s: %w", s.Location(), err)
	}
	if err := s.storeEpochLocked(e + 1); err != nil {
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
func (s *JavaZK) continueEpochs(next int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch = next - 1
	if err := s.storeEpochLocked(next); err != nil {
		return err
	}
	return s.takeBobbinRootLocked(next - 1)
}

func (s *JavaZK) storeEpochLocked(next int64) error {
	p := path.Join(s.root, javaEpochNode)
	b := epochBytes(next)
	if ok, _, err := s.conn.Exists(p); err != nil {
		return fmt.Errorf("state store %s: %w", s.Location(), err)
	} else if ok {
		return s.multi(&zk.SetDataRequest{Path: p, Data: b, Version: -1})
	}
	return s.multi(&zk.CreateRequest{Path: p, Data: b, Acl: s.acl})
}

// PutApp writes an application's records that changed.
func (s *JavaZK) PutApp(rec *AppRecord) error { return s.PutApps([]*AppRecord{rec}) }

// PutApps writes records, each unless a newer version of it was written, in as few
// multi-operations as ZooKeeper's request size allows.
func (s *JavaZK) PutApps(recs []*AppRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ops []any
	var done []func() // cache updates once their multi went through
	var batch []string
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := s.multi(ops...)
		if err == nil {
			for _, f := range done {
				f()
			}
		} else {
			// The multi may have gone through before the error (a connection lost on
			// the answer): what these applications' znodes hold is not known any more,
			// and is read again before their next write.
			for _, id := range batch {
				delete(s.written, id)
			}
		}
		ops, done, batch, size = nil, nil, nil, 0
		return err
	}
	for _, rec := range recs {
		if v, ok := s.version[rec.ID]; ok && rec.Version != 0 && rec.Version < v {
			continue
		}
		appData, attempts, err := encodeJavaApp(rec)
		if err != nil {
			return fmt.Errorf("state store %s: %w", s.Location(), err)
		}
		p, known := s.appPath[rec.ID]
		if !known {
			p = s.newAppPath(rec.ID)
			if dir := path.Dir(p); dir != path.Join(s.root, javaAppRoot) {
				if err := ensureZNode(s.conn, dir, s.acl); err != nil {
					return fmt.Errorf("state store %s: %w", s.Location(), err)
				}
			}
		}
		files := s.written[rec.ID]
		if files == nil {
			// Not written by this RM (or unknown since an error): what is there decides
			// between creating and setting each znode.
			_, there, err := s.loadApp(p)
			if err != nil {
				return fmt.Errorf("state store %s: %w", s.Location(), err)
			}
			files = there
		}
		var appOps []any
		appSize := 0
		changed := map[string][]byte{}
		put := func(name, p string, data []byte) {
			old, exists := files[name]
			switch {
			case exists && string(old) == string(data):
				return
			case exists:
				appOps = append(appOps, &zk.SetDataRequest{Path: p, Data: data, Version: -1})
			default:
				appOps = append(appOps, &zk.CreateRequest{Path: p, Data: data, Acl: s.acl})
			}
			changed[name] = data
			appSize += len(data) + len(p) + zkOpOverhead
		}
		put("", p, appData)
		id := strings.TrimPrefix(rec.ID, "application_")
		for _, a := range attempts {
			name := fmt.Sprintf("appattempt_%s_%06d", id, a.attempt)
			put(name, path.Join(p, name), a.data)
		}
		// An application's znodes go in one multi, and a multi stays under the limit.
		if size+appSize > zkMaxMulti {
			if err := flush(); err != nil {
				return err
			}
		}
		ops = append(ops, appOps...)
		size += appSize
		appID, version := rec.ID, rec.Version
		batch = append(batch, appID)
		done = append(done, func() {
			if s.written[appID] == nil {
				s.written[appID] = map[string][]byte{}
			}
			for n, d := range files {
				if _, ok := s.written[appID][n]; !ok {
					s.written[appID][n] = d
				}
			}
			for n, d := range changed {
				s.written[appID][n] = d
			}
			s.appPath[appID], s.version[appID] = p, version
		})
	}
	return flush()
}

// zkOpOverhead is what a multi's operation costs besides its path and data (its header and
// ACL), counted toward zkMaxMulti.
const zkOpOverhead = 100

// newAppPath is where a new application's znode goes: flat, or split by the index.
func (s *JavaZK) newAppPath(id string) string {
	root := path.Join(s.root, javaAppRoot)
	if s.split == 0 || len(id) <= s.split {
		return path.Join(root, id)
	}
	return path.Join(root, javaHierarchies, strconv.Itoa(s.split), id[:len(id)-s.split], id[len(id)-s.split:])
}

// RemoveApps deletes applications' znodes with their attempts.
func (s *JavaZK) RemoveApps(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ops []any
	var removed []string
	for _, id := range ids {
		p, ok := s.appPath[id]
		if !ok {
			continue
		}
		kids, _, err := s.conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return fmt.Errorf("state store %s: %w", s.Location(), err)
		}
		for _, k := range kids {
			ops = append(ops, &zk.DeleteRequest{Path: path.Join(p, k), Version: -1})
		}
		ops = append(ops, &zk.DeleteRequest{Path: p, Version: -1})
		removed = append(removed, id)
		if len(ops) >= 1000 {
			if err := s.multi(ops...); err != nil {
				return err
			}
			ops = nil
		}
	}
	if len(ops) > 0 {
		if err := s.multi(ops...); err != nil {
			return err
		}
	}
	for _, id := range removed {
		delete(s.appPath, id)
		delete(s.written, id)
		delete(s.version, id)
	}
	return nil
}

// PutKeys stores a master-key ring: the AMRMToken ring as the Java RM keeps it, the others
// in BobbinRoot.
func (s *JavaZK) PutKeys(name string, keys *KeysRecord) error {
	if name != KeysAMRM {
		return s.putBobbin("keys-"+name, keys)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.multi(&zk.SetDataRequest{Path: path.Join(s.root, javaAMRMRoot), Data: amrmStateBytes(keys), Version: -1})
}

// PutNode stores a running NodeManager in BobbinRoot.
func (s *JavaZK) PutNode(rec *NodeRecord) error { return s.putBobbin("node-"+rec.ID, rec) }

// RemoveNode forgets one.
func (s *JavaZK) RemoveNode(id string) error {
	s.mu.Lock()
	delete(s.stale, "node-"+id)
	s.mu.Unlock()
	return s.removeIfThere(path.Join(s.root, bobbinRoot, "node-"+id))
}

// PutLabels stores the node labels in BobbinRoot.
func (s *JavaZK) PutLabels(rec *LabelsRecord) error { return s.putBobbin("labels", rec) }

func (s *JavaZK) putBobbin(name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(bobbinRecord{Epoch: s.epoch, Value: raw})
	if err := s.putLocked(path.Join(s.root, bobbinRoot, name), b); err != nil {
		return err
	}
	delete(s.stale, name)
	return nil
}

// putLocked sets p's data, creating it if missing, behind the fence.
func (s *JavaZK) putLocked(p string, data []byte) error {
	ok, _, err := s.conn.Exists(p)
	switch {
	case err != nil:
		return fmt.Errorf("state store %s: %s: %w", s.Location(), p, err)
	case ok:
		return s.multi(&zk.SetDataRequest{Path: p, Data: data, Version: -1})
	}
	return s.multi(&zk.CreateRequest{Path: p, Data: data, Acl: s.acl})
}

func (s *JavaZK) removeIfThere(p string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok, _, err := s.conn.Exists(p); err != nil || !ok {
		return err
	}
	return s.multi(&zk.DeleteRequest{Path: p, Version: -1})
}

// loadBobbin reads BobbinRoot (bobbinroot.go) for an RM that takes epoch next.
func (s *JavaZK) loadBobbin(st *State, next int64) error {
	dir := path.Join(s.root, bobbinRoot)
	names, _, err := s.conn.Children(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	var paths, kept []string
	for _, n := range names {
		if n != "fence" {
			paths, kept = append(paths, path.Join(dir, n)), append(kept, n)
		}
	}
	datas, errs := s.getAll(paths)
	recs := map[string][]byte{}
	for i, name := range kept {
		if errs[i] != nil {
			return fmt.Errorf("%s: %w", paths[i], errs[i])
		}
		recs[name] = datas[i]
	}
	stale, err := readBobbinRoot(st, recs, next)
	if err != nil {
		return fmt.Errorf("%s/%w", dir, err)
	}
	s.stale = stale
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].ID < st.Nodes[j].ID })
	return nil
}

// takeBobbinRootLocked makes BobbinRoot this RM's, which takes epoch e: the records that
// were not current are removed, and "run" says e.
func (s *JavaZK) takeBobbinRootLocked(e int64) error {
	var ops []any
	for name := range s.stale {
		ops = append(ops, &zk.DeleteRequest{Path: path.Join(s.root, bobbinRoot, name), Version: -1})
		if len(ops) >= 1000 {
			if err := s.multi(ops...); err != nil {
				return err
			}
			ops = nil
		}
	}
	if len(ops) > 0 {
		if err := s.multi(ops...); err != nil {
			return err
		}
	}
	s.stale = nil
	b, _ := json.Marshal(e)
	return s.putLocked(path.Join(s.root, bobbinRoot, bobbinRun), b)
}

// PutDelegation stores a piece of the RM delegation-token state as the Java RM does.
func (s *JavaZK) PutDelegation(name string, rec *DelegationRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dt := path.Join(s.root, javaDTRoot)
	switch {
	case name == "seq":
		return s.putLocked(path.Join(dt, javaDTSeqNode), binary.BigEndian.AppendUint32(nil, uint32(rec.Seq)))
	case len(rec.Identifier) > 0:
		seq, b, err := delegationTokenBytes(rec)
		if err != nil {
			return fmt.Errorf("state store %s: delegation token %s: %w", s.Location(), name, err)
		}
		p, ok := s.tokenPath[name]
		if !ok {
			p = path.Join(dt, javaDTTokensRoot, javaDTTokPrefix+strconv.Itoa(int(seq)))
		}
		return s.putLocked(p, b)
	}
	return s.putLocked(path.Join(dt, javaDTKeysRoot, javaDTKeyPrefix+strconv.Itoa(int(rec.KeyID))), delegationKeyBytes(rec))
}

// RemoveDelegation removes a key ("key-<id>") or token ("token-<seq>").
func (s *JavaZK) RemoveDelegation(name string) error {
	dt := path.Join(s.root, javaDTRoot)
	switch {
	case strings.HasPrefix(name, "key-"):
		return s.removeIfThere(path.Join(dt, javaDTKeysRoot, javaDTKeyPrefix+strings.TrimPrefix(name, "key-")))
	case strings.HasPrefix(name, "token-"):
		s.mu.Lock()
		p, ok := s.tokenPath[name]
		delete(s.tokenPath, name)
		s.mu.Unlock()
		if !ok {
			p = path.Join(dt, javaDTTokensRoot, javaDTTokPrefix+strings.TrimPrefix(name, "token-"))
		}
		return s.removeIfThere(p)
	}
	return fmt.Errorf("state store %s: no delegation record %q", s.Location(), name)
}

// loadDelegation reads RMDTSecretManagerRoot (tokens flat, or split by
// yarn.resourcemanager.zk-delegation-token-node.split-index under <n>/<head>/<tail>).
func (s *JavaZK) loadDelegation(st *State) error {
	dt := path.Join(s.root, javaDTRoot)
	// The Java RM creates the node empty at start, and writes it with its first token.
	data, _, err := s.conn.Get(path.Join(dt, javaDTSeqNode))
	switch {
	case errors.Is(err, zk.ErrNoNode) || err == nil && len(data) == 0:
	case err != nil:
		return fmt.Errorf("%s: %w", path.Join(dt, javaDTSeqNode), err)
	case len(data) != 4:
		return fmt.Errorf("%s: not a sequence number (%d bytes)", path.Join(dt, javaDTSeqNode), len(data))
	default:
		st.Delegation["seq"] = &DelegationRecord{Seq: int32(binary.BigEndian.Uint32(data))}
	}
	keysDir := path.Join(dt, javaDTKeysRoot)
	names, _, err := s.conn.Children(keysDir)
	if err != nil {
		return fmt.Errorf("%s: %w", keysDir, err)
	}
	for _, n := range names {
		p := path.Join(keysDir, n)
		data, _, err := s.conn.Get(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		k, err := readDelegationKey(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		st.Delegation["key-"+strconv.Itoa(int(k.KeyID))] = k
	}
	var tokens []string
	tokDir := path.Join(dt, javaDTTokensRoot)
	names, _, err = s.conn.Children(tokDir)
	if err != nil {
		return fmt.Errorf("%s: %w", tokDir, err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, javaDTTokPrefix) {
			tokens = append(tokens, path.Join(tokDir, n))
			continue
		}
		// A split level: <n>/<head>/<tail>.
		heads, _, err := s.conn.Children(path.Join(tokDir, n))
		if err != nil {
			return fmt.Errorf("%s/%s: %w", tokDir, n, err)
		}
		for _, h := range heads {
			tails, _, err := s.conn.Children(path.Join(tokDir, n, h))
			if err != nil {
				return fmt.Errorf("%s/%s/%s: %w", tokDir, n, h, err)
			}
			for _, t := range tails {
				tokens = append(tokens, path.Join(tokDir, n, h, t))
			}
		}
	}
	datas, errs := s.getAll(tokens)
	for i, p := range tokens {
		if errs[i] != nil {
			return fmt.Errorf("%s: %w", p, errs[i])
		}
		name, rec, err := readDelegationToken(p, datas[i])
		if err != nil {
			return err
		}
		st.Delegation[name] = rec
		s.tokenPath[name] = p
	}
	return nil
}
