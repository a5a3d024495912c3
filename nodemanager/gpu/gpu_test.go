package gpu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// fakeSMI is an nvidia-smi that prints the fixture (nvidia-smi's -q -x schema) when
// called as discovery calls it, and fails otherwise.
func fakeSMI(t *testing.T) string {
	t.Helper()
	xml, err := filepath.Abs("testdata/nvidia-smi-q-x.xml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "nvidia-smi")
	script := "#!/bin/sh\n[ \"$1 $2\" = \"-x -q\" ] || { echo \"unexpected arguments: $*\" >&2; exit 2; }\ncat " + xml + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDiscoverWithNvidiaSMI(t *testing.T) {
	devs, info, err := Discover(context.Background(), Settings{Allowed: "auto", Executable: fakeSMI(t)})
	if err != nil {
		t.Fatal(err)
	}
	// Index is the position in nvidia-smi's list; the minor numbers need not follow it.
	if want := []Device{{0, 0}, {1, 2}}; !reflect.DeepEqual(devs, want) {
		t.Fatalf("devices %v, want %v", devs, want)
	}
	if info.DriverVersion != "570.133.20" || len(info.GPUs) != 2 || info.GPUs[1].UUID != "GPU-8a2e6f10-3c4d-4e7b-9f21-5d8c0b1a2e77" ||
		info.GPUs[1].Memory.Used != "40960 MiB" || info.GPUs[1].Utilization.GPU != "37 %" || info.GPUs[0].Temperature.Current != "29 C" {
		t.Errorf("nvidia-smi's information: %+v", info)
	}
}

func TestDiscoveryFailuresSayWhy(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver' >&2\nexit 9\n"), 0o755)
	if _, _, err := Discover(context.Background(), Settings{Allowed: "auto", Executable: dir}); err == nil || !strings.Contains(err.Error(), "could not communicate") {
		t.Errorf("a failing nvidia-smi: %v", err)
	}
	if _, _, err := Discover(context.Background(), Settings{Allowed: "auto", Executable: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing nvidia-smi was not an error")
	}
	os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte("#!/bin/sh\necho '<nvidia_smi_log><gpu>'\n"), 0o755)
	if _, _, err := Discover(context.Background(), Settings{Allowed: "auto", Executable: dir}); err == nil || !strings.Contains(err.Error(), "XML") {
		t.Errorf("broken XML: %v", err)
	}
}

func TestAllowedList(t *testing.T) {
	devs, err := ParseAllowed("1:3, 0:0")
	if err != nil || !reflect.DeepEqual(devs, []Device{{0, 0}, {1, 3}}) {
		t.Fatalf("%v %v", devs, err)
	}
	for _, bad := range []string{"0", "a:1", "0:0,1:0", "", "-1:2"} {
		if _, err := ParseAllowed(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A container asking for GPUs that an ending container still holds waits for their
// release (the RM frees a killed application's GPUs before the node has stopped its
// containers), and gives up when it is killed meanwhile.
func TestAllocatorWaitsForGPUsBeingReleased(t *testing.T) {
	a := NewAllocator([]Device{{0, 0}, {1, 2}})
	if _, err := a.Assign(context.Background(), "old", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Assign(context.Background(), "too-many", 3); err == nil || a.Waiting() != 0 {
		t.Fatalf("more GPUs than the node has: %v, waiting %d; want a failure at once", err, a.Waiting())
	}
	got := make(chan []Device)
	go func() {
		devs, err := a.Assign(context.Background(), "new", 1)
		if err != nil {
			t.Error(err)
		}
		got <- devs
	}()
	testutil.Eventually(t, 5*time.Second, "the container never waited", func() bool { return a.Waiting() == 1 })
	a.Release("old")
	if devs := <-got; !reflect.DeepEqual(devs, []Device{{0, 0}}) {
		t.Errorf("the waiting container got %v, want GPU 0", devs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	failed := make(chan error)
	go func() {
		_, err := a.Assign(ctx, "killed", 2)
		failed <- err
	}()
	testutil.Eventually(t, 5*time.Second, "the container never waited", func() bool { return a.Waiting() == 1 })
	cancel()
	if err := <-failed; err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("a container killed while it waited: %v, want context.Canceled", err)
	}
	if a.Waiting() != 0 {
		t.Errorf("%d still waiting", a.Waiting())
	}
	if as := a.Assigned(); len(as) != 1 || as[0].Container != "new" {
		t.Errorf("assigned %v, want only the waiting container's GPU", as)
	}
}

func TestAllocatorAssignsLowestFreeAndRestores(t *testing.T) {
	ctx := context.Background()
	a := NewAllocator([]Device{{1, 2}, {0, 0}, {2, 5}})
	a.wait = 0 // too few free fails at once
	got, err := a.Assign(ctx, "c1", 2)
	if err != nil || !reflect.DeepEqual(got, []Device{{0, 0}, {1, 2}}) {
		t.Fatalf("c1: %v %v", got, err)
	}
	if again, _ := a.Assign(ctx, "c1", 2); !reflect.DeepEqual(again, got) {
		t.Errorf("a relaunch got %v, want the same %v", again, got)
	}
	if _, err := a.Assign(ctx, "c2", 2); err == nil {
		t.Error("two GPUs given where one is free")
	}
	if others := a.Others(got); !reflect.DeepEqual(others, []Device{{2, 5}}) {
		t.Errorf("others %v", others)
	}
	a.Release("c1")
	if got, _ := a.Assign(ctx, "c2", 1); !reflect.DeepEqual(got, []Device{{0, 0}}) {
		t.Errorf("c2 after c1 ended: %v", got)
	}
	b := NewAllocator([]Device{{0, 0}, {1, 2}})
	if err := b.Restore("c3", []int{2}); err != nil {
		t.Fatal(err)
	}
	if err := b.Restore("c4", []int{2}); err == nil {
		t.Error("a GPU restored to two containers")
	}
	if err := b.Restore("c4", []int{7}); err == nil {
		t.Error("a GPU the node lacks restored")
	}
	if as := b.Assigned(); len(as) != 1 || as[0].Container != "c3" || as[0].Minor != 2 {
		t.Errorf("assigned %v", as)
	}
}
