package statestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"
)

// ErrFenced is returned by every write of a ZooKeeper store that another ResourceManager
// has taken over: this one must stop acting as the active RM.
var ErrFenced = errors.New("fenced: another ResourceManager took over the state store")

// ZK is Bobbin's earlier ZooKeeper state store, read once to move its records into the
// Java RM's layout (JavaZK, migrateZK). Under <parent-path>/BobbinRMStateRoot it keeps one znode per application
// (apps/<id>), master-key ring (keys/<name>) and running NodeManager (nodes/<id>), the
// epoch, and a fence.
//
// Fencing, as Hadoop's ZKRMStateStore fences with a lock znode in every multi-operation:
// an RM that opens the store takes the fence — it sets the fence znode's data, which
// moves the znode's version — and every write it makes afterwards is a multi-operation
// that first checks the fence is still at the version it set. An RM that another has
// taken over from (a paused old active, woken up after a failover) has every write
// refused with ErrFenced, so it can never overwrite the new active's state.
type ZK struct {
	conn     *zk.Conn
	root     string
	addr     string
	acl      []zk.ACL
	fence    string
	mu       sync.Mutex
	fenceVer int32
	log      *logrus.Entry
}

// zkRoot is the store's directory under the configured parent path.
const zkRoot = "BobbinRMStateRoot"

// zkMaxMulti bounds the bytes of one multi-operation, under ZooKeeper's default
// jute.maxbuffer of 1 MB.
const zkMaxMulti = 512 << 10

// OpenZK connects to the ZooKeeper quorum addr ("host:port,host:port"), creates the
// store's znodes if need be and takes the fence as owner (a name for logs and the
// fence's data, e.g. the RM's id).
func OpenZK(addr, parent string, timeout time.Duration, owner string, log *logrus.Entry) (*ZK, error) {
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	conn, err := connectZK(addr, timeout, 0, log)
	if err != nil {
		return nil, err
	}
	s := &ZK{conn: conn, addr: addr, root: path.Join(parent, zkRoot), acl: zk.WorldACL(zk.PermAll), log: log}
	s.fence = path.Join(s.root, "fence")
	for _, p := range []string{parent, s.root, path.Join(s.root, "apps"), path.Join(s.root, "keys"), path.Join(s.root, "nodes"), path.Join(s.root, "delegation"), s.fence} {
		if err := s.ensure(p); err != nil {
			conn.Close()
			return nil, err
		}
	}
	stat, err := conn.Set(s.fence, []byte(owner), -1)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("state store %s: taking the fence: %w", s.Location(), err)
	}
	s.fenceVer = stat.Version
	return s, nil
}

// ensure creates p (and nothing above it) unless it exists.
func (s *ZK) ensure(p string) error {
	if p == "/" || p == "" {
		return nil
	}
	if _, err := s.conn.Create(p, nil, 0, s.acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		if errors.Is(err, zk.ErrNoNode) {
			if err := s.ensure(path.Dir(p)); err != nil {
				return err
			}
			return s.ensure(p)
		}
		return fmt.Errorf("state store: ZooKeeper %s: creating %s: %w", s.addr, p, err)
	}
	return nil
}

// Location names the quorum and the root.
func (s *ZK) Location() string { return "zk://" + s.addr + s.root }

// Close ends the ZooKeeper session.
func (s *ZK) Close() error {
	s.conn.Close()
	return nil
}

// multi runs ops behind the fence check; a moved fence is ErrFenced.
func (s *ZK) multi(ops ...any) error {
	all := append([]any{&zk.CheckVersionRequest{Path: s.fence, Version: s.fenceVer}}, ops...)
	res, err := s.conn.Multi(all...)
	if err == nil {
		for _, r := range res { // a failed multi may say so only per operation
			if r.Error != nil {
				err = r.Error
				break
			}
		}
	}
	if err != nil {
		if errors.Is(err, zk.ErrBadVersion) {
			if _, stat, gerr := s.conn.Get(s.fence); gerr == nil && stat.Version != s.fenceVer {
				return fmt.Errorf("state store %s: %w", s.Location(), ErrFenced)
			}
		}
		return fmt.Errorf("state store %s: %w", s.Location(), err)
	}
	return nil
}

// put writes data at p (created if missing) behind the fence.
func (s *ZK) put(p string, data []byte) error {
	_, stat, err := s.conn.Get(p)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return s.multi(&zk.CreateRequest{Path: p, Data: data, Acl: s.acl})
	case err != nil:
		return fmt.Errorf("state store %s: %s: %w", s.Location(), p, err)
	}
	return s.multi(&zk.SetDataRequest{Path: p, Data: data, Version: stat.Version})
}

// getAll reads znodes concurrently (the connection pipelines requests).
func (s *ZK) getAll(paths []string) (datas [][]byte, stats []*zk.Stat, errs []error) {
	datas, stats, errs = make([][]byte, len(paths)), make([]*zk.Stat, len(paths)), make([]error, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			datas[i], stats[i], errs[i] = s.conn.Get(p)
		}()
	}
	wg.Wait()
	return datas, stats, errs
}

// Load reads everything: the children of apps, keys and nodes in parallel.
func (s *ZK) Load() (*State, error) {
	st := &State{Keys: map[string]*KeysRecord{}, Delegation: map[string]*DelegationRecord{}}
	if data, _, err := s.conn.Get(path.Join(s.root, "epoch")); err == nil {
		if err := json.Unmarshal(data, &st.Epoch); err != nil {
			return nil, fmt.Errorf("state store %s: epoch: %w", s.Location(), err)
		}
	} else if !errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("state store %s: epoch: %w", s.Location(), err)
	}
	if data, _, err := s.conn.Get(path.Join(s.root, "labels")); err == nil {
		st.Labels = &LabelsRecord{}
		if err := json.Unmarshal(data, st.Labels); err != nil {
			return nil, fmt.Errorf("state store %s: node labels: %w", s.Location(), err)
		}
	} else if !errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("state store %s: node labels: %w", s.Location(), err)
	}
	read := func(dir string, each func(name string, data []byte) error) error {
		names, _, err := s.conn.Children(path.Join(s.root, dir))
		if err != nil {
			return err
		}
		paths := make([]string, len(names))
		for i, n := range names {
			paths[i] = path.Join(s.root, dir, n)
		}
		datas, _, errs := s.getAll(paths)
		for i, n := range names {
			if errs[i] != nil {
				if errors.Is(errs[i], zk.ErrNoNode) {
					continue // removed while reading
				}
				return fmt.Errorf("%s/%s: %w", dir, n, errs[i])
			}
			if err := each(n, datas[i]); err != nil {
				return fmt.Errorf("%s/%s: %w", dir, n, err)
			}
		}
		return nil
	}
	err := read("apps", func(_ string, data []byte) error {
		var rec AppRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return err
		}
		st.Apps = append(st.Apps, &rec)
		return nil
	})
	if err == nil {
		err = read("keys", func(name string, data []byte) error {
			var rec KeysRecord
			if err := json.Unmarshal(data, &rec); err != nil {
				return err
			}
			st.Keys[name] = &rec
			return nil
		})
	}
	if err == nil {
		err = read("delegation", func(name string, data []byte) error {
			var rec DelegationRecord
			if err := json.Unmarshal(data, &rec); err != nil {
				return err
			}
			st.Delegation[name] = &rec
			return nil
		})
	}
	if err == nil {
		err = read("nodes", func(_ string, data []byte) error {
			var rec NodeRecord
			if err := json.Unmarshal(data, &rec); err != nil {
				return err
			}
			st.Nodes = append(st.Nodes, &rec)
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("state store %s: %w", s.Location(), err)
	}
	sort.Slice(st.Apps, func(i, j int) bool { return st.Apps[i].ID < st.Apps[j].ID })
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].ID < st.Nodes[j].ID })
	return st, nil
}

// PutApp stores rec unless the stored record is as new or newer.
func (s *ZK) PutApp(rec *AppRecord) error { return s.PutApps([]*AppRecord{rec}) }

// PutApps stores records, each unless the stored one is as new or newer, in as few
// multi-operations as ZooKeeper's request size allows.
func (s *ZK) PutApps(recs []*AppRecord) error {
	s.mu.Lock() // one writer at a time: each write reads the znode version it replaces
	defer s.mu.Unlock()
	var ops []any
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := s.multi(ops...)
		ops, size = nil, 0
		return err
	}
	paths := make([]string, len(recs))
	for i, rec := range recs {
		paths[i] = path.Join(s.root, "apps", rec.ID)
	}
	olds, stats, errs := s.getAll(paths)
	for i, rec := range recs {
		data, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("state store: application %s: %w", rec.ID, err)
		}
		p := paths[i]
		switch err := errs[i]; {
		case errors.Is(err, zk.ErrNoNode):
			ops = append(ops, &zk.CreateRequest{Path: p, Data: data, Acl: s.acl})
		case err != nil:
			return fmt.Errorf("state store %s: application %s: %w", s.Location(), rec.ID, err)
		default:
			var v struct {
				Version uint64 `json:"version"`
			}
			if json.Unmarshal(olds[i], &v) == nil && v.Version >= rec.Version {
				continue
			}
			ops = append(ops, &zk.SetDataRequest{Path: p, Data: data, Version: stats[i].Version})
		}
		if size += len(data) + len(p); size >= zkMaxMulti {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// RemoveApps deletes applications' znodes.
func (s *ZK) RemoveApps(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ops []any
	for _, id := range ids {
		p := path.Join(s.root, "apps", id)
		if ok, _, err := s.conn.Exists(p); err != nil {
			return fmt.Errorf("state store %s: %w", s.Location(), err)
		} else if ok {
			ops = append(ops, &zk.DeleteRequest{Path: p, Version: -1})
		}
		if len(ops) >= 1000 {
			if err := s.multi(ops...); err != nil {
				return err
			}
			ops = nil
		}
	}
	if len(ops) == 0 {
		return nil
	}
	return s.multi(ops...)
}

// NextEpoch stores and returns the epoch after the stored one (0 for a new store).
func (s *ZK) NextEpoch() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := path.Join(s.root, "epoch")
	data, stat, err := s.conn.Get(p)
	var epoch int64
	switch {
	case errors.Is(err, zk.ErrNoNode):
		d, _ := json.Marshal(epoch)
		return epoch, s.multi(&zk.CreateRequest{Path: p, Data: d, Acl: s.acl})
	case err != nil:
		return 0, fmt.Errorf("state store %s: epoch: %w", s.Location(), err)
	}
	if err := json.Unmarshal(data, &epoch); err != nil {
		return 0, fmt.Errorf("state store %s: epoch: %w", s.Location(), err)
	}
	epoch++
	d, _ := json.Marshal(epoch)
	return epoch, s.multi(&zk.SetDataRequest{Path: p, Data: d, Version: stat.Version})
}

// PutKeys stores a master-key ring.
func (s *ZK) PutKeys(name string, keys *KeysRecord) error {
	data, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.put(path.Join(s.root, "keys", name), data)
}

// PutNode stores a running NodeManager.
func (s *ZK) PutNode(rec *NodeRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.put(path.Join(s.root, "nodes", rec.ID), data)
}

// PutLabels stores the node labels.
func (s *ZK) PutLabels(rec *LabelsRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.put(path.Join(s.root, "labels"), data)
}

// PutDelegation stores one delegation-token record.
func (s *ZK) PutDelegation(name string, rec *DelegationRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.put(path.Join(s.root, "delegation", name), data)
}

// RemoveDelegation forgets one delegation-token record.
func (s *ZK) RemoveDelegation(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := path.Join(s.root, "delegation", name)
	if ok, _, err := s.conn.Exists(p); err != nil || !ok {
		return err
	}
	return s.multi(&zk.DeleteRequest{Path: p, Version: -1})
}

// RemoveNode forgets a NodeManager.
func (s *ZK) RemoveNode(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := path.Join(s.root, "nodes", id)
	if ok, _, err := s.conn.Exists(p); err != nil || !ok {
		return err
	}
	return s.multi(&zk.DeleteRequest{Path: p, Version: -1})
}

// zkLogger sends the client library's messages to logrus at debug level (it logs every
// reconnect attempt).
type zkLogger struct{ log *logrus.Entry }

func (l zkLogger) Printf(format string, args ...any) { l.log.Debugf("zookeeper: "+format, args...) }
