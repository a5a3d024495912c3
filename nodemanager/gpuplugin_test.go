package nodemanager

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	"github.com/bobbin-yarn/bobbin/container/cgroups"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/gpu"
	"github.com/bobbin-yarn/bobbin/records"
)

func TestGPUSettingsAsJava(t *testing.T) {
	read := func(kv ...string) (*gpu.Settings, error) {
		c := conf.New()
		for i := 0; i+1 < len(kv); i += 2 {
			c.Set(kv[i], kv[i+1])
		}
		return readGPUSettings(c)
	}
	if s, err := read(); s != nil || err != nil {
		t.Fatalf("no plugin: %v %v", s, err)
	}
	s, err := read(keyResourcePlugins, "yarn.io/gpu", keyGPUDiscovery, "/opt/nvidia/bin")
	if err != nil || s == nil || s.Allowed != "auto" || s.Executable != "/opt/nvidia/bin" {
		t.Fatalf("yarn.io/gpu: %+v %v", s, err)
	}
	for _, c := range [][]string{
		{keyResourcePlugins, "yarn.io/fpga"},
		{keyResourcePlugins, "yarn.io/gpu", keyGPUAllowed, "0:0,1"},
	} {
		if _, err := read(c...); err == nil || !strings.Contains(err.Error(), c[len(c)-2]) {
			t.Errorf("%v: %v, want an error naming %s", c, err, c[len(c)-2])
		}
	}
}

// gpuContainer is a container of nm asking for n GPUs.
func gpuContainer(t *testing.T, nm *NodeManager, id int64, n int64, held []int) *containers.Container {
	cid := records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1, ID: 1}, Attempt: 1}, ID: id}
	ident := &yarnpb.ContainerTokenIdentifierProto{ContainerId: cid.Proto(), AppSubmitter: proto.String("alice"),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1),
			ResourceValueMap: []*yarnpb.ResourceInformationProto{{Key: proto.String(gpu.ResourceName), Value: proto.Int64(n)}}}}
	c := containers.New(nm.ctx, containers.Spec{ID: cid, Ident: ident, User: "alice", CLC: &yarnpb.ContainerLaunchContextProto{},
		Dirs: nm.dirsFor(cid, "alice"), GPUs: held})
	if !nm.table.Add(c, nil) {
		t.Fatal("container not added")
	}
	return c
}

// Containers get the free GPUs of lowest index, told by index in their environment, the
// others denied; the GPUs go back at their end, to a container waiting for them; one
// killed while it waits fails; a restarted NodeManager gives a running container back the
// GPUs it recorded.
func TestGPUHookAssignsTellsDeniesAndRestores(t *testing.T) {
	nm := runnerNode(t)
	types := resourcetypes.New(append(resourcetypes.Default().All(), resourcetypes.Type{Name: gpu.ResourceName}))
	g := &gpuPlugin{alloc: gpu.NewAllocator([]gpu.Device{{Index: 0, Minor: 0}, {Index: 1, Minor: 2}}), types: types, index: 2}
	h := gpuHook{g: g, table: nm.table, log: testutil.QuietLogger()}
	ctx := context.Background()
	a, b, none := gpuContainer(t, nm, 2, 1, nil), gpuContainer(t, nm, 3, 1, nil), gpuContainer(t, nm, 4, 0, nil)
	pa, pb, pn := launchPlan{env: map[string]string{}}, launchPlan{env: map[string]string{}}, launchPlan{env: map[string]string{}}
	for _, x := range []struct {
		c *containers.Container
		p *launchPlan
	}{{a, &pa}, {b, &pb}, {none, &pn}} {
		if err := h.Prestart(ctx, x.c, x.p); err != nil {
			t.Fatal(err)
		}
	}
	if pa.env["CUDA_VISIBLE_DEVICES"] != "0" || pb.env["CUDA_VISIBLE_DEVICES"] != "1" || pb.env["NVIDIA_VISIBLE_DEVICES"] != "1" ||
		pb.env["CUDA_DEVICE_ORDER"] != "PCI_BUS_ID" || len(pn.env) != 0 {
		t.Errorf("environments %v %v %v", pa.env, pb.env, pn.env)
	}
	if got := nm.table.GPUsOf(b); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("recorded GPUs of b: %v", got)
	}
	if d := g.denied(b.ID.String()); !reflect.DeepEqual(d, []cgroups.DeviceNumber{{Major: 195, Minor: 0}}) {
		t.Errorf("b is denied %v, want the other GPU", d)
	}
	if d := g.denied(none.ID.String()); len(d) != 2 {
		t.Errorf("a container without GPUs is denied %v, want both", d)
	}
	// A third waits for a GPU, and gets a's at its end.
	third, pt := gpuContainer(t, nm, 5, 1, nil), launchPlan{env: map[string]string{}}
	waited := make(chan error)
	go func() { waited <- h.Prestart(ctx, third, &pt) }()
	testutil.Eventually(t, 5*time.Second, "the third GPU container never waited", func() bool { return g.alloc.Waiting() == 1 })
	h.Stop(a, true)
	if err := <-waited; err != nil || pt.env["CUDA_VISIBLE_DEVICES"] != "0" {
		t.Errorf("the third GPU container, once a ended: %v, environment %v", err, pt.env)
	}
	if held := g.alloc.Held(a.ID.String()); len(held) != 0 {
		t.Errorf("a's GPUs not freed at its end: %v", held)
	}
	// A fourth is killed while it waits.
	killed, cancel := context.WithCancel(ctx)
	cancel()
	if err := h.Prestart(killed, gpuContainer(t, nm, 7, 1, nil), &launchPlan{env: map[string]string{}}); err == nil || !strings.Contains(err.Error(), "Failed to assign GPUs") {
		t.Errorf("a GPU container killed while it waited: %v", err)
	}

	// A restarted NodeManager: b comes back running with its recorded GPU.
	g2 := &gpuPlugin{alloc: gpu.NewAllocator(g.alloc.Devices()), types: types, index: 2}
	back := gpuContainer(t, nm, 6, 1, []int{2})
	gpuHook{g: g2, table: nm.table, log: testutil.QuietLogger()}.Restore(back)
	if held := g2.alloc.Held(back.ID.String()); !reflect.DeepEqual(held, []gpu.Device{{Index: 1, Minor: 2}}) {
		t.Errorf("restored %v", held)
	}
}
