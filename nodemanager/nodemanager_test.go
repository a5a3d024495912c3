package nodemanager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/nmclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// testLog keeps the daemons' logs and prints them only if the test fails.
func testLog(t *testing.T) *logrus.Entry {
	var mu sync.Mutex
	var buf bytes.Buffer
	l := logrus.New()
	l.SetOutput(lockedWriter{&mu, &buf})
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("daemon logs:\n%s", buf.String())
			mu.Unlock()
		}
	})
	return logrus.NewEntry(l)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// cluster is an in-process Bobbin RM and NM with an unmanaged AM registered.
type cluster struct {
	rm  *resourcemanager.ResourceManager
	nm  *NodeManager
	am  *amclient.Client
	att records.AttemptID
	dir string
}

// newCluster starts an RM and a NodeManager; extra are more NodeManager keys and values.
func newCluster(t *testing.T, extra ...string) *cluster {
	t.Helper()
	return newClusterIn(t, t.TempDir(), "", extra...)
}

// newClusterIn is newCluster with the NM's directories under dir and its configuration
// directory confDir (for files beside the keys, such as container-executor.cfg).
func newClusterIn(t *testing.T, dir, confDir string, extra ...string) *cluster {
	t.Helper()
	return newClusterWith(t, dir, confDir, Options{}, extra...)
}

// newClusterWith is newClusterIn with more NodeManager options (its Conf, ConfDir and
// Logger are the cluster's).
func newClusterWith(t *testing.T, dir, confDir string, opts Options, extra ...string) *cluster {
	t.Helper()
	c := conf.New()
	for k, v := range map[string]string{
		"yarn.resourcemanager.address": "127.0.0.1:0", "yarn.resourcemanager.resource-tracker.address": "127.0.0.1:0",
		"yarn.resourcemanager.scheduler.address": "127.0.0.1:0", "yarn.resourcemanager.admin.address": "127.0.0.1:0",
		"yarn.resourcemanager.webapp.address": "127.0.0.1:0", "yarn.scheduler.minimum-allocation-mb": "128",
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "50",
		// The tests' unmanaged AMs each count a minimum allocation against the AM limit,
		// as in Java: room for all of them.
		"yarn.scheduler.capacity.maximum-am-resource-percent": "1",
	} {
		c.Set(k, v)
	}
	log := testLog(t)
	rm, err := resourcemanager.New(resourcemanager.Options{Conf: c, Logger: log.WithField("daemon", "rm")})
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	nc := c.Clone()
	for k, v := range map[string]string{
		"yarn.resourcemanager.resource-tracker.address": rm.TrackerAddr().String(), "yarn.nodemanager.hostname": "127.0.0.1",
		"yarn.nodemanager.address": "127.0.0.1:0", "yarn.nodemanager.webapp.address": "127.0.0.1:0",
		"yarn.nodemanager.local-dirs": filepath.Join(dir, "local"), "yarn.nodemanager.log-dirs": filepath.Join(dir, "logs"),
		"yarn.nodemanager.resource.memory-mb": "2048", "yarn.nodemanager.aux-services": "mapreduce_shuffle", "mapreduce.shuffle.port": "0",
		"yarn.nodemanager.sleep-delay-before-sigkill.ms": "100", "yarn.nodemanager.container-monitor.interval-ms": "100",
	} {
		nc.Set(k, v)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		nc.Set(extra[i], extra[i+1])
	}
	opts.Conf, opts.ConfDir, opts.Logger = nc, confDir, log.WithField("daemon", "nm")
	nm, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := nm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Shutdown(context.Background()) })
	ctx := context.Background()
	cl := rmclient.New(rm.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { cl.Close() })
	na, _ := cl.GetNewApplication(ctx)
	if err := cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), Queue: proto.String("default"), UnmanagedAm: proto.Bool(true)}}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		t.Fatal(err)
	}
	rep, _ := cl.GetApplicationReport(ctx, na.GetApplicationId())
	am := amclient.New(amclient.Options{Addr: rm.SchedulerAddr().String(), Token: token.FromProto(rep.GetAmRmToken()), ConnectRetries: -1, Logger: testutil.QuietLogger()})
	t.Cleanup(func() { am.Close() })
	if _, err := am.Register(ctx, "h", 0, ""); err != nil {
		t.Fatal(err)
	}
	return &cluster{rm: rm, nm: nm, am: am, att: records.AttemptIDFromProto(rep.GetCurrentApplicationAttemptId()), dir: dir}
}

// containers asks for n containers and waits for them.
func (c *cluster) containers(t *testing.T, n int) []*yarnpb.ContainerProto {
	t.Helper()
	c.am.Request(1, "*", 128, 1, int32(n))
	var got []*yarnpb.ContainerProto
	testutil.Eventually(t, 5*time.Second, fmt.Sprintf("fewer than the %d containers asked for", n), func() bool {
		resp, err := c.am.Allocate(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.GetAllocatedContainers()...)
		return len(got) >= n
	})
	return got
}

func (c *cluster) client() *nmclient.Client {
	node := c.nm.NodeID()
	return nmclient.New(node, c.att.String(), c.am.NMToken(node), testutil.QuietLogger())
}

func containerClass(err error) string {
	var re *rpc.RemoteError
	if errors.As(err, &re) {
		return re.Class + ": " + re.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestStartValidatesTokensAndAuxServices(t *testing.T) {
	c := newCluster(t)
	ctrs := c.containers(t, 2)
	nm := c.client()
	defer nm.Close()
	ctx := context.Background()
	clc := &yarnpb.ContainerLaunchContextProto{Command: []string{"sleep 30"}}

	// A forged container token.
	forged := proto.Clone(ctrs[0]).(*yarnpb.ContainerProto)
	forged.ContainerToken.Password = []byte("not the password")
	if _, err := nm.Start(ctx, clc, forged); !strings.Contains(containerClass(err), rpc.ClassInvalidToken) {
		t.Fatalf("forged token: %v", err)
	}
	// An aux service the NM does not run.
	bad := &yarnpb.ContainerLaunchContextProto{Command: []string{"true"}, ServiceData: []*yarnpb.StringBytesMapProto{{Key: proto.String("spark_shuffle"), Value: []byte{}}}}
	if _, err := nm.Start(ctx, bad, ctrs[0]); !strings.Contains(containerClass(err), exceptions.InvalidAuxService+": The auxService:spark_shuffle does not exist") {
		t.Fatalf("aux service: %v", err)
	}
	meta, err := nm.Start(ctx, clc, ctrs[0])
	if err != nil || len(meta["mapreduce_shuffle"]) != 4 {
		t.Fatalf("start: %v %v", meta, err)
	}
	if _, err := nm.Start(ctx, clc, ctrs[0]); !strings.Contains(containerClass(err), "already is running on this node") {
		t.Fatalf("duplicate: %v", err)
	}
	// Another application's NMToken cannot start this app's container.
	other := records.AttemptID{App: records.ApplicationID{ClusterTimestamp: c.att.App.ClusterTimestamp, ID: c.att.App.ID + 1}, Attempt: 1}
	// Without an NMToken the NM refuses the connection, as the Java NM's SASL does.
	anon := nmclient.New(c.nm.NodeID(), other.String(), nil, testutil.QuietLogger())
	defer anon.Close()
	if _, err := anon.Start(ctx, clc, ctrs[1]); !strings.Contains(containerClass(err), "SIMPLE authentication is not enabled.  Available:[TOKEN]") {
		t.Fatalf("no NMToken: %v", err)
	}
	// Stop reports KILLED_BY_APPMASTER and leaves no process.
	if err := nm.Stop(ctx, ctrs[0].GetId()); err != nil {
		t.Fatal(err)
	}
	if st := completeStatus(t, nm, ctrs[0].GetId(), 5*time.Second); st.GetExitStatus() != exitcode.KilledByAppMaster ||
		!strings.Contains(st.GetDiagnostics(), "Container killed by the ApplicationMaster.") {
		t.Fatalf("status %v", st)
	}
}

// A container that fails reports its exit code and the output, and its launch script set
// up the environment and links of the launch contract.
func TestLaunchContract(t *testing.T) {
	c := newCluster(t)
	ctrs := c.containers(t, 1)
	nm := c.client()
	defer nm.Close()
	src := filepath.Join(c.dir, "res.txt")
	os.WriteFile(src, []byte("resource"), 0o644)
	st, _ := os.Stat(src)
	clc := &yarnpb.ContainerLaunchContextProto{
		Environment: []*yarnpb.StringStringMapProto{
			{Key: proto.String("CLASSPATH"), Value: proto.String("$PWD<CPS>{{MY_HOME}}/lib")},
			{Key: proto.String("MY_HOME"), Value: proto.String("/opt/x")},
		},
		LocalResources: []*yarnpb.StringLocalResourceMapProto{{Key: proto.String("dir/res.txt"), Value: &yarnpb.LocalResourceProto{
			Resource: &yarnpb.URLProto{Scheme: proto.String("file"), File: proto.String(src)}, Timestamp: proto.Int64(st.ModTime().UnixMilli()),
			Type: yarnpb.LocalResourceTypeProto_FILE.Enum(), Visibility: yarnpb.LocalResourceVisibilityProto_APPLICATION.Enum()}}},
		Command: []string{`echo $CONTAINER_ID,$USER,$CLASSPATH,$(cat dir/res.txt),$(test -d tmp && echo tmp),$HADOOP_TOKEN_FILE_LOCATION 1><LOG_DIR>/stdout; echo oops >&2; exit 4`},
	}
	if _, err := nm.Start(context.Background(), clc, ctrs[0]); err != nil {
		t.Fatal(err)
	}
	id := records.ContainerIDFromProto(ctrs[0].GetId())
	status := completeStatus(t, nm, ctrs[0].GetId(), 10*time.Second)
	if status.GetExitStatus() != 4 || !strings.Contains(status.GetDiagnostics(), "Exit code: 4") || !strings.Contains(status.GetDiagnostics(), "Error file: prelaunch.err.\nLast 4096 bytes of prelaunch.err :\noops\n") {
		t.Fatalf("status %v", status)
	}
	// A container that was launched has the node's address among its attributes, as the
	// Java NM reports it (the YARN service AM waits for it).
	attrs := map[string]string{}
	for _, a := range status.GetContainerAttributes() {
		attrs[a.GetKey()] = a.GetValue()
	}
	if attrs["HOST"] == "" || net.ParseIP(attrs["IPS"]) == nil {
		t.Errorf("container attributes %v, want IPS and HOST (ContainerStatusPBImpl's keys)", attrs)
	}
	// Its resource was localized (getLocalizationStatuses, 3.3+); a container the node does
	// not have is a failed request.
	if ls, err := nm.LocalizationStatuses(context.Background(), ctrs[0].GetId()); err != nil || len(ls) != 1 || ls[0].GetResourceKey() != "dir/res.txt" ||
		ls[0].GetLocalizationState() != yarnpb.LocalizationStateProto_L_COMPLETED {
		t.Errorf("localization statuses: %v %v", ls, err)
	}
	other := records.ContainerID{Attempt: id.Attempt, ID: 99}
	if _, err := nm.LocalizationStatuses(context.Background(), other.Proto()); err == nil || !strings.Contains(err.Error(), "is not handled by this NodeManager") {
		t.Errorf("localization statuses of a container not here: %v", err)
	}
	out, _ := os.ReadFile(filepath.Join(c.dir, "logs", id.Attempt.App.String(), id.String(), "stdout"))
	fields := strings.Split(strings.TrimSpace(string(out)), ",")
	work := filepath.Join(c.dir, "local", "usercache", "alice", "appcache", id.Attempt.App.String(), id.String())
	if len(fields) != 6 || fields[0] != id.String() || fields[1] != "alice" || fields[2] != work+":/opt/x/lib" || fields[3] != "resource" ||
		fields[4] != "tmp" || fields[5] != work+"/container_tokens" {
		t.Fatalf("container saw %q", out)
	}

	// The launch script's own output and the debugging copies, as a 3.x Java NM leaves them.
	logDir := filepath.Join(c.dir, "logs", id.Attempt.App.String(), id.String())
	if pre, _ := os.ReadFile(filepath.Join(logDir, "prelaunch.out")); string(pre) != "Setting up env variables\nSetting up job resources\nCopying debugging information\nLaunching container\n" {
		t.Errorf("prelaunch.out holds %q", pre)
	}
	script, _ := os.ReadFile(filepath.Join(logDir, "launch_container.sh"))
	info, _ := os.ReadFile(filepath.Join(logDir, "directory.info"))
	if !strings.Contains(string(script), "export CONTAINER_ID=\""+id.String()+"\"") || !strings.Contains(string(info), "./dir/res.txt") {
		t.Errorf("the debugging copies: launch_container.sh %q, directory.info %q", script, info)
	}

	// The NM REST API's account of it.
	web := "http://" + c.nm.HTTPAddress()
	get := func(path string) (int, map[string]any, string) {
		t.Helper()
		resp, err := http.Get(web + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		json.Unmarshal(b, &v)
		return resp.StatusCode, v, string(b)
	}
	code, v, raw := get("/ws/v1/node/containers/" + id.String())
	ci, _ := v["container"].(map[string]any)
	if code != 200 || ci["state"] != "DONE" || ci["exitCode"] != 4.0 || ci["user"] != "alice" || ci["totalMemoryNeededMB"] != 128.0 ||
		ci["nodeId"] != c.nm.NodeID() || ci["containerLogsLink"] != web+"/node/containerlogs/"+id.String()+"/alice" ||
		fmt.Sprint(sortedAny(ci["containerLogFiles"])) != "[directory.info launch_container.sh prelaunch.err prelaunch.out stdout]" {
		t.Errorf("container over REST: %d %s", code, raw)
	}
	if code, v, raw := get("/ws/v1/node/apps/" + id.Attempt.App.String()); code != 200 ||
		!strings.Contains(fmt.Sprint(v["app"].(map[string]any)["containerids"]), id.String()) {
		t.Errorf("app over REST: %d %s", code, raw)
	}
	if code, v, raw := get("/ws/v1/node/info"); code != 200 || v["nodeInfo"].(map[string]any)["totalPmemAllocatedContainersMB"] != 2048.0 ||
		v["nodeInfo"].(map[string]any)["nodeHealthy"] != true || v["nodeInfo"].(map[string]any)["id"] != c.nm.NodeID() {
		t.Errorf("node info: %d %s", code, raw)
	}
	if code, _, body := get("/ws/v1/node/containerlogs/" + id.String() + "/stdout"); code != 200 || body != string(out) {
		t.Errorf("stdout over REST: %d %q", code, body)
	}
	// The web pages: the node, the container log list and one log.
	for path, wants := range map[string][]string{
		"/node":                 {id.String(), "DONE", "/node/containerlogs/" + id.String() + "/alice"},
		"/node/allContainers":   {id.String(), "Exception from container-launch"},
		"/node/allApplications": {`href="/node/application/` + id.Attempt.App.String() + `"`, `href="/node/container/` + id.String() + `"`},
		// The Java NM's pages of one application and one container, and its link home.
		"/node/application/" + id.Attempt.App.String():         {"alice", `href="/node/container/` + id.String() + `"`, "RM Home", "/cluster/app/" + id.Attempt.App.String()},
		"/node/container/" + id.String():                       {`href="/node/application/` + id.Attempt.App.String() + `"`, "DONE", "stdout", "Exception from container-launch"},
		"/node/containerlogs/" + id.String() + "/alice":        {`href="/node/containerlogs/` + id.String() + `/alice/stdout"`},
		"/node/containerlogs/" + id.String() + "/alice/stdout": {`<pre class="log">` + strings.TrimSpace(string(out))},
	} {
		code, _, body := get(path)
		for _, w := range wants {
			if code != 200 || !strings.Contains(body, w) {
				t.Errorf("%s: %d, lacks %q:\n%.2000s", path, code, w, body)
			}
		}
	}
	for path, want := range map[string]int{
		"/node/containerlogs/container_1_0001_01_000009/alice": 404, "/node/containerlogs/bogus/alice": 400,
		"/node/container/container_1_0001_01_000009": 404, "/node/container/bogus": 400, "/node/application/application_1_0042": 404,
		"/ws/v1/node/containers/container_1_0001_01_000009": 404, "/ws/v1/node/containers/bogus": 400,
		"/ws/v1/node/apps/application_1_0042": 404, "/ws/v1/node/apps?state=BOGUS": 400,
		"/ws/v1/node/containerlogs/" + id.String() + "/nothere": 404, "/ws/v1/node/containerlogs/" + id.String() + "/%2e%2e": 400,
	} {
		// Errors of the JSON resources are RemoteExceptions; a log file's are text.
		if code, v, raw := get(path); code != want || strings.HasPrefix(path, "/ws/") && !strings.Contains(path, "containerlogs") && v["RemoteException"] == nil {
			t.Errorf("%s: %d %s, want %d", path, code, raw, want)
		}
	}
}

// A resource that cannot be fetched fails its container before it runs, and
// getLocalizationStatuses says so, with the reason.
func TestLocalizationFailureIsReported(t *testing.T) {
	c := newCluster(t)
	ctrs := c.containers(t, 1)
	nm := c.client()
	defer nm.Close()
	missing := filepath.Join(c.dir, "not-there.txt")
	clc := &yarnpb.ContainerLaunchContextProto{
		LocalResources: []*yarnpb.StringLocalResourceMapProto{{Key: proto.String("job.jar"), Value: &yarnpb.LocalResourceProto{
			Resource: &yarnpb.URLProto{Scheme: proto.String("file"), File: proto.String(missing)}, Timestamp: proto.Int64(1),
			Type: yarnpb.LocalResourceTypeProto_FILE.Enum(), Visibility: yarnpb.LocalResourceVisibilityProto_APPLICATION.Enum()}}},
		Command: []string{"true"},
	}
	if _, err := nm.Start(context.Background(), clc, ctrs[0]); err != nil {
		t.Fatal(err)
	}
	if st := completeStatus(t, nm, ctrs[0].GetId(), 10*time.Second); !strings.Contains(st.GetDiagnostics(), "Resource localization failed") || len(st.GetContainerAttributes()) != 0 {
		t.Fatalf("status %v (a container never launched has no address)", st)
	}
	ls, err := nm.LocalizationStatuses(context.Background(), ctrs[0].GetId())
	if err != nil || len(ls) != 1 || ls[0].GetResourceKey() != "job.jar" || ls[0].GetLocalizationState() != yarnpb.LocalizationStateProto_L_FAILED ||
		!strings.Contains(ls[0].GetDiagnostics(), "Resource localization failed") {
		t.Errorf("localization statuses: %v %v", ls, err)
	}
}

// A container whose processes outgrow its allocation is killed with KILLED_EXCEEDED_PMEM.
func TestMemoryLimitKillsContainer(t *testing.T) {
	c := newCluster(t)
	ctrs := c.containers(t, 1) // 128 MB
	nm := c.client()
	defer nm.Close()
	// tail keeps its newline-free input in memory: ~400 MB resident.
	clc := &yarnpb.ContainerLaunchContextProto{Command: []string{"head -c 400000000 /dev/zero | tail"}}
	if _, err := nm.Start(context.Background(), clc, ctrs[0]); err != nil {
		t.Fatal(err)
	}
	st := c.completedStatus(t, nm, ctrs[0].GetId(), 20*time.Second)
	if st.GetExitStatus() != exitcode.KilledExceededPmem || !strings.Contains(st.GetDiagnostics(), "is running beyond physical memory limits") ||
		!strings.Contains(st.GetDiagnostics(), "of 128.0 MB physical memory used") {
		t.Fatalf("status %v", st)
	}
}

// completedStatus waits for a container's completed status, as the NodeManager answers
// getContainerStatuses or, should the NM have been told to forget it already, as the RM
// passed it on to the AM.
func (c *cluster) completedStatus(t *testing.T, nm *nmclient.Client, id *yarnpb.ContainerIdProto, timeout time.Duration) *yarnpb.ContainerStatusProto {
	t.Helper()
	var got *yarnpb.ContainerStatusProto
	testutil.Eventually(t, timeout, fmt.Sprintf("container %d not complete", id.GetId()), func() bool {
		if st, err := nm.Status(context.Background(), id); err == nil && st.GetState() == yarnpb.ContainerStateProto_C_COMPLETE {
			got = st
			return true
		}
		resp, _ := c.am.Allocate(context.Background(), 0)
		for _, done := range resp.GetCompletedContainerStatuses() {
			if done.GetContainerId().GetId() == id.GetId() {
				got = done
				return true
			}
		}
		return false
	})
	return got
}

// completeStatus waits for a container's completed status as its NodeManager answers it.
func completeStatus(t *testing.T, nm *nmclient.Client, id *yarnpb.ContainerIdProto, within time.Duration) *yarnpb.ContainerStatusProto {
	t.Helper()
	var got *yarnpb.ContainerStatusProto
	testutil.Eventually(t, within, fmt.Sprintf("container %d not complete", id.GetId()), func() bool {
		st, err := nm.Status(context.Background(), id)
		got = st
		return err == nil && st.GetState() == yarnpb.ContainerStateProto_C_COMPLETE
	})
	return got
}

func TestDiskHealth(t *testing.T) {
	dir := t.TempDir()
	notADir := filepath.Join(dir, "file")
	os.WriteFile(notADir, nil, 0o644)
	c := conf.New()
	c.Set("yarn.nodemanager.local-dirs", filepath.Join(dir, "good")+","+notADir)
	c.Set("yarn.nodemanager.log-dirs", filepath.Join(notADir, "logs"))
	nm, err := New(Options{Conf: c, Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	h := nm.checkDisks()
	if len(h.goodLocal) != 1 || len(h.goodLog) != 0 || h.healthy() ||
		!strings.Contains(h.report, "1/2 local-dirs are bad: "+notADir) || !strings.Contains(h.report, "1/1 log-dirs are bad") {
		t.Fatalf("%+v", h)
	}
	c.Set("yarn.nodemanager.log-dirs", filepath.Join(dir, "logs"))
	c.Set("yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb", "999999999")
	nm, _ = New(Options{Conf: c, Logger: testutil.QuietLogger()})
	if h := nm.checkDisks(); h.healthy() || !strings.Contains(h.report, "free space below limit of 999999999MB") {
		t.Fatalf("%+v", h)
	}
}

// idleOwnerHost reads the real host's memory and disks but an owner that uses no CPU:
// the counters move as an idle machine's since start, so the containers' own usage is all
// the load the meter sees, however busy the test machine is.
func idleOwnerHost(start time.Time) func([]string) (borrowed.Host, error) {
	return func(dirs []string) (borrowed.Host, error) {
		h, err := borrowed.ReadHost("/proc", dirs)
		if err != nil {
			return h, err
		}
		h.CPUBusy, h.CPUTotal = 0, time.Since(start)*time.Duration(h.Cores)
		return h, nil
	}
}

// TestBorrowedEvictionIsPreempted: in borrowed mode a container that uses more CPU than
// its vcores allow (container-cpu-ratio) is evicted with PREEMPTED and a diagnostic; the
// measurements are served over time at /ws/v1/node/borrowed and as metrics; the RM shows
// the node's measured capacity and automatic labels.
func TestBorrowedEvictionIsPreempted(t *testing.T) {
	c := newClusterWith(t, t.TempDir(), "", Options{ReadHost: idleOwnerHost(time.Now())}, "bobbin.nodemanager.borrowed.enabled", "true", "bobbin.nodemanager.borrowed.interval-ms", "100",
		"bobbin.nodemanager.borrowed.window-ms", "500", "bobbin.nodemanager.borrowed.container-cpu-ratio", "0.5",
		"bobbin.nodemanager.borrowed.evict-external-cpu", "0", "bobbin.nodemanager.borrowed.leave-below", "0",
		"bobbin.nodemanager.borrowed.rejoin-above", "0", "bobbin.nodemanager.borrowed.disk-min-free-mb", "0",
		"bobbin.nodemanager.auto-labels.enabled", "true", "bobbin.nodemanager.auto-labels.high-mem-mb", "1")
	ctrs := c.containers(t, 1)
	nm := c.client()
	defer nm.Close()
	// A busy loop: a whole core, far over what 1 of 8 vcores stands for.
	if _, err := nm.Start(context.Background(), &yarnpb.ContainerLaunchContextProto{Command: []string{"while :; do :; done"}}, ctrs[0]); err != nil {
		t.Fatal(err)
	}
	if st := c.completedStatus(t, nm, ctrs[0].GetId(), 20*time.Second); st.GetExitStatus() != exitcode.Preempted ||
		!strings.Contains(st.GetDiagnostics(), "evicted by the NodeManager of a borrowed node") || !strings.Contains(st.GetDiagnostics(), "vcores stand for") {
		t.Fatalf("status %v", st)
	}
	get := func(path string) string {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", c.nm.httpPort, path))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var hist struct {
		Borrowed struct {
			Enabled bool
			History []struct {
				JobCPU  float64  `json:"jobCpuShare"`
				VCores  int32    `json:"schedulableVCores"`
				Evicted []string `json:"evicted"`
				Labels  []string `json:"labels"`
			}
		}
	}
	if err := json.Unmarshal([]byte(get("/ws/v1/node/borrowed")), &hist); err != nil || !hist.Borrowed.Enabled || len(hist.Borrowed.History) < 2 {
		t.Fatalf("history %+v %v", hist, err)
	}
	evicted, busy := false, false
	for _, p := range hist.Borrowed.History {
		evicted = evicted || len(p.Evicted) == 1 && p.Evicted[0] == records.ContainerIDFromProto(ctrs[0].GetId()).String()
		busy = busy || p.JobCPU > 0.05
	}
	if !evicted || !busy {
		t.Errorf("history does not show the busy container and its eviction: %+v", hist.Borrowed.History)
	}
	if m := get("/metrics?format=json"); !strings.Contains(m, `"nm.borrowed.Evictions":{"count":1}`) || !strings.Contains(m, "nm.borrowed.ExternalCpuShare") {
		t.Errorf("metrics: %s", m)
	}
	cl := rmclient.New(c.rm.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer cl.Close()
	testutil.Eventually(t, 5*time.Second, "the RM does not show the node's automatic label high_mem", func() bool {
		nodes, err := cl.GetClusterNodes(context.Background())
		// high_load may come too on a busy machine.
		return err == nil && len(nodes) == 1 && slices.Contains(nodes[0].GetNodeLabels(), "high_mem")
	})
}

// The mapreduce.shuffle.* keys reach the shuffle; an HTTPS shuffle is refused by name.
func TestShuffleSettings(t *testing.T) {
	c := conf.New()
	c.Set("mapreduce.shuffle.max.connections", "7")
	c.Set("mapreduce.shuffle.connection-keep-alive.enable", "true")
	c.Set("mapreduce.shuffle.connection-keep-alive.timeout", "9")
	s, err := readShuffleSettings(c)
	if err != nil || s.MaxConnections != 7 || !s.KeepAlive || s.KeepAliveTimeout != 9*time.Second || s.BufferSize != 131072 {
		t.Fatalf("settings %+v, %v", s, err)
	}
	c.Set("mapreduce.shuffle.ssl.enabled", "true")
	c.Set("mapreduce.shuffle.max.threads", "-1")
	_, err = readShuffleSettings(c)
	if err == nil || !strings.Contains(err.Error(), "mapreduce.shuffle.ssl.enabled") || !strings.Contains(err.Error(), "mapreduce.shuffle.max.threads") {
		t.Fatalf("want both bad keys named: %v", err)
	}
}

// Recovery needs a fixed NodeManager port: a restarted NodeManager must come back as the
// same node. The refusal names the key, as the Java NM's does.
func TestRecoveryNeedsAFixedPort(t *testing.T) {
	c := conf.New()
	c.Set("yarn.nodemanager.recovery.enabled", "true")
	c.Set("yarn.nodemanager.address", "127.0.0.1:0")
	_, err := ReadSettings(c)
	if err == nil || !strings.Contains(err.Error(), "yarn.nodemanager.address") || !strings.Contains(err.Error(), "ephemeral") {
		t.Fatalf("recovery with port 0: %v", err)
	}
	c.Set("yarn.nodemanager.address", "127.0.0.1:45454")
	s, err := ReadSettings(c)
	if err != nil || !s.Recovery || !strings.HasSuffix(s.RecoveryDir, "yarn-nm-recovery") {
		t.Fatalf("recovery with a fixed port: %+v %v", s.Recovery, err)
	}
}

// sortedAny is a JSON list of strings in order.
func sortedAny(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	sort.Strings(out)
	return out
}
