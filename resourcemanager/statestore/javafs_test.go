package statestore

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// copyJava273 copies the store an Apache 2.7.3 RM left when killed with pi registered
// (application 2) beside a running distributed shell (application 1) into a new
// directory.
func copyJava273(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-a", "testdata/java-2.7.3/FSRMStateRoot", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	return dir
}

func TestJavaFSReadsApache273Store(t *testing.T) {
	dir := copyJava273(t)
	s, err := OpenJavaFS("file://"+dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.Epoch != 1 || len(st.Apps) != 2 {
		t.Fatalf("epoch %d, %d applications", st.Epoch, len(st.Apps))
	}
	pi := st.Apps[1]
	if pi.ID != "application_1796682305825_0002" || pi.Name != "QuasiMonteCarlo" || pi.Type != "MAPREDUCE" || pi.User != "root" ||
		pi.Queue != "default" || pi.MaxAttempts != 2 || len(pi.AMSpec) == 0 || len(pi.AMResource) == 0 {
		t.Errorf("pi: %+v", pi)
	}
	if pi.State != int32(yarnpb.YarnApplicationStateProto_ACCEPTED) || pi.Final != int32(yarnpb.FinalApplicationStatusProto_APP_UNDEFINED) || len(pi.Failures) != 0 {
		t.Errorf("pi unfinished: state %d final %d failures %v", pi.State, pi.Final, pi.Failures)
	}
	if len(pi.Attempts) != 1 {
		t.Fatalf("attempts %+v", pi.Attempts)
	}
	at := pi.Attempts[0]
	if at.Attempt != 1 || at.State != int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED) ||
		at.AMContainer != "container_1796682305825_0002_01_000001" || at.AMNode != "localhost:8041" || at.AMNodeHTTP != "localhost:8042" || at.StartTime == 0 {
		t.Errorf("attempt %+v", at)
	}
	amrm := st.Keys[KeysAMRM]
	if amrm == nil || len(amrm.Current.Bytes) == 0 || amrm.Next != nil {
		t.Errorf("AMRMToken keys %+v", amrm)
	}
	if len(st.Delegation) != 2 || st.Delegation["key-1"] == nil || len(st.Delegation["key-1"].Bytes) == 0 || st.Delegation["key-1"].ExpiryMs == 0 {
		t.Errorf("delegation %+v", st.Delegation)
	}
	// The Java RM's epoch is the one this RM takes; the next is stored.
	if e, err := s.NextEpoch(); err != nil || e != 1 {
		t.Fatalf("epoch %d %v", e, err)
	}
	if e, _ := s.readEpoch(); e != 2 {
		t.Errorf("stored epoch %d, want 2", e)
	}
}

// TestJavaFSRoundTrip: what Bobbin writes it reads back, and a record written again
// unchanged leaves its file alone.
func TestJavaFSRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenJavaFS(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NextEpoch(); err != nil {
		t.Fatal(err)
	}
	res, _ := proto.Marshal(&yarnpb.ResourceProto{Memory: proto.Int64(512), VirtualCores: proto.Int32(1)})
	spec, _ := proto.Marshal(&yarnpb.ContainerLaunchContextProto{Command: []string{"sleep", "1"}})
	label := "gpu"
	running := &AppRecord{ID: "application_1700000000000_0007", Version: 5, User: "alice", Queue: "root.a", Name: "job", Type: "SPARK",
		Tags: []string{"x"}, Priority: 3, AMResource: res, AMSpec: spec, MaxAttempts: 3, FailuresValidity: 60000,
		State: int32(yarnpb.YarnApplicationStateProto_RUNNING), Final: int32(yarnpb.FinalApplicationStatusProto_APP_UNDEFINED),
		SubmitTime: 1, StartTime: 2, AMLabelExpr: &label, Runtime: 90 * time.Second, Timeouts: map[int32]int64{1: 99999},
		Extra: map[string]int64{ExtraKeepTokens: 1, ExtraLaunchTime: 3},
		Attempts: []AttemptRecord{
			{Attempt: 1, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED), StartTime: 2, FinishTime: 10,
				AMContainer: "container_1700000000000_0007_01_000001", AMNode: "h1:8041", AMNodeHTTP: "h1:8042", AMExitStatus: 1, Diagnostics: "exit 1"},
			{Attempt: 2, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED), StartTime: 10, FinishTime: 20,
				AMContainer: "container_1700000000000_0007_02_000001", AMNode: "h1:8041", AMNodeHTTP: "h1:8042", AMExitStatus: -102},
			{Attempt: 3, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_RUNNING), StartTime: 20, Registered: true,
				Host: "h2", RPCPort: 4040, TrackingURL: "http://h2:4040", ClientKey: []byte("k"),
				AMContainer: "container_1700000000000_0007_03_000001", AMNode: "h2:8041", AMNodeHTTP: "h2:8042", AMExitStatus: -1000},
		},
		Failures: []int64{10}}
	scheduled := &AppRecord{ID: "application_1700000000000_0008", Version: 1, User: "bob", Queue: "default", Name: "n", Type: "YARN",
		MaxAttempts: 2, State: int32(yarnpb.YarnApplicationStateProto_ACCEPTED), AMResource: res,
		Attempts: []AttemptRecord{{Attempt: 1, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_SCHEDULED), StartTime: 5, AMExitStatus: -1000}}}
	done := &AppRecord{ID: "application_1700000000000_0009", Version: 9, User: "bob", Queue: "default", Name: "n", Type: "YARN",
		MaxAttempts: 2, State: int32(yarnpb.YarnApplicationStateProto_FINISHED), Final: int32(yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED),
		FinishTime: 50, Diagnostics: "done", Extra: map[string]int64{ExtraLogAggregation: 4},
		Attempts: []AttemptRecord{{Attempt: 1, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHING), StartTime: 5, FinishTime: 49,
			Registered: true, Unregistered: true, TrackingURL: "http://t", AMContainer: "container_1700000000000_0009_01_000001", AMNode: "h1:8041", AMExitStatus: -1000}}}
	if err := s.PutApps([]*AppRecord{running, scheduled, done}); err != nil {
		t.Fatal(err)
	}
	// A stale version is not written over a newer one.
	stale := *done
	stale.Version, stale.Diagnostics = 8, "old"
	if err := s.PutApp(&stale); err != nil {
		t.Fatal(err)
	}
	appFile := filepath.Join(dir, "FSRMStateRoot/RMAppRoot", running.ID, running.ID)
	before, _ := os.Stat(appFile)
	if err := s.PutApp(running); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(appFile); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an unchanged record was written again")
	}
	// The scheduled attempt has no AM container: no record, as on the Java RM.
	if _, err := os.Stat(filepath.Join(dir, "FSRMStateRoot/RMAppRoot", scheduled.ID, "appattempt_1700000000000_0008_000001")); err == nil {
		t.Error("an attempt without an AM container was stored")
	}

	st, err := (&JavaFS{uri: dir, root: filepath.Join(dir, javaFSRoot), written: map[string]map[string][]byte{}, version: map[string]uint64{}}).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 3 {
		t.Fatalf("%d applications", len(st.Apps))
	}
	got := st.Apps[0]
	for i := range got.Attempts {
		got.Attempts[i].final = 0
	}
	if !reflect.DeepEqual(got, running) {
		t.Errorf("running application:\n got %+v\nwant %+v", got, running)
	}
	if a := st.Apps[1]; len(a.Attempts) != 0 || a.State != int32(yarnpb.YarnApplicationStateProto_ACCEPTED) {
		t.Errorf("scheduled application: %+v", a)
	}
	if a := st.Apps[2]; a.Diagnostics != "done" || a.Final != done.Final || a.State != done.State || a.Extra[ExtraLogAggregation] != 4 ||
		a.Attempts[0].State != int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHING) {
		t.Errorf("finished application: %+v", a)
	}
}

// TestJavaFSReadsWhatJavaRewrote: a record a Java RM wrote again (without Bobbin's
// fields) is read from Java's fields alone: an attempt it is running is LAUNCHED, its
// final state and status come from where Java keeps them, failures are counted from the
// attempts' exit statuses.
func TestJavaFSReadsWhatJavaRewrote(t *testing.T) {
	id := &yarnpb.ApplicationIdProto{Id: proto.Int32(3), ClusterTimestamp: proto.Int64(1700000000000)}
	app, _ := proto.Marshal(&yarnpb.ApplicationStateDataProto{SubmitTime: proto.Int64(1), User: proto.String("u"),
		ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{ApplicationId: id, MaxAppAttempts: proto.Int32(4)},
		ApplicationState:             yarnpb.RMAppStateProto_RMAPP_FINISHED.Enum(), FinishTime: proto.Int64(70)})
	attempt := func(n int32, state *yarnpb.RMAppAttemptStateProto, exit int32, fs yarnpb.FinalApplicationStatusProto) []byte {
		b, _ := proto.Marshal(&yarnpb.ApplicationAttemptStateDataProto{
			AttemptId:       &yarnpb.ApplicationAttemptIdProto{ApplicationId: id, AttemptId: proto.Int32(n)},
			MasterContainer: &yarnpb.ContainerProto{Id: &yarnpb.ContainerIdProto{AppAttemptId: &yarnpb.ApplicationAttemptIdProto{ApplicationId: id, AttemptId: proto.Int32(n)}, Id: proto.Int64(1)}},
			AppAttemptState: state, AmContainerExitStatus: proto.Int32(exit), FinishTime: proto.Int64(int64(n * 10)), FinalApplicationStatus: fs.Enum()})
		return b
	}
	rec, err := decodeJavaApp("app", app, map[string][]byte{
		"a1": attempt(1, yarnpb.RMAppAttemptStateProto_RMATTEMPT_FAILED.Enum(), 1, yarnpb.FinalApplicationStatusProto_APP_FAILED),
		"a2": attempt(2, yarnpb.RMAppAttemptStateProto_RMATTEMPT_FAILED.Enum(), -106, yarnpb.FinalApplicationStatusProto_APP_FAILED),
		"a3": attempt(3, nil, -1000, yarnpb.FinalApplicationStatusProto_APP_UNDEFINED),
		"a4": attempt(4, yarnpb.RMAppAttemptStateProto_RMATTEMPT_FINISHED.Enum(), 0, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != int32(yarnpb.YarnApplicationStateProto_FINISHED) || rec.Final != int32(yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED) {
		t.Errorf("state %d final %d", rec.State, rec.Final)
	}
	// Attempt 3 never stored how it ended: failed, and it counts, with attempt 1's.
	if !reflect.DeepEqual(rec.Failures, []int64{10, 30}) {
		t.Errorf("failures %v", rec.Failures)
	}
	if rec.Attempts[2].State != int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED) {
		t.Errorf("attempt 3 %+v", rec.Attempts[2])
	}

	// Running under a Java RM: its last attempt LAUNCHED, the application ACCEPTED until
	// the AM registers again.
	app, _ = proto.Marshal(&yarnpb.ApplicationStateDataProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{ApplicationId: id}})
	rec, err = decodeJavaApp("app", app, map[string][]byte{"a1": attempt(1, nil, -1000, yarnpb.FinalApplicationStatusProto_APP_UNDEFINED)})
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != int32(yarnpb.YarnApplicationStateProto_ACCEPTED) || rec.Attempts[0].State != int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED) {
		t.Errorf("running: %+v", rec)
	}
	// An unfinished managed attempt without its AM container is not one a Java RM writes.
	b, _ := proto.Marshal(&yarnpb.ApplicationAttemptStateDataProto{AttemptId: &yarnpb.ApplicationAttemptIdProto{ApplicationId: id, AttemptId: proto.Int32(1)}})
	if _, err := decodeJavaApp("app", app, map[string][]byte{"a1": b}); err == nil || !strings.Contains(err.Error(), "no AM container") {
		t.Errorf("attempt without AM container: %v", err)
	}
}

// TestJavaFSRefusesWhatItCannotRead: a newer major version, a damaged record (checksum),
// a record that is not one, an attempt without its application: each stops the store at
// Load, naming the file, and nothing is rewritten.
func TestJavaFSRefusesWhatItCannotRead(t *testing.T) {
	app := "FSRMStateRoot/RMAppRoot/application_1796682305825_0002/application_1796682305825_0002"
	for name, damage := range map[string]func(dir string) string{
		"newer version": func(dir string) string {
			b, _ := proto.Marshal(&yarnpb.VersionProto{MajorVersion: proto.Int32(2), MinorVersion: proto.Int32(0)})
			p := filepath.Join(dir, "FSRMStateRoot", javaVersionNode)
			os.Remove(crcName(p))
			os.WriteFile(p, b, 0o644)
			return "version 2.0"
		},
		"checksum": func(dir string) string {
			p := filepath.Join(dir, app)
			b, _ := os.ReadFile(p)
			b[100] ^= 0xff
			os.WriteFile(p, b, 0o644)
			return "checksum error"
		},
		"truncated at a chunk's end": func(dir string) string {
			p := filepath.Join(dir, app)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:1024], 0o644)
			return "damaged or torn"
		},
		"not a record": func(dir string) string {
			p := filepath.Join(dir, app)
			os.Remove(crcName(p))
			os.WriteFile(p, []byte("\xff\xff\xff garbage"), 0o644)
			return "not an ApplicationStateDataProto"
		},
		"attempt without its application": func(dir string) string {
			p := filepath.Join(dir, app)
			removeHadoopFile(p)
			return "without the application's record"
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyJava273(t)
			want := damage(dir)
			s, err := OpenJavaFS("file://"+dir, dir)
			if err == nil {
				_, err = s.Load()
			}
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("got %v, want an error naming %s and %q", err, dir, want)
			}
		})
	}
}

// TestJavaFSFinishesHalfDoneWrites: a ".new" left by an update stopped before its rename
// replaces the record; a ".tmp" left by a write cut short is dropped, as the Java RM does.
func TestJavaFSFinishesHalfDoneWrites(t *testing.T) {
	dir := copyJava273(t)
	appDir := filepath.Join(dir, "FSRMStateRoot/RMAppRoot/application_1796682305825_0001")
	p := filepath.Join(appDir, "application_1796682305825_0001")
	data, _ := os.ReadFile(p)
	var st yarnpb.ApplicationStateDataProto
	proto.Unmarshal(data, &st)
	st.ApplicationState, st.Diagnostics = yarnpb.RMAppStateProto_RMAPP_KILLED.Enum(), proto.String("killed by user")
	b, _ := proto.Marshal(&st)
	if err := writeHadoopFile(p+".new", b); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(appDir, "appattempt_1796682305825_0001_000002.tmp"), []byte("torn"), 0o644)
	s, err := OpenJavaFS(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	a := loaded.Apps[0]
	if a.State != int32(yarnpb.YarnApplicationStateProto_KILLED) || a.Diagnostics != "killed by user" || len(a.Attempts) != 1 {
		t.Errorf("%+v", a)
	}
	left, _ := filepath.Glob(filepath.Join(appDir, "*.new*"))
	tmp, _ := filepath.Glob(filepath.Join(appDir, "*.tmp*"))
	if left = append(left, tmp...); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}

// TestJavaFSBobbinRecordsGoStaleAfterAJavaRM: the container and NMToken keys and the
// NodeManagers Bobbin keeps in BobbinRoot are its next start's — and the one after, though
// nothing wrote them again — but not after a Java RM started in between: then they are
// left out, and removed once this RM takes its epoch; the labels are kept either way.
func TestJavaFSBobbinRecordsGoStaleAfterAJavaRM(t *testing.T) {
	dir := t.TempDir()
	open := func() (*JavaFS, *State) {
		s, err := OpenJavaFS(dir, dir)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Load()
		if err != nil {
			t.Fatal(err)
		}
		return s, st
	}
	s, _ := open()
	if err := s.PutKeys("container", &KeysRecord{Current: KeyRecord{ID: 4, Bytes: []byte("k")}}); err != nil {
		t.Fatal(err)
	}
	s.NextEpoch()
	s.PutNode(&NodeRecord{ID: "h1:8041"})
	s.PutLabels(&LabelsRecord{Cluster: []string{"gpu"}})
	for restart := 1; restart <= 2; restart++ {
		s, st := open()
		if st.Keys["container"] == nil || len(st.Nodes) != 1 || st.Labels == nil {
			t.Fatalf("Bobbin's restart %d: %+v", restart, st)
		}
		if _, err := s.NextEpoch(); err != nil {
			t.Fatal(err)
		}
	}
	// A Java RM starts on the store: it takes the epoch and stores the next.
	s, st := open()
	if _, err := s.storeEpoch(st.Epoch + 1); err != nil {
		t.Fatal(err)
	}
	s, st = open()
	if st.Keys["container"] != nil || len(st.Nodes) != 0 || st.Labels == nil || st.Labels.Cluster[0] != "gpu" {
		t.Errorf("after a Java RM: keys %v nodes %v labels %v", st.Keys, st.Nodes, st.Labels)
	}
	if err := s.PutKeys("nmtoken", &KeysRecord{Current: KeyRecord{ID: 9, Bytes: []byte("n")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NextEpoch(); err != nil {
		t.Fatal(err)
	}
	_, st = open()
	if st.Keys["container"] != nil || len(st.Nodes) != 0 || st.Keys["nmtoken"] == nil {
		t.Errorf("the stale records came back, or this RM's own went: keys %v nodes %v", st.Keys, st.Nodes)
	}
}

// TestJavaFSMigratesBobbinsEarlierStore: an earlier release's bobbin-rmstore.db in the
// store's directory is written into the Java layout once and renamed; beside a Java store
// with applications of its own it is refused.
func TestJavaFSMigratesBobbinsEarlierStore(t *testing.T) {
	dir := t.TempDir()
	emb, err := OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	emb.NextEpoch()
	emb.NextEpoch() // the earlier RM ran with epoch 1: the next takes 2
	emb.PutKeys("container", &KeysRecord{Current: KeyRecord{ID: 4, Bytes: []byte("k")}})
	emb.PutApp(&AppRecord{ID: "application_1700000000000_0001", Version: 1, User: "u", Queue: "default", Type: "YARN", MaxAttempts: 2,
		State: int32(yarnpb.YarnApplicationStateProto_FINISHED), Final: int32(yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED), FinishTime: 5,
		Attempts: []AttemptRecord{
			{Attempt: 1, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED), FinishTime: 2, AMContainer: "container_1700000000000_0001_01_000001"},
			{Attempt: 2, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FAILED), FinishTime: 3, AMContainer: "container_1700000000000_0001_02_000001"},
			{Attempt: 3, State: int32(yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_FINISHED), FinishTime: 4, AMContainer: "container_1700000000000_0001_03_000001"}},
		Failures: []int64{3}})
	emb.Close()
	// A migration cut short before: it is taken up again, not refused.
	os.WriteFile(filepath.Join(dir, FileName+".migrating"), nil, 0o644)
	s, err := openJavaFSMigrating(dir, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 1 || st.Apps[0].Final != int32(yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED) || st.Epoch != 2 || st.Keys["container"] == nil {
		t.Errorf("migrated: epoch %d, %+v", st.Epoch, st.Apps)
	}
	// The failure that counted still does, the one that did not (a restart's) does not.
	if !reflect.DeepEqual(st.Apps[0].Failures, []int64{3}) {
		t.Errorf("failures after migrating: %v", st.Apps[0].Failures)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".migrated")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".migrating")); err == nil {
		t.Error("the migration's marker was left")
	}

	// Both with applications: refused.
	emb, _ = OpenEmbedded(dir)
	emb.PutApp(&AppRecord{ID: "application_1700000000000_0002", Version: 1, User: "u", Queue: "default", Type: "YARN", MaxAttempts: 2})
	emb.Close()
	if _, err := openJavaFSMigrating(dir, dir, nil); err == nil || !strings.Contains(err.Error(), "refusing to choose") {
		t.Errorf("both: %v", err)
	}
}

// FuzzDecodeJavaApp: no bytes in a store crash the decoder.
func FuzzDecodeJavaApp(f *testing.F) {
	root := "testdata/java-2.7.3/FSRMStateRoot/RMAppRoot/application_1796682305825_0002/"
	app, _ := os.ReadFile(root + "application_1796682305825_0002")
	at, _ := os.ReadFile(root + "appattempt_1796682305825_0002_000001")
	f.Add(app, at)
	f.Add([]byte{}, []byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, app, at []byte) {
		decodeJavaApp("app", app, map[string][]byte{"a": at})
		readDelegationKey(app)
	})
}

// TestLeveldbStoreOfJavaRefused: LeveldbRMStateStore's path holding the Java RM's LevelDB
// (yarn-rm-state) is refused by name, not started beside.
func TestLeveldbStoreOfJavaRefused(t *testing.T) {
	dir := t.TempDir()
	c := conf.New()
	c.Set(KeyRecovery, "true")
	c.Set(KeyStoreClass, "org.apache.hadoop.yarn.server.resourcemanager.recovery.LeveldbRMStateStore")
	c.Set(KeyLevelDBPath, dir)
	s, err := Open(c, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Mkdir(filepath.Join(dir, "yarn-rm-state"), 0o755)
	if _, err := Open(c, "test", nil); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "yarn-rm-state")) {
		t.Errorf("beside the Java RM's LevelDB: %v", err)
	}
}

// TestCheckConfNamesWhatStopsTheStore: bobbin check-config's view of the store's keys,
// without opening anything.
func TestCheckConfNamesWhatStopsTheStore(t *testing.T) {
	for key, want := range map[string][2]string{
		"yarn.resourcemanager.zk-state-store.root-node.acl": {"sasl:rm:cd", "root-node.acl"},
		KeyZKSplitIndex:               {"7", KeyZKSplitIndex},
		"yarn.resourcemanager.zk-acl": {"sasl:rm:rwcda", "yarn.resourcemanager.zk-acl"},
		"hadoop.zk.auth":              {"digest:u:p", "hadoop.zk.auth"},
	} {
		c := conf.New()
		c.Set(KeyRecovery, "true")
		c.Set(KeyStoreClass, "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore")
		c.Set("hadoop.zk.address", "127.0.0.1:1")
		c.Set(key, want[0])
		if err := CheckConf(c); err == nil || !strings.Contains(err.Error(), want[1]) {
			t.Errorf("%s=%s: %v", key, want[0], err)
		}
	}
	c := conf.New()
	c.Set(KeyRecovery, "true")
	c.Set(KeyFSURI, "hdfs://nn:8020/rmstore")
	if err := CheckConf(c); err == nil || !strings.Contains(err.Error(), KeyFSURI) {
		t.Errorf("hdfs: %v", err)
	}
	c.Set(KeyFSURI, "file:///tmp/x")
	if err := CheckConf(c); err != nil {
		t.Errorf("file store: %v", err)
	}
}
