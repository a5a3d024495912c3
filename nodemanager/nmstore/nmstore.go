// Package nmstore keeps what a NodeManager needs to restart without stopping its
// containers (yarn.nodemanager.recovery.enabled), as the Java NM's leveldb state store
// does: its applications, each container's start request and how far it got (requested,
// launched with its pid, completed with its exit status), the localized resources of its
// caches, and the container-token and NM-token master keys it verifies tokens with.
//
// The store is one bbolt file in yarn.nodemanager.recovery.dir. Every write is a
// transaction bbolt fsyncs before it returns, so what the NodeManager answered (a start
// accepted) or did (a process launched) is on disk before anyone relies on it. A file that
// cannot be read whole is an error naming it: the NodeManager then starts without
// recovery (Quarantine moves the file aside) and kills what it cannot account for.
package nmstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/bobbin-yarn/bobbin/nodemanager/localizer"
)

// FileName is the store's file inside the recovery dir.
const FileName = "bobbin-nmstate.db"

// Container states as stored.
const (
	Requested = "REQUESTED" // accepted; localizing, or about to launch
	Launched  = "LAUNCHED"  // its process runs (Pid)
	Completed = "COMPLETED" // ended: Exit and Diagnostics are final
)

// State is what Load returns.
type State struct {
	Apps       []*AppRecord       // by id
	Containers []*ContainerRecord // by id
	Keys       *KeysRecord        // nil: none stored yet
	Resources  []localizer.CachedResource
}

// AppRecord is an application with containers on this node.
type AppRecord struct {
	ID   string `json:"id"`
	User string `json:"user"`
	// ACLs are ApplicationACLMapProto messages; LogContext a LogAggregationContextProto.
	ACLs       [][]byte `json:"acls,omitempty"`
	LogContext []byte   `json:"log_context,omitempty"`
	// ServiceData is what its containers brought each auxiliary service, by service name:
	// a restarted NodeManager initializes the application in each again (the shuffle must
	// serve finished maps' output after a restart).
	ServiceData map[string][]byte `json:"service_data,omitempty"`
	// ShuffleSecret is the MapReduce shuffle's job token as NodeManagers before the
	// service data recorded it; read, and written back while kept.
	ShuffleSecret []byte `json:"shuffle_secret,omitempty"`
	// Finished: the RM said the application ended here; its clean-up (log aggregation,
	// deleting its directories) resumes after a restart.
	Finished bool `json:"finished,omitempty"`
}

// ContainerRecord is one container and how far it got.
type ContainerRecord struct {
	ID      string `json:"id"`
	Request []byte `json:"request"` // StartContainerRequestProto: launch context and token
	User    string `json:"user"`
	State   string `json:"state"`
	// Where it runs: chosen once at its start over the disks that were good then.
	WorkDir  string   `json:"work_dir,omitempty"`
	LocalDir string   `json:"local_dir,omitempty"`
	AppDirs  []string `json:"app_dirs,omitempty"`
	LogDirs  []string `json:"log_dirs,omitempty"`
	Pid      int      `json:"pid,omitempty"`
	Started  int64    `json:"started_ms,omitempty"`
	Exit     int32    `json:"exit"`
	Diag     string   `json:"diagnostics,omitempty"`
	// KillExit is set once a kill was asked for: the status the kill reports.
	KillExit int32  `json:"kill_exit,omitempty"`
	KillDiag string `json:"kill_diagnostics,omitempty"`
	// Reported: the RM has had its completed status.
	Reported bool `json:"reported,omitempty"`
	// GPUs are the minor numbers of the GPUs it holds (yarn.io/gpu).
	GPUs []int `json:"gpus,omitempty"`
}

// KeysRecord is the master keys the node holds: of each kind the current and the
// previous one.
type KeysRecord struct {
	Container []KeyRecord `json:"container"`
	NMToken   []KeyRecord `json:"nm_token"`
}

// KeyRecord is one master key.
type KeyRecord struct {
	ID    int32  `json:"id"`
	Bytes []byte `json:"bytes"`
}

var (
	bucketApps       = []byte("applications")
	bucketContainers = []byte("containers")
	bucketResources  = []byte("resources")
	bucketMeta       = []byte("meta")
	keyKeys          = []byte("master-keys")
	buckets          = [][]byte{bucketApps, bucketContainers, bucketResources, bucketMeta}
)

// Store is the NodeManager's recovery store.
type Store struct {
	path string
	db   *bolt.DB
}

// Open opens (creating it if need be) the store in dir.
func Open(dir string) (s *Store, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("recovery store: directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	// bbolt trusts the pages it reads: a damaged file may make it panic rather than fail.
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("recovery store %s is corrupt: %v", path, r)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("recovery store %s is locked by another process (another NodeManager with the same yarn.nodemanager.recovery.dir?)", path)
		}
		return nil, fmt.Errorf("recovery store %s cannot be opened (corrupt or not a Bobbin NodeManager store): %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("recovery store %s: %w", path, err)
	}
	return &Store{path: path, db: db}, nil
}

// Quarantine moves an unusable store file aside (<file>.corrupt-<unix time>) so that a
// fresh one can be opened; it returns where it went.
func Quarantine(dir string, now time.Time) (string, error) {
	path := filepath.Join(dir, FileName)
	to := fmt.Sprintf("%s.corrupt-%d", path, now.Unix())
	if err := os.Rename(path, to); err != nil {
		return "", fmt.Errorf("recovery store: move %s aside: %w", path, err)
	}
	return to, nil
}

// Location is the store's file.
func (s *Store) Location() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Load reads everything stored. A record that does not decode is an error naming it:
// a store is used whole or not at all.
func (s *Store) Load() (st *State, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, fmt.Errorf("recovery store %s is corrupt: %v", s.path, r)
		}
	}()
	st = &State{}
	err = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keyKeys); v != nil {
			st.Keys = &KeysRecord{}
			if err := json.Unmarshal(v, st.Keys); err != nil {
				return fmt.Errorf("master keys: %w", err)
			}
		}
		err := tx.Bucket(bucketApps).ForEach(func(k, v []byte) error {
			rec := &AppRecord{}
			if err := json.Unmarshal(v, rec); err != nil || rec.ID != string(k) {
				return fmt.Errorf("application %q: undecodable record (%v)", k, err)
			}
			st.Apps = append(st.Apps, rec)
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketContainers).ForEach(func(k, v []byte) error {
			rec := &ContainerRecord{}
			if err := json.Unmarshal(v, rec); err != nil || rec.ID != string(k) {
				return fmt.Errorf("container %q: undecodable record (%v)", k, err)
			}
			switch rec.State {
			case Requested, Launched, Completed:
			default:
				return fmt.Errorf("container %s: unknown state %q", k, rec.State)
			}
			st.Containers = append(st.Containers, rec)
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketResources).ForEach(func(k, v []byte) error {
			var rec localizer.CachedResource
			if err := json.Unmarshal(v, &rec); err != nil || rec.Dir != string(k) {
				return fmt.Errorf("localized resource %q: undecodable record (%v)", k, err)
			}
			st.Resources = append(st.Resources, rec)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("recovery store %s: %w", s.path, err)
	}
	sort.Slice(st.Apps, func(i, j int) bool { return st.Apps[i].ID < st.Apps[j].ID })
	sort.Slice(st.Containers, func(i, j int) bool { return st.Containers[i].ID < st.Containers[j].ID })
	return st, nil
}

func (s *Store) put(bucket []byte, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte(key), b) })
}

func (s *Store) remove(bucket []byte, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		for _, k := range keys {
			if err := tx.Bucket(bucket).Delete([]byte(k)); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutApp stores an application's record.
func (s *Store) PutApp(rec *AppRecord) error {
	if err := s.put(bucketApps, rec.ID, rec); err != nil {
		return fmt.Errorf("recovery store: application %s: %w", rec.ID, err)
	}
	return nil
}

// RemoveApp forgets an application (its clean-up is done).
func (s *Store) RemoveApp(id string) error {
	if err := s.remove(bucketApps, []string{id}); err != nil {
		return fmt.Errorf("recovery store: application %s: %w", id, err)
	}
	return nil
}

// PutContainer stores a container's record.
func (s *Store) PutContainer(rec *ContainerRecord) error {
	if err := s.put(bucketContainers, rec.ID, rec); err != nil {
		return fmt.Errorf("recovery store: container %s: %w", rec.ID, err)
	}
	return nil
}

// RemoveContainers forgets containers (the RM told the node to).
func (s *Store) RemoveContainers(ids []string) error {
	if err := s.remove(bucketContainers, ids); err != nil {
		return fmt.Errorf("recovery store: containers %v: %w", ids, err)
	}
	return nil
}

// PutKeys stores the master keys.
func (s *Store) PutKeys(rec *KeysRecord) error {
	b, err := json.Marshal(rec)
	if err == nil {
		err = s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyKeys, b) })
	}
	if err != nil {
		return fmt.Errorf("recovery store: master keys: %w", err)
	}
	return nil
}

// PutResource stores a localized resource (by its cache directory).
func (s *Store) PutResource(rec localizer.CachedResource) error {
	if err := s.put(bucketResources, rec.Dir, rec); err != nil {
		return fmt.Errorf("recovery store: localized resource %s: %w", rec.Dir, err)
	}
	return nil
}

// RemoveResources forgets localized resources (their cache directories were deleted).
func (s *Store) RemoveResources(dirs []string) error {
	if err := s.remove(bucketResources, dirs); err != nil {
		return fmt.Errorf("recovery store: localized resources: %w", err)
	}
	return nil
}
