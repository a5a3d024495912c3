package statestore

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// Keys the RM reads to choose its store.
const (
	KeyRecovery        = "yarn.resourcemanager.recovery.enabled"
	KeyStoreClass      = "yarn.resourcemanager.store.class"
	KeyFSURI           = "yarn.resourcemanager.fs.state-store.uri"
	KeyLevelDBPath     = "yarn.resourcemanager.leveldb-state-store.path"
	KeyMaxCompletedApp = "yarn.resourcemanager.state-store.max-completed-applications"
)

const recoveryPkg = "org.apache.hadoop.yarn.server.resourcemanager.recovery."

// storePlan is the store Hadoop's keys select, read and checked, not opened.
type storePlan struct {
	kind string // "": none; "fs", "leveldb", "zk"
	uri  string // fs: as configured
	dir  string // fs, leveldb
	zk   zkPlan
}

type zkPlan struct {
	addr, parent         string
	timeout, connectWait time.Duration
	split                int
	ha                   bool
}

// planFromConf reads the store's keys. A class Bobbin cannot serve, a value it cannot
// use, or a Java RM's store it cannot read yet is an error naming the key or the store.
func planFromConf(c *conf.Configuration) (storePlan, error) {
	on, err := c.Bool(KeyRecovery)
	if err != nil || !on {
		return storePlan{}, err
	}
	class, err := c.Trimmed(KeyStoreClass)
	if err != nil {
		return storePlan{}, err
	}
	switch strings.TrimPrefix(class, recoveryPkg) {
	case "NullRMStateStore":
		return storePlan{}, nil
	case "FileSystemRMStateStore":
		raw, err := c.Trimmed(KeyFSURI)
		if err != nil {
			return storePlan{}, err
		}
		dir, err := localDir(raw)
		if err != nil {
			return storePlan{}, &conf.ValueError{Source: c.Source(KeyFSURI), Key: KeyFSURI, Value: raw, Reason: err.Error()}
		}
		return storePlan{kind: "fs", uri: raw, dir: dir}, nil
	case "LeveldbRMStateStore":
		dir, err := c.Trimmed(KeyLevelDBPath)
		if err != nil {
			return storePlan{}, err
		}
		// The Java RM's LevelDB store is not one Bobbin reads yet: never start beside it
		// as if the cluster had no applications.
		if _, err := os.Stat(filepath.Join(dir, "yarn-rm-state")); err == nil {
			return storePlan{}, fmt.Errorf("state store %s: %s is the Java ResourceManager's LeveldbRMStateStore, which Bobbin does not read yet; refusing to start without its applications (docs/migration.md: switch with FileSystemRMStateStore or ZKRMStateStore)",
				dir, filepath.Join(dir, "yarn-rm-state"))
		}
		return storePlan{kind: "leveldb", dir: dir}, nil
	case "ZKRMStateStore":
		z, err := zkPlanFromConf(c)
		return storePlan{kind: "zk", zk: z}, err
	}
	return storePlan{}, &conf.ValueError{Source: c.Source(KeyStoreClass), Key: KeyStoreClass, Value: class,
		Reason: "Bobbin keeps RM state as the Java RM does (FileSystemRMStateStore with a local path, ZKRMStateStore), in its embedded store (LeveldbRMStateStore) or not at all (NullRMStateStore)"}
}

// CheckConf returns what in c would stop the RM opening its state store, without opening
// it (bobbin check-config).
func CheckConf(c *conf.Configuration) error {
	_, err := planFromConf(c)
	return err
}

// Open returns the store Hadoop's keys select, or nil when recovery is off (or the class
// is NullRMStateStore). A class Bobbin cannot serve is an error naming the key.
// owner names this RM in a ZooKeeper store's fence.
func Open(c *conf.Configuration, owner string, log *logrus.Entry) (Store, error) {
	p, err := planFromConf(c)
	if err != nil {
		return nil, err
	}
	switch p.kind {
	case "fs":
		return openJavaFSMigrating(p.uri, p.dir, log)
	case "leveldb":
		return OpenEmbedded(p.dir)
	case "zk":
		return openJavaZKMigrating(p.zk, owner, log)
	}
	return nil, nil
}

// localDir reads a FileSystemRMStateStore URI that names local disk.
func localDir(raw string) (string, error) {
	if !strings.Contains(raw, "://") {
		return raw, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("the %s:// scheme: Bobbin's store is on local disk (file:// or a path)", u.Scheme)
	}
	return u.Path, nil
}

// ClassName is the store class the RM runs with, as the Java RM's cluster info names it
// (rmStateStoreName): the configured class with recovery on, NullRMStateStore without.
func ClassName(c *conf.Configuration) string {
	if on, err := c.Bool(KeyRecovery); err != nil || !on {
		return recoveryPkg + "NullRMStateStore"
	}
	class, _ := c.Trimmed(KeyStoreClass)
	if !strings.Contains(class, ".") {
		class = recoveryPkg + class
	}
	return class
}

// zkPlanFromConf reads ZKRMStateStore's keys: hadoop.zk.address (3.x) or
// yarn.resourcemanager.zk-address (2.x), zk-state-store.parent-path, zk-timeout-ms,
// zk-appid-node.split-index and, for fencing, ha.enabled.
func zkPlanFromConf(c *conf.Configuration) (zkPlan, error) {
	var z zkPlan
	addr, err := c.Trimmed("hadoop.zk.address")
	if err != nil {
		return z, err
	}
	if addr == "" {
		if addr, err = c.Trimmed("yarn.resourcemanager.zk-address"); err != nil {
			return z, err
		}
	}
	if addr == "" {
		return z, &conf.ValueError{Source: c.Source(KeyStoreClass), Key: "hadoop.zk.address", Value: "",
			Reason: "ZKRMStateStore needs the ZooKeeper quorum: set hadoop.zk.address (or yarn.resourcemanager.zk-address)"}
	}
	z.addr = addr
	if z.parent, err = c.Trimmed("yarn.resourcemanager.zk-state-store.parent-path"); err != nil {
		return z, err
	}
	if !strings.HasPrefix(z.parent, "/") {
		return z, &conf.ValueError{Source: c.Source("yarn.resourcemanager.zk-state-store.parent-path"), Key: "yarn.resourcemanager.zk-state-store.parent-path",
			Value: z.parent, Reason: "must be an absolute ZooKeeper path"}
	}
	if z.timeout, err = c.Duration("yarn.resourcemanager.zk-timeout-ms", time.Millisecond); err != nil {
		return z, err
	}
	// How long a quorum that is not up yet is waited for at start: the Java RM's client
	// retries zk-num-retries times (1,000), zk-retry-interval-ms apart (1 s).
	retries, interval := int64(1000), time.Second
	for _, k := range []string{"hadoop.zk.num-retries", "yarn.resourcemanager.zk-num-retries"} {
		if raw, err := c.Trimmed(k); err != nil {
			return z, err
		} else if raw != "" {
			if retries, err = strconv.ParseInt(raw, 10, 64); err != nil || retries < 0 {
				return z, &conf.ValueError{Source: c.Source(k), Key: k, Value: raw, Reason: "not a number of retries"}
			}
			break
		}
	}
	for _, k := range []string{"hadoop.zk.retry-interval-ms", "yarn.resourcemanager.zk-retry-interval-ms"} {
		if raw, err := c.Trimmed(k); err != nil {
			return z, err
		} else if raw != "" {
			ms, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || ms < 0 {
				return z, &conf.ValueError{Source: c.Source(k), Key: k, Value: raw, Reason: "not a number of milliseconds"}
			}
			interval = time.Duration(ms) * time.Millisecond
			break
		}
	}
	z.connectWait = time.Duration(retries) * interval
	if raw, err := c.Trimmed(KeyZKSplitIndex); err != nil {
		return z, err
	} else if raw != "" {
		if z.split, err = strconv.Atoi(raw); err != nil || z.split < 0 || z.split > 4 {
			return z, &conf.ValueError{Source: c.Source(KeyZKSplitIndex), Key: KeyZKSplitIndex, Value: raw, Reason: "must be 0 to 4"}
		}
	}
	if z.ha, err = c.Bool("yarn.resourcemanager.ha.enabled"); err != nil {
		return z, err
	}
	if z.ha {
		// An RM becomes active only once elected, in the same quorum: one that cannot
		// reach it within the session timeout steps back and stands again.
		z.connectWait = 0
	}
	// Znodes are created world:anyone:rwcda, the Java RM's default; another ACL, or
	// credentials to authenticate with, are not ignored but refused by name.
	for _, key := range []string{"hadoop.zk.acl", "yarn.resourcemanager.zk-acl"} {
		if v, err := c.Trimmed(key); err != nil {
			return z, err
		} else if v != "" && v != "world:anyone:rwcda" {
			return z, &conf.ValueError{Source: c.Source(key), Key: key, Value: v,
				Reason: "Bobbin creates the store's znodes with world:anyone:rwcda (the default) and fences with the root's ACL; another ACL is not supported yet"}
		}
	}
	for _, key := range []string{"hadoop.zk.auth", "yarn.resourcemanager.zk-auth"} {
		if v, err := c.Trimmed(key); err != nil {
			return z, err
		} else if v != "" {
			return z, &conf.ValueError{Source: c.Source(key), Key: key, Value: "<redacted>",
				Reason: "Bobbin does not authenticate to ZooKeeper with configured credentials yet"}
		}
	}
	const aclKey = "yarn.resourcemanager.zk-state-store.root-node.acl"
	if acl, err := c.Trimmed(aclKey); err != nil {
		return z, err
	} else if acl != "" {
		return z, &conf.ValueError{Source: c.Source(aclKey), Key: aclKey, Value: acl,
			Reason: "Bobbin fences the store's root with an ACL of its own (create and delete for the active RM alone, as the Java RM's default); unset it"}
	}
	return z, nil
}

// KeyZKSplitIndex splits application znodes in ZKRMStateStore (3.x; 0: flat).
const KeyZKSplitIndex = "yarn.resourcemanager.zk-appid-node.split-index"

// openJavaZKMigrating opens ZKRMStateStore in the Java layout. Bobbin's earlier layout
// under the same parent (BobbinRMStateRoot) is moved into it once (migrateStore), then
// marked migrated.
func openJavaZKMigrating(z zkPlan, owner string, log *logrus.Entry) (Store, error) {
	addr, parent, timeout := z.addr, z.parent, z.timeout
	s, err := openJavaZK(addr, parent, timeout, z.connectWait, owner, z.split, z.ha, log)
	if err != nil {
		return nil, err
	}
	oldRoot := path.Join(parent, zkRoot)
	exists := func(name string) (bool, error) {
		ok, _, err := s.conn.Exists(path.Join(oldRoot, name))
		return ok, err
	}
	there, err1 := exists("apps")
	done, err2 := exists("migrated")
	midway, err3 := exists("migrating")
	if err := errors.Join(err1, err2, err3); err != nil {
		s.Close()
		return nil, fmt.Errorf("state store %s: %s: %w", s.Location(), oldRoot, err)
	}
	if !there || done {
		return s, nil
	}
	fail := func(err error) (Store, error) {
		s.Close()
		return nil, fmt.Errorf("migrating zk://%s%s into %s: %w", addr, oldRoot, s.Location(), err)
	}
	old, err := OpenZK(addr, parent, timeout, owner+" (migrating)", log)
	if err != nil {
		return fail(err)
	}
	defer old.Close()
	from, err := old.Load()
	if err != nil {
		return fail(err)
	}
	err = migrateStore(s, from, "zk://"+addr+oldRoot, midway, migrationSteps{
		begin: func() error {
			_, err := s.conn.Create(path.Join(oldRoot, "migrating"), nil, 0, s.acl)
			if errors.Is(err, zk.ErrNodeExists) {
				return nil
			}
			return err
		},
		epoch: s.continueEpochs,
		end: func() error {
			if _, err := s.conn.Create(path.Join(oldRoot, "migrated"), []byte(s.Location()), 0, s.acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
			if err := s.conn.Delete(path.Join(oldRoot, "migrating"), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
			return nil
		},
	}, log)
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// openJavaFSMigrating opens FileSystemRMStateStore at dir (uri as configured). A Bobbin
// store of an earlier release in the same directory (bobbin-rmstore.db) is moved into it
// once (migrateStore), then renamed bobbin-rmstore.db.migrated.
func openJavaFSMigrating(uri, dir string, log *logrus.Entry) (Store, error) {
	s, err := OpenJavaFS(uri, dir)
	if err != nil {
		return nil, err
	}
	old := filepath.Join(dir, FileName)
	if _, err := os.Stat(old); err != nil {
		return s, nil
	}
	marker := old + ".migrating"
	_, statErr := os.Stat(marker)
	midway := statErr == nil
	emb, err := OpenEmbedded(dir)
	if err != nil {
		return nil, fmt.Errorf("migrating %s into %s: %w", old, s.Location(), err)
	}
	defer emb.Close()
	from, err := emb.Load()
	if err != nil {
		return nil, fmt.Errorf("migrating %s into %s: %w", old, s.Location(), err)
	}
	err = migrateStore(s, from, old, midway, migrationSteps{
		begin: func() error {
			if err := writeSynced(marker, nil); err != nil {
				return err
			}
			return syncDir(dir)
		},
		epoch: s.continueEpochs,
		end: func() error {
			emb.Close()
			if err := os.Rename(old, old+".migrated"); err != nil {
				return err
			}
			if err := os.Remove(marker); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			return syncDir(dir)
		},
	}, log)
	if err != nil {
		return nil, fmt.Errorf("migrating %s into %s: %w", old, s.Location(), err)
	}
	return s, nil
}

// migrationSteps are a store's own moves in migrateStore: mark a migration begun (so a
// crash in the middle is resumed, not refused), store the epoch the next RM takes, mark
// it done.
type migrationSteps struct {
	begin, end func() error
	epoch      func(next int64) error
}

// migrateStore moves the state an earlier release of Bobbin kept (from, read from where)
// into s, in the Java layout. When both hold applications and no migration was begun
// (midway), it refuses, naming both: which is the cluster's is the administrator's call.
// The epoch goes on from the earlier store's (it stored the last one used; the Java
// layout stores the next), and never back.
func migrateStore(s Store, from *State, where string, midway bool, steps migrationSteps, log *logrus.Entry) error {
	into, err := s.Load()
	if err != nil {
		return err
	}
	if !midway && len(from.Apps) > 0 && len(into.Apps) > 0 {
		return fmt.Errorf("%s holds %d applications and Bobbin's earlier store %s holds %d: refusing to choose between them (move the one that is not the cluster's away)",
			s.Location(), len(into.Apps), where, len(from.Apps))
	}
	ran := len(from.Apps) > 0 || len(from.Keys) > 0 // an RM ran on it: it took epoch from.Epoch
	if ran && (len(into.Apps) == 0 || midway) {
		if err := steps.begin(); err != nil {
			return err
		}
		if err := steps.epoch(max(from.Epoch+1, into.Epoch)); err != nil {
			return err
		}
		if err := copyState(s, from); err != nil {
			return err
		}
	}
	if err := steps.end(); err != nil {
		return err
	}
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	log.WithFields(logrus.Fields{"from": where, "into": s.Location(), "applications": len(from.Apps)}).Warn("state store migrated into the Java ResourceManager's layout")
	return nil
}

// copyState writes everything st holds into s. The earlier stores kept no AM exit status:
// a failed attempt that did not count toward max-attempts (its finish is not among the
// application's failures) gets KILLED_BY_RESOURCEMANAGER's, which does not count either
// when the failures are derived from the attempts again.
func copyState(s Store, st *State) error {
	for _, rec := range st.Apps {
		for i := range rec.Attempts {
			at := &rec.Attempts[i]
			if at.State != int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED) || at.AMExitStatus != 0 {
				continue
			}
			at.AMExitStatus = exitcode.KilledByResourceManager
			if slices.Contains(rec.Failures, at.FinishTime) {
				at.AMExitStatus = exitcode.Invalid // counts
			}
		}
		if err := s.PutApp(rec); err != nil {
			return err
		}
	}
	for name, k := range st.Keys {
		if err := s.PutKeys(name, k); err != nil {
			return err
		}
	}
	for _, n := range st.Nodes {
		if err := s.PutNode(n); err != nil {
			return err
		}
	}
	if st.Labels != nil {
		if err := s.PutLabels(st.Labels); err != nil {
			return err
		}
	}
	for name, d := range st.Delegation {
		if err := s.PutDelegation(name, d); err != nil {
			return err
		}
	}
	return nil
}
