package statestore

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/internal/zktest"
)

func zkApp(i int, user string, version uint64) *AppRecord {
	return &AppRecord{ID: fmt.Sprintf("application_1700000000000_%04d", i), Version: version, User: user, Queue: "default", Type: "YARN",
		MaxAttempts: 2, State: int32(yarnpb.YarnApplicationStateProto_ACCEPTED), Diagnostics: strings.Repeat("d", 300),
		Attempts: []AttemptRecord{{Attempt: 1, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED), StartTime: 1,
			AMContainer: fmt.Sprintf("container_1700000000000_%04d_01_000001", i), AMNode: "h1:8041", AMExitStatus: -1000}}}
}

// The Java layout on a real ZooKeeper: what one RM stores another loads (applications
// with their attempts as children, the epoch, the AMRMToken keys as the root's data, the
// NodeManagers in BobbinRoot); once a second RM has opened the store, every write of the
// first is refused with ErrFenced and changes nothing; batches larger than one ZooKeeper
// request go through whole; no fencing lock is left behind.
func TestJavaZKKeepsStateAndFences(t *testing.T) {
	zks := zktest.Start(t)
	log := testutil.QuietLogger()
	s1, err := OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm1", 0, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	// As a Java RM leaves it at start: the sequence number's znode empty until its first
	// token.
	if _, err := s1.conn.Create("/rmstore/ZKRMStateRoot/RMDTSecretManagerRoot/RMDTSequentialNumber", nil, 0, s1.acl); err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Load(); err != nil {
		t.Fatal(err)
	}
	if e, err := s1.NextEpoch(); err != nil || e != 0 {
		t.Fatalf("first epoch %d %v", e, err)
	}
	if err := s1.PutApp(zkApp(1, "alice", 2)); err != nil {
		t.Fatal(err)
	}
	if err := s1.PutApp(zkApp(1, "stale", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s1.PutKeys(KeysAMRM, &KeysRecord{Current: KeyRecord{ID: 3, Bytes: []byte("k3")}, LastID: 3}); err != nil {
		t.Fatal(err)
	}
	if err := s1.PutNode(&NodeRecord{ID: "h1:8041"}); err != nil {
		t.Fatal(err)
	}
	var many []*AppRecord
	for i := 2; i <= 3001; i++ {
		many = append(many, zkApp(i, "bob", 1))
	}
	if err := s1.PutApps(many); err != nil {
		t.Fatal(err)
	}
	if err := s1.RemoveApps([]string{"application_1700000000000_0002"}); err != nil {
		t.Fatal(err)
	}
	if err := s1.PutDelegation("key-7", &DelegationRecord{KeyID: 7, Bytes: []byte("dk"), ExpiryMs: 99}); err != nil {
		t.Fatal(err)
	}
	if err := s1.PutDelegation("seq", &DelegationRecord{Seq: 12}); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := s1.conn.Exists(path.Join(s1.root, javaFencingLock)); ok {
		t.Error("a fencing lock was left behind")
	}
	// Where the Java RM keeps them.
	if kids, _, err := s1.conn.Children("/rmstore/ZKRMStateRoot/RMAppRoot/application_1700000000000_0001"); err != nil || len(kids) != 1 || kids[0] != "appattempt_1700000000000_0001_000001" {
		t.Errorf("attempts of application 1: %v %v", kids, err)
	}

	s2, err := OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm2", 0, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	st, err := s2.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 3000 || st.Apps[0].User != "alice" || st.Epoch != 1 || st.Keys[KeysAMRM].Current.ID != 3 || len(st.Nodes) != 1 ||
		st.Delegation["key-7"] == nil || st.Delegation["seq"].Seq != 12 || len(st.Apps[0].Attempts) != 1 {
		t.Fatalf("loaded %d apps (first %+v), epoch %d, keys %v, nodes %v, delegation %v", len(st.Apps), st.Apps[0], st.Epoch, st.Keys, st.Nodes, st.Delegation)
	}
	for what, err := range map[string]error{
		"PutApp":     s1.PutApp(zkApp(1, "old-active", 9)),
		"RemoveApps": s1.RemoveApps([]string{"application_1700000000000_0003"}),
		"NextEpoch":  func() error { _, err := s1.NextEpoch(); return err }(),
		"PutNode":    s1.PutNode(&NodeRecord{ID: "h9:8041"}),
	} {
		if !errors.Is(err, ErrFenced) {
			t.Errorf("%s by the fenced RM: %v, want ErrFenced", what, err)
		}
	}
	if e, err := s2.NextEpoch(); err != nil || e != 1 {
		t.Fatalf("epoch of the new active %d %v", e, err)
	}
	st, err = s2.Load()
	if err != nil {
		t.Fatal(err)
	}
	// (The node stored at epoch 0 is no longer the next start's after epoch 1 was taken.)
	if len(st.Apps) != 3000 || st.Apps[0].User != "alice" {
		t.Fatalf("the fenced RM changed the store: %d apps, first %+v", len(st.Apps), st.Apps[0])
	}
	if ok, _, _ := s2.conn.Exists("/rmstore/ZKRMStateRoot/BobbinRoot/node-h9:8041"); ok {
		t.Error("the fenced RM stored a node")
	}
}

// TestJavaZKSplitAndVersion: an application split by the 3.x index (HIERARCHIES) is read
// and written where it is, a new one goes where the index says; a store of another major
// version is refused, naming it.
func TestJavaZKSplitAndVersion(t *testing.T) {
	zks := zktest.Start(t)
	log := testutil.QuietLogger()
	s, err := OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm1", 2, false, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if err := s.PutApp(zkApp(1, "alice", 1)); err != nil {
		t.Fatal(err)
	}
	want := "/rmstore/ZKRMStateRoot/RMAppRoot/HIERARCHIES/2/application_1700000000000_00/01"
	if ok, _, _ := s.conn.Exists(path.Join(want, "appattempt_1700000000000_0001_000001")); !ok {
		t.Fatalf("no attempt under %s", want)
	}
	s.Close()
	s, err = OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm2", 0, false, log)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Load()
	if err != nil || len(st.Apps) != 1 || st.Apps[0].ID != "application_1700000000000_0001" {
		t.Fatalf("split application: %v %+v", err, st)
	}
	a := zkApp(1, "alice", 2)
	a.State = int32(yarnpb.YarnApplicationStateProto_KILLED)
	if err := s.PutApp(a); err != nil {
		t.Fatal(err)
	}
	data, _, _ := s.conn.Get(want)
	var got yarnpb.ApplicationStateDataProto
	if proto.Unmarshal(data, &got); got.GetApplicationState() != yarnpb.RMAppStateProto_RMAPP_KILLED {
		t.Errorf("the split application was not written where it is: %v", got.GetApplicationState())
	}
	b, _ := proto.Marshal(&yarnpb.VersionProto{MajorVersion: proto.Int32(2), MinorVersion: proto.Int32(1)})
	s.conn.Set("/rmstore/ZKRMStateRoot/RMVersionNode", b, -1)
	s.Close()
	if _, err := OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm3", 0, false, log); err == nil || !strings.Contains(err.Error(), "version 2.1") {
		t.Errorf("newer version: %v", err)
	}
}

// TestJavaZKShutOutByTheRootACL: an RM the root's ACL denies creating children (what a
// Java RM that became active sets) has its writes refused as fenced.
func TestJavaZKShutOutByTheRootACL(t *testing.T) {
	zks := zktest.Start(t)
	log := testutil.QuietLogger()
	s, err := OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm1", 0, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	acl := append(zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermAdmin), zk.DigestACL(zk.PermCreate|zk.PermDelete, "other-rm", "secret")...)
	if _, err := s.conn.SetACL("/rmstore/ZKRMStateRoot", acl, -1); err != nil {
		t.Fatal(err)
	}
	if err := s.PutApp(zkApp(1, "alice", 1)); !errors.Is(err, ErrFenced) {
		t.Errorf("write under another RM's ACL: %v, want ErrFenced", err)
	}
}

// TestJavaZKMigratesBobbinsEarlierLayout: BobbinRMStateRoot's applications are moved into
// ZKRMStateRoot once (marked migrated), and the epoch goes on.
func TestJavaZKMigratesBobbinsEarlierLayout(t *testing.T) {
	zks := zktest.Start(t)
	log := testutil.QuietLogger()
	old, err := OpenZK(zks.Addr, "/rmstore", 5*time.Second, "old", log)
	if err != nil {
		t.Fatal(err)
	}
	old.NextEpoch()
	old.NextEpoch()
	if err := old.PutApp(zkApp(1, "alice", 3)); err != nil {
		t.Fatal(err)
	}
	old.Close()
	c := conf.New()
	c.Set(KeyRecovery, "true")
	c.Set(KeyStoreClass, "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore")
	c.Set("hadoop.zk.address", zks.Addr)
	for i := 0; i < 2; i++ { // the second start finds it migrated
		s, err := Open(c, "rm1", log)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Load()
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Apps) != 1 || st.Apps[0].User != "alice" || len(st.Apps[0].Attempts) != 1 {
			t.Fatalf("start %d: %+v", i, st.Apps)
		}
		if e, err := s.NextEpoch(); err != nil || e != int64(2+i) {
			t.Errorf("start %d: epoch %d %v", i, e, err)
		}
		s.Close()
	}
}

// TestJavaZKRootFenceTakesOverFromJava: under high availability the RM that opens the
// store sets the root's ACL as the Java RM does (create and delete for itself alone):
// the RM active before — here one whose ACL a Java RM set — is shut out, and the new one
// writes.
func TestJavaZKRootFenceTakesOverFromJava(t *testing.T) {
	zks := zktest.Start(t)
	log := testutil.QuietLogger()
	old, err := OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm1", 0, true, log)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Load(); err != nil {
		t.Fatal(err)
	}
	if err := old.PutApp(zkApp(1, "alice", 1)); err != nil {
		t.Fatalf("the active's own write: %v", err)
	}
	// A Java RM becomes active: its ACL on the root.
	acl := append(zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermAdmin), zk.DigestACL(zk.PermCreate|zk.PermDelete, "127.0.0.1", "8032:java-secret")...)
	if _, err := old.conn.SetACL("/rmstore/ZKRMStateRoot", acl, -1); err != nil {
		t.Fatal(err)
	}
	if err := old.PutApp(zkApp(1, "alice", 2)); !errors.Is(err, ErrFenced) {
		t.Errorf("the old active's write under the Java RM's ACL: %v, want ErrFenced", err)
	}
	// Bobbin takes over from the Java RM.
	s, err := OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm2", 0, true, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.Load()
	if err != nil || len(st.Apps) != 1 {
		t.Fatalf("%v %+v", err, st)
	}
	if err := s.PutApp(zkApp(2, "bob", 1)); err != nil {
		t.Errorf("the new active's write: %v", err)
	}
	got, _, err := s.conn.GetACL("/rmstore/ZKRMStateRoot")
	if err != nil || len(got) != 2 || got[1].Scheme != "digest" || !strings.HasPrefix(got[1].ID, "rm2:") || got[1].Perms != zk.PermCreate|zk.PermDelete {
		t.Errorf("root ACL %+v %v", got, err)
	}
}

// TestJavaZKWritesAfterLosingTrack: when a write's outcome is unknown (an error after the
// multi may have gone through), what the store holds is read again before the next write:
// znodes that exist are set, not created again.
func TestJavaZKWritesAfterLosingTrack(t *testing.T) {
	zks := zktest.Start(t)
	s, err := OpenJavaZK(zks.Addr, "/rmstore", 5*time.Second, "rm1", 0, false, testutil.QuietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if err := s.PutApp(zkApp(1, "alice", 1)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	delete(s.written, "application_1700000000000_0001") // as flush does after an error
	s.mu.Unlock()
	a := zkApp(1, "alice", 2)
	a.Attempts = append(a.Attempts, AttemptRecord{Attempt: 2, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED),
		AMContainer: "container_1700000000000_0001_02_000001", AMNode: "h1:8041", AMExitStatus: -1000})
	a.Attempts[0].State = int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED)
	if err := s.PutApp(a); err != nil {
		t.Fatalf("the write after losing track: %v", err)
	}
	if kids, _, _ := s.conn.Children("/rmstore/ZKRMStateRoot/RMAppRoot/application_1700000000000_0001"); len(kids) != 2 {
		t.Errorf("attempts %v", kids)
	}
}
