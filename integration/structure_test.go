package integration

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	// The RM in layers that only call downward: the engine and the state at the bottom,
	// then the core (loops, lifecycles), then the protocol services and the web, and the
	// root package that wires them together on top.
	rmLayer := map[string]int{
		module + "/resourcemanager/scheduler":  0,
		module + "/resourcemanager/statestore": 0,
		module + "/resourcemanager/labelstore": 0,
		module + "/resourcemanager/haelector":  0,
		// The parts the core drives: the heartbeat's and a node's phase facts, the web
		// proxy, log retention, token renewal, delegation tokens (kept in the store), and
		// the engine's simulator.
		module + "/resourcemanager/nmheartbeat":   0,
		module + "/resourcemanager/nmphase":       0,
		module + "/resourcemanager/webproxy":      0,
		module + "/resourcemanager/logretention":  0,
		module + "/resourcemanager/tokenrenewer":  0,
		module + "/resourcemanager/delegation":    1,
		module + "/resourcemanager/scheduler/sim": 1,
		module + "/resourcemanager/rmstate":       1,
		module + "/resourcemanager/rmcore":        2,
		module + "/resourcemanager/rmservice":     3,
		module + "/resourcemanager/rmweb":         3,
		module + "/resourcemanager/rmha":          3,
		module + "/resourcemanager":               4,
	}
	// The NM as the RM: its parts at the bottom (the localizer, the shuffle, the
	// borrowed-node meter, the recovery store), then the owner of its containers and
	// applications, then ContainerManagementProtocol and the web port as adapters over
	// it, and the daemon that runs the containers and wires the adapters on top.
	nmLayer := map[string]int{
		module + "/nodemanager/localizer":   0,
		module + "/nodemanager/shuffle":     0,
		module + "/nodemanager/borrowed":    0,
		module + "/nodemanager/auxservices": 0,
		module + "/nodemanager/launch":      0,
		module + "/nodemanager/gpu":         0, // nvidia-smi discovery and the allocator: no NM package below it
		module + "/nodemanager/nmstore":     1, // it records the localizer's cached resources
		// A Java auxiliary service in its helper JVM is one of the services.
		module + "/nodemanager/auxservices/javahost": 1,
		module + "/nodemanager/containers":           2,
		module + "/nodemanager/nmservice":            3,
		module + "/nodemanager/nmweb":                3,
		// Log aggregation uploads what the table's applications left.
		module + "/nodemanager/logaggregation": 3,
		module + "/nodemanager":                4,
	}
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
		for daemon, layers := range map[string]map[string]int{"RM": rmLayer, "NM": nmLayer} {
			top := module + "/resourcemanager"
			if daemon == "NM" {
				top = module + "/nodemanager"
			}
			if _, ok := layers[p.ImportPath]; !ok && under(p.ImportPath, top) && !strings.HasSuffix(p.ImportPath, ".test") {
				t.Errorf("%s has no layer: place it in the %s's layers (a package no one places is a package no one checks)", p.ImportPath, daemon)
			}
			if layer, ok := layers[p.ImportPath]; ok {
				for _, d := range p.Deps {
					if l, ok := layers[d]; ok && l >= layer {
						t.Errorf("%s (layer %d) depends on %s (layer %d): the %s's layers call only downward", p.ImportPath, layer, d, l, daemon)
					}
				}
			}
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

// TestStateOwnersKeepTheirLocks: a mutex field — any field of type sync.Mutex or
// sync.RWMutex, whatever its name — is locked only by a method of its own type, on its
// receiver (x.mu.Lock() inside func (x *T)); code that needs another owner's state calls
// that owner's methods (resourcemanager/rmstate's package comment gives the lock order).
func TestStateOwnersKeepTheirLocks(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "hadoop-proto" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		af, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, af)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The mutex fields, by name.
	mutexes := map[string]bool{}
	for _, af := range files {
		ast.Inspect(af, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, f := range st.Fields.List {
				sel, ok := f.Type.(*ast.SelectorExpr)
				if pkg, isIdent := selX(sel); !ok || !isIdent || pkg != "sync" || (sel.Sel.Name != "Mutex" && sel.Sel.Name != "RWMutex") {
					continue
				}
				for _, name := range f.Names {
					mutexes[name.Name] = true
				}
			}
			return true
		})
	}
	if len(mutexes) < 5 {
		t.Fatalf("only %d mutex fields found: the check does not see the module", len(mutexes))
	}
	checked := 0
	for _, af := range files {
		for _, decl := range af.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			recv := ""
			if fd.Recv != nil && len(fd.Recv.List) > 0 && len(fd.Recv.List[0].Names) > 0 {
				recv = fd.Recv.List[0].Names[0].Name
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Lock" && sel.Sel.Name != "RLock") {
					return true
				}
				mu, ok := sel.X.(*ast.SelectorExpr)
				if !ok || !mutexes[mu.Sel.Name] {
					return true
				}
				checked++
				if owner, ok := mu.X.(*ast.Ident); !ok || owner.Name != recv {
					t.Errorf("%s: %s locks another owner's mutex (%s); call a method of its owner instead", fset.Position(call.Pos()), fd.Name.Name, mu.Sel.Name)
				}
				return true
			})
		}
	}
	if checked < 50 {
		t.Fatalf("only %d lock calls found: the check does not see the module", checked)
	}
}

// selX is the package name a selector's X names, if it is an identifier.
func selX(sel *ast.SelectorExpr) (string, bool) {
	if sel == nil {
		return "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

// TestNoLargeFiles: a file does one job. Past ~600 lines a file is worth a look (the test
// names it, as a hint); past 1,000 it has surely grown more than one job, and fails.
// Files are split by job, never at a line count.
func TestNoLargeFiles(t *testing.T) {
	const hint, limit = 600, 1000
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch n := strings.Count(string(b), "\n"); {
		case n > limit:
			t.Errorf("%s has %d lines: more than one job; split it by job", path, n)
		case n > hint:
			t.Logf("%s has %d lines: worth a look (does it do one job?)", path, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLifecyclesMoveInOnePlace: an application's, an attempt's, a node's and a
// NodeManager container's state change only through their state machines (a lifecycle.go each, a
// table of allowed moves): the state fields are unexported, so no other package can
// assign them, and in their own package only the lifecycle file does. A record restored
// from the RM's state store is built with its stored state (persist.go), a container with
// its first phase (container.go), as the state machine's start.
func TestLifecyclesMoveInOnePlace(t *testing.T) {
	homes := []struct {
		dir, field, home string
		restore          []string // files that may build a value with its state
	}{
		{"../resourcemanager/rmstate", "state", "lifecycle.go", []string{"persist.go"}},
		{"../resourcemanager/rmstate", "phase", "containerlifecycle.go", nil},
		// A container starts Accepted (container.go: New).
		{"../nodemanager/containers", "phase", "lifecycle.go", []string{"container.go"}},
	}
	fset := token.NewFileSet()
	for _, h := range homes {
		entries, err := os.ReadDir(h.dir)
		if err != nil {
			t.Fatal(err)
		}
		moves := 0
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, filepath.Join(h.dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == h.field {
							if name != h.home {
								t.Errorf("%s: assigns .%s outside %s: move it through its state machine", fset.Position(n.Pos()), h.field, h.home)
							}
							moves++
						}
					}
				case *ast.KeyValueExpr:
					if k, ok := n.Key.(*ast.Ident); ok && k.Name == h.field && name != h.home && !slices.Contains(h.restore, name) {
						t.Errorf("%s: builds a value with its .%s outside %s", fset.Position(n.Pos()), h.field, h.home)
					}
				}
				return true
			})
		}
		if moves == 0 {
			t.Errorf("%s: no assignment of .%s found in %s: the check does not see the state machine", h.dir, h.field, h.home)
		}
	}
}
