// Package statestore keeps what the ResourceManager must not lose when it restarts:
// every application (its submission, its attempts, its state and diagnostics) and the
// RM's epoch, which container ids carry after a restart (container_e<epoch>_...).
//
// The embedded store is one bbolt file in a directory on local disk: each write is a
// transaction that bbolt fsyncs before it returns, so a caller that answers a client after
// a write has made it durable. A file bbolt cannot open or read (torn, truncated, empty, a
// corrupt page, not a store) is an error naming it: the RM refuses to start rather than
// start empty or crash.
package statestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Store is where the RM's state is kept.
type Store interface {
	// Load reads everything stored, once, at start.
	Load() (*State, error)
	// PutApp stores an application's record, unless a newer version of it is stored.
	PutApp(rec *AppRecord) error
	// PutApps is PutApp for many, in one transaction.
	PutApps(recs []*AppRecord) error
	// RemoveApps forgets applications (retired from the RM's memory).
	RemoveApps(ids []string) error
	// NextEpoch stores and returns the epoch after the stored one (0 for a new store).
	NextEpoch() (int64, error)
	// PutKeys stores one master-key ring ("amrm", "container", "nmtoken").
	PutKeys(name string, keys *KeysRecord) error
	// PutNode and RemoveNode keep the list of running NodeManagers, which a restarted RM
	// waits for before it schedules.
	PutNode(rec *NodeRecord) error
	RemoveNode(id string) error
	// PutLabels stores the cluster's node labels and which nodes carry them.
	PutLabels(rec *LabelsRecord) error
	// PutDelegation and RemoveDelegation keep the RM delegation-token secret manager's
	// master keys, tokens and sequence number, one record each by name.
	PutDelegation(name string, rec *DelegationRecord) error
	RemoveDelegation(name string) error
	// Location says what and where the store is, for logs and the web endpoints.
	Location() string
	Close() error
}

// State is what Load returns.
type State struct {
	Epoch int64
	Apps  []*AppRecord // by application id
	Keys  map[string]*KeysRecord
	Nodes []*NodeRecord // by node id
	// Labels are the node labels administrators added (nil: none stored yet).
	Labels *LabelsRecord
	// Delegation is the RM delegation-token state, by record name.
	Delegation map[string]*DelegationRecord
}

// DelegationRecord is one piece of the RM delegation-token state: a master key (ID,
// Bytes, ExpiryMs), a token (its YARNDelegationTokenIdentifierProto bytes and RenewDateMs)
// or the last sequence number issued (Seq).
type DelegationRecord struct {
	KeyID       int32  `json:"keyId,omitempty"`
	Bytes       []byte `json:"bytes,omitempty"`
	ExpiryMs    int64  `json:"expiryMs,omitempty"`
	Identifier  []byte `json:"identifier,omitempty"`
	RenewDateMs int64  `json:"renewDateMs,omitempty"`
	Seq         int32  `json:"seq,omitempty"`
}

// LabelsRecord is the cluster's node labels (rmadmin -addToClusterNodeLabels) and the
// labels on nodes (-replaceLabelsOnNode), by "host:port" (port 0: the whole host).
type LabelsRecord struct {
	Cluster []string `json:"cluster"`
	// NonExclusive names the labels of Cluster added with exclusive=false.
	NonExclusive []string            `json:"non_exclusive,omitempty"`
	OnNode       map[string][]string `json:"on_node,omitempty"`
}

// KeysRecord is a master-key ring: the signing key, the one being rolled in, the one
// rolled out (tokens signed with it still verify), and the last id used.
type KeysRecord struct {
	Current  KeyRecord  `json:"current"`
	Next     *KeyRecord `json:"next,omitempty"`
	Previous *KeyRecord `json:"previous,omitempty"`
	LastID   int32      `json:"last_id"`
}

// KeyRecord is one master key.
type KeyRecord struct {
	ID    int32  `json:"id"`
	Bytes []byte `json:"bytes"`
}

// NodeRecord is a NodeManager that was running.
type NodeRecord struct {
	ID string `json:"id"` // host:port
	// State is empty for a running NodeManager, which a restart waits for. An
	// administrator's decommission is kept too: DECOMMISSIONING (graceful; it ends at
	// DecommissionBy, Unix ms, when set) is waited for and goes on decommissioning when it
	// registers again; DECOMMISSIONED is listed again (yarn node -list -states
	// DECOMMISSIONED, the cluster metrics) with what it last was.
	State          string `json:"state,omitempty"`
	DecommissionBy int64  `json:"decommissionByMs,omitempty"`
	HTTP           string `json:"http,omitempty"`
	Rack           string `json:"rack,omitempty"`
	MemoryMB       int64  `json:"memoryMb,omitempty"`
	VCores         int32  `json:"vcores,omitempty"`
}

// Node states a NodeRecord holds besides running.
const (
	NodeDecommissioning = "DECOMMISSIONING"
	NodeDecommissioned  = "DECOMMISSIONED"
)

// AppRecord is one application as stored.
type AppRecord struct {
	ID string `json:"id"`
	// Version grows with every change the RM makes; a record never replaces a newer one.
	Version          uint64           `json:"version"`
	User             string           `json:"user"`
	Queue            string           `json:"queue"`
	Name             string           `json:"name"`
	Type             string           `json:"type"`
	Tags             []string         `json:"tags,omitempty"`
	Priority         int32            `json:"priority"`
	AMResource       []byte           `json:"am_resource,omitempty"` // ResourceProto
	AMSpec           []byte           `json:"am_spec,omitempty"`     // ContainerLaunchContextProto
	MaxAttempts      int              `json:"max_attempts"`
	Unmanaged        bool             `json:"unmanaged,omitempty"`
	Failures         []int64          `json:"failures,omitempty"`
	FailuresValidity int64            `json:"failures_validity_ms,omitempty"`
	State            int32            `json:"state"`
	Final            int32            `json:"final"`
	SubmitTime       int64            `json:"submit_time"`
	StartTime        int64            `json:"start_time"`
	FinishTime       int64            `json:"finish_time,omitempty"`
	Diagnostics      string           `json:"diagnostics,omitempty"`
	Timeouts         map[int32]int64  `json:"timeouts,omitempty"`
	LabelExpr        *string          `json:"label_expr,omitempty"`
	AMLabelExpr      *string          `json:"am_label_expr,omitempty"`
	Runtime          time.Duration    `json:"runtime,omitempty"`
	Attempts         []AttemptRecord  `json:"attempts,omitempty"`
	Extra            map[string]int64 `json:"extra,omitempty"` // room to grow without a format change
}

// AttemptRecord is one application attempt as stored.
type AttemptRecord struct {
	Attempt      int32  `json:"attempt"`
	State        int32  `json:"state"`
	Registered   bool   `json:"registered,omitempty"`
	Unregistered bool   `json:"unregistered,omitempty"`
	Host         string `json:"host,omitempty"`
	RPCPort      int32  `json:"rpc_port,omitempty"`
	TrackingURL  string `json:"tracking_url,omitempty"`
	Diagnostics  string `json:"diagnostics,omitempty"`
	StartTime    int64  `json:"start_time"`
	FinishTime   int64  `json:"finish_time,omitempty"`
	AMContainer  string `json:"am_container,omitempty"`
	AMNode       string `json:"am_node,omitempty"`      // the AM container's node, host:port
	AMNodeHTTP   string `json:"am_node_http,omitempty"` // and its web address
	ClientKey    []byte `json:"client_key,omitempty"`
	// AMExitStatus is the AM container's exit status once the attempt failed (-1000,
	// ContainerExitStatus.INVALID: none), which says whether the failure counts.
	AMExitStatus int32 `json:"am_exit_status,omitempty"`

	final int32 // the final status a Java RM stored with the attempt (decodeJavaApp)
}

var (
	bucketApps  = []byte("applications")
	bucketMeta  = []byte("meta")
	bucketKeys  = []byte("keys")
	bucketNodes = []byte("nodes")
	bucketDeleg = []byte("delegation")
	keyEpoch    = []byte("epoch")
	keyLabels   = []byte("labels")
)

// FileName is the store's file inside its directory.
const FileName = "bobbin-rmstore.db"

// Embedded is the bbolt store.
type Embedded struct {
	path string
	db   *bolt.DB
	apps groupCommit // application writes, grouped into shared transactions
}

// OpenEmbedded opens (creating it if need be) the store in dir.
func OpenEmbedded(dir string) (*Embedded, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state store: directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	// bbolt takes an empty file for a new store: a store truncated to nothing would start
	// the RM without a word and without its applications.
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		return nil, fmt.Errorf("state store %s is empty (0 bytes: truncated?); refusing to start without the applications it held (move it away to start empty)", path)
	}
	var db *bolt.DB
	err := guardCorrupt(func() (err error) {
		// Opening reads the meta and freelist pages: a corrupt freelist panics in bbolt.
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
		return err
	})
	if err != nil {
		switch {
		case errors.Is(err, bolt.ErrTimeout):
			return nil, fmt.Errorf("state store %s is locked by another process (another ResourceManager on the same store?)", path)
		case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
			return nil, fmt.Errorf("state store %s cannot be opened (corrupt or not a Bobbin store; move it away to start empty): %w", path, err)
		}
		// The file system's refusal (read-only, permissions, no space): the store may be
		// whole, so nothing here says to move it away.
		return nil, fmt.Errorf("state store %s cannot be opened: %w", path, err)
	}
	if err := checkWhole(db, path); err != nil {
		db.Close()
		return nil, err
	}
	err = guardCorrupt(func() error {
		// A store that has its buckets is not written before it is read: a damaged one
		// stays as it was found.
		missing := false
		db.View(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketApps, bucketMeta, bucketKeys, bucketNodes, bucketDeleg} {
				missing = missing || tx.Bucket(b) == nil
			}
			return nil
		})
		if !missing {
			return nil
		}
		return db.Update(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketApps, bucketMeta, bucketKeys, bucketNodes, bucketDeleg} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("state store %s: %w", path, err)
	}
	s := &Embedded{path: path, db: db}
	s.apps.commit = s.commitApps
	s.apps.perRecord = func(err error) bool {
		return errors.Is(err, bolt.ErrKeyRequired) || errors.Is(err, bolt.ErrKeyTooLarge) || errors.Is(err, bolt.ErrValueTooLarge)
	}
	return s, nil
}

// checkWhole refuses a store file shorter than its last commit says it is (truncated:
// reading its missing pages would fault).
func checkWhole(db *bolt.DB, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("state store %s: %w", path, err)
	}
	var need int64
	if err := db.View(func(tx *bolt.Tx) error { need = tx.Size(); return nil }); err != nil {
		return fmt.Errorf("state store %s: %w", path, err)
	}
	if need > fi.Size() {
		return fmt.Errorf("state store %s is truncated: %d bytes, its last commit needs %d; refusing to start without what it held (restore it, or move it away to start empty)", path, fi.Size(), need)
	}
	return nil
}

// guardCorrupt runs fn, which reads the store's pages, turning what a corrupt page makes
// bbolt do — panic on a page that is not what it should be, or fault on a read past the
// file — into an error (its caller names the store), instead of a crash that names
// nothing.
func guardCorrupt(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt (%v): restore the store, or move it away to start empty", p)
		}
	}()
	return fn()
}

// Location is the store's file.
func (s *Embedded) Location() string { return s.path }

// Close closes the store.
func (s *Embedded) Close() error { return s.db.Close() }

// Load reads every application and the epoch. A record that does not decode is an error
// naming it: a store is used whole or not at all.
func (s *Embedded) Load() (*State, error) {
	st := &State{Keys: map[string]*KeysRecord{}, Delegation: map[string]*DelegationRecord{}}
	err := guardCorrupt(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			if v := tx.Bucket(bucketMeta).Get(keyEpoch); v != nil {
				if err := json.Unmarshal(v, &st.Epoch); err != nil {
					return fmt.Errorf("epoch: %w", err)
				}
			}
			if v := tx.Bucket(bucketMeta).Get(keyLabels); v != nil {
				st.Labels = &LabelsRecord{}
				if err := json.Unmarshal(v, st.Labels); err != nil {
					return fmt.Errorf("node labels: %w", err)
				}
			}
			err := tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
				var rec KeysRecord
				if err := json.Unmarshal(v, &rec); err != nil {
					return fmt.Errorf("master keys %s: %w", k, err)
				}
				st.Keys[string(k)] = &rec
				return nil
			})
			if err != nil {
				return err
			}
			err = tx.Bucket(bucketDeleg).ForEach(func(k, v []byte) error {
				var rec DelegationRecord
				if err := json.Unmarshal(v, &rec); err != nil {
					return fmt.Errorf("delegation %s: %w", k, err)
				}
				st.Delegation[string(k)] = &rec
				return nil
			})
			if err != nil {
				return err
			}
			err = tx.Bucket(bucketNodes).ForEach(func(k, v []byte) error {
				var rec NodeRecord
				if err := json.Unmarshal(v, &rec); err != nil {
					return fmt.Errorf("node %s: %w", k, err)
				}
				st.Nodes = append(st.Nodes, &rec)
				return nil
			})
			if err != nil {
				return err
			}
			return tx.Bucket(bucketApps).ForEach(func(k, v []byte) error {
				var rec AppRecord
				if err := json.Unmarshal(v, &rec); err != nil {
					return fmt.Errorf("application %s: %w", k, err)
				}
				st.Apps = append(st.Apps, &rec)
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("state store %s: %w", s.path, err)
	}
	sort.Slice(st.Apps, func(i, j int) bool { return st.Apps[i].ID < st.Apps[j].ID })
	return st, nil
}

// PutApp stores rec unless the stored record is as new or newer.
func (s *Embedded) PutApp(rec *AppRecord) error {
	if err := s.PutApps([]*AppRecord{rec}); err != nil {
		return fmt.Errorf("application %s: %w", rec.ID, err)
	}
	return nil
}

// PutApps stores records, each unless the stored one is as new or newer, in one
// transaction (shared with other callers' writes made meanwhile: groupCommit).
func (s *Embedded) PutApps(recs []*AppRecord) error {
	enc := make([]encodedApp, len(recs))
	for i, rec := range recs {
		data, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("state store: application %s: %w", rec.ID, err)
		}
		enc[i] = encodedApp{rec, data}
	}
	return s.apps.put(enc)
}

// commitApps writes encoded records in one transaction, each unless the stored one is as
// new or newer (a transaction reads its own writes: of two versions of one application
// in it, the newer stands).
func (s *Embedded) commitApps(recs []encodedApp) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketApps)
		for _, r := range recs {
			if old := b.Get([]byte(r.rec.ID)); old != nil {
				var v struct {
					Version uint64 `json:"version"`
				}
				if json.Unmarshal(old, &v) == nil && v.Version >= r.rec.Version {
					continue
				}
			}
			if err := b.Put([]byte(r.rec.ID), r.data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state store %s: %w", s.path, err)
	}
	return nil
}

// RemoveApps deletes applications' records.
func (s *Embedded) RemoveApps(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketApps)
		for _, id := range ids {
			if err := b.Delete([]byte(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state store %s: removing %d applications: %w", s.path, len(ids), err)
	}
	return nil
}

// NextEpoch stores and returns the epoch after the stored one.
func (s *Embedded) NextEpoch() (int64, error) {
	var epoch int64
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if v := b.Get(keyEpoch); v != nil {
			if err := json.Unmarshal(v, &epoch); err != nil {
				return fmt.Errorf("epoch: %w", err)
			}
			epoch++
		}
		data, _ := json.Marshal(epoch)
		return b.Put(keyEpoch, data)
	})
	if err != nil {
		return 0, fmt.Errorf("state store %s: %w", s.path, err)
	}
	return epoch, nil
}

// PutKeys stores a master-key ring.
func (s *Embedded) PutKeys(name string, keys *KeysRecord) error {
	return s.put(bucketKeys, name, keys, "master keys "+name)
}

// PutNode stores a running NodeManager.
func (s *Embedded) PutNode(rec *NodeRecord) error {
	return s.put(bucketNodes, rec.ID, rec, "node "+rec.ID)
}

// PutLabels stores the node labels.
func (s *Embedded) PutLabels(rec *LabelsRecord) error {
	return s.put(bucketMeta, string(keyLabels), rec, "node labels")
}

// PutDelegation stores one delegation-token record.
func (s *Embedded) PutDelegation(name string, rec *DelegationRecord) error {
	return s.put(bucketDeleg, name, rec, "delegation "+name)
}

// RemoveDelegation forgets one delegation-token record.
func (s *Embedded) RemoveDelegation(name string) error {
	err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketDeleg).Delete([]byte(name)) })
	if err != nil {
		return fmt.Errorf("state store %s: delegation %s: %w", s.path, name, err)
	}
	return nil
}

// RemoveNode forgets a NodeManager that stopped running.
func (s *Embedded) RemoveNode(id string) error {
	err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketNodes).Delete([]byte(id)) })
	if err != nil {
		return fmt.Errorf("state store %s: node %s: %w", s.path, id, err)
	}
	return nil
}

// put stores one JSON record under key in bucket.
func (s *Embedded) put(bucket []byte, key string, v any, what string) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state store: %s: %w", what, err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte(key), data) })
	if err != nil {
		return fmt.Errorf("state store %s: %s: %w", s.path, what, err)
	}
	return nil
}

// Import writes a whole state in one transaction — applications, keys, nodes and the
// epoch — for benchmarks and tests that need a large store, and for moving a state
// between stores.
func (s *Embedded) Import(st *State) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		put := func(bucket []byte, key string, v any) error {
			data, err := json.Marshal(v)
			if err != nil {
				return err
			}
			return tx.Bucket(bucket).Put([]byte(key), data)
		}
		for _, a := range st.Apps {
			if err := put(bucketApps, a.ID, a); err != nil {
				return err
			}
		}
		for name, k := range st.Keys {
			if err := put(bucketKeys, name, k); err != nil {
				return err
			}
		}
		for _, n := range st.Nodes {
			if err := put(bucketNodes, n.ID, n); err != nil {
				return err
			}
		}
		for name, rec := range st.Delegation {
			if err := put(bucketDeleg, name, rec); err != nil {
				return err
			}
		}
		data, _ := json.Marshal(st.Epoch)
		return tx.Bucket(bucketMeta).Put(keyEpoch, data)
	})
	if err != nil {
		return fmt.Errorf("state store %s: import: %w", s.path, err)
	}
	return nil
}
