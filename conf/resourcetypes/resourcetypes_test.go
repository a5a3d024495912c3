package resourcetypes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// resource-types.xml and node-resources.xml in a conf dir are read as Hadoop 3.1 reads
// them: types with units and bounds for the RM, amounts with units for the NM.
func TestLoadFromConfDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, kv ...string) {
		var b strings.Builder
		b.WriteString("<configuration>\n")
		for i := 0; i < len(kv); i += 2 {
			b.WriteString("<property><name>" + kv[i] + "</name><value>" + kv[i+1] + "</value></property>\n")
		}
		b.WriteString("</configuration>\n")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("yarn-site.xml", "yarn.scheduler.maximum-allocation-mb", "4096")
	write("resource-types.xml", "yarn.resource-types", "yarn.io/gpu, example.com/scratch",
		"yarn.resource-types.yarn.io/gpu.maximum-allocation", "4", "yarn.resource-types.example.com/scratch.units", "Gi")
	write("node-resources.xml", "yarn.nodemanager.resource-type.yarn.io/gpu", "2", "yarn.nodemanager.resource-type.example.com/scratch", "2048Mi")
	c, _, err := conf.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	types, err := Load(c, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(types.Names(), ","); got != "memory-mb,vcores,yarn.io/gpu,example.com/scratch" {
		t.Fatalf("types %s", got)
	}
	all := types.All()
	if all[0].Max != 4096 || all[2].Max != 4 || all[2].Units != "" || all[3].Units != "Gi" {
		t.Fatalf("types %+v", all)
	}
	offer, err := NodeAmounts(c, types)
	if err != nil {
		t.Fatal(err)
	}
	if offer[2] != 2 || offer[3] != 2 {
		t.Fatalf("node offers %v, want 2 GPUs and 2 Gi of scratch", offer)
	}
	if _, err := Load(c, 3); err == nil || !strings.Contains(err.Error(), "yarn.resource-types") {
		t.Fatalf("four types with room for three: %v", err)
	}
}

func TestConvertAndParse(t *testing.T) {
	for _, c := range []struct {
		v        int64
		from, to string
		want     int64
	}{{1, "Gi", "Mi", 1024}, {1, "G", "Mi", 953}, {2048, "Mi", "Gi", 2}, {5, "", "", 5}, {1, "k", "", 1000}, {1500, "m", "", 1}} {
		got, err := Convert(c.v, c.from, c.to)
		if err != nil || got != c.want {
			t.Errorf("%d%s in %s: %d %v, want %d", c.v, c.from, c.to, got, err, c.want)
		}
	}
	if _, err := Convert(1, "Zi", ""); err == nil {
		t.Error("an unknown unit converted")
	}
	if n, u, err := ParseValue(" 4Gi "); n != 4 || u != "Gi" || err != nil {
		t.Errorf("4Gi: %d %q %v", n, u, err)
	}
	if _, _, err := ParseValue("lots"); err == nil {
		t.Error("lots parsed")
	}
}

// Protos carry memory and vcores in fields 1 and 2 (what 2.x peers read) and, with extra
// types, every type in resource_value_map as a 3.x peer writes it.
func TestProtoRoundTrip(t *testing.T) {
	types := New([]Type{{Name: MemoryName, Units: "Mi"}, {Name: VCoresName}, {Name: GPUName}})
	p := types.Proto([]int64{2048, 2, 1})
	if p.GetMemory() != 2048 || p.GetVirtualCores() != 2 || len(p.GetResourceValueMap()) != 3 || p.GetResourceValueMap()[2].GetKey() != GPUName {
		t.Fatalf("proto %v", p)
	}
	back := make([]int64, 3)
	unknown, err := types.FromProto(p, back)
	if err != nil || len(unknown) != 0 || back[0] != 2048 || back[1] != 2 || back[2] != 1 {
		t.Fatalf("back %v %v %v", back, unknown, err)
	}
	// A 3.x client's memory in the map in other units: fields 1 and 2 win, as in Java.
	in := &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1), ResourceValueMap: []*yarnpb.ResourceInformationProto{
		{Key: proto.String("fpga"), Value: proto.Int64(1)}, {Key: proto.String(GPUName), Value: proto.Int64(3)}}}
	unknown, err = types.FromProto(in, back)
	if err != nil || len(unknown) != 1 || unknown[0] != "fpga" || back[2] != 3 {
		t.Fatalf("from a 3.x ask: %v %v %v", back, unknown, err)
	}
	if p := Default().Proto([]int64{1024, 1}); len(p.GetResourceValueMap()) != 0 {
		t.Fatalf("memory and vcores only: %v", p)
	}
}
