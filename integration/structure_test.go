package integration

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/bobbin-yarn/bobbin"

// TestDaemonsDoNotImportEachOther: the RM and the NM are each a drop-in on its own, so
// neither daemon's packages import the other's; what both need lives in yarn/, rpc/,
// records/, conf/ and hadoop-proto/. Client libraries and tools do not depend on the
// daemons either.
func TestDaemonsDoNotImportEachOther(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Deps", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := map[string][]string{
		module + "/resourcemanager": {module + "/nodemanager"},
		module + "/nodemanager":     {module + "/resourcemanager"},
		module + "/client":          {module + "/resourcemanager", module + "/nodemanager"},
		module + "/yarn":            {module + "/resourcemanager", module + "/nodemanager", module + "/client", module + "/tools"},
		module + "/rpc":             {module + "/resourcemanager", module + "/nodemanager", module + "/client", module + "/tools", module + "/yarn"},
	}
	under := func(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for root, bad := range forbidden {
			if !under(p.ImportPath, root) {
				continue
			}
			checked++
			for _, d := range p.Deps {
				for _, b := range bad {
					if under(d, b) {
						t.Errorf("%s depends on %s", p.ImportPath, d)
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d packages checked: go list output not understood", checked)
	}
}
