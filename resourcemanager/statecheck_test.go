package resourcemanager

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateOwnersKeepTheirLocks: in this package a mutex field is locked only by a method
// of its own type, on its receiver (x.mu.Lock() inside func (x *T)); code that needs
// another owner's state calls that owner's methods (see the package comment's lock order).
func TestStateOwnersKeepTheirLocks(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
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
				if !ok || mu.Sel.Name != "mu" {
					return true
				}
				checked++
				if owner, ok := mu.X.(*ast.Ident); !ok || owner.Name != recv {
					t.Errorf("%s: %s locks another owner's mutex; call a method of its owner instead", fset.Position(call.Pos()), fd.Name.Name)
				}
				return true
			})
		}
	}
	if checked < 20 {
		t.Fatalf("only %d lock calls found: the check does not see the package", checked)
	}
}
