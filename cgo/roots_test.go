package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDeadcodeRoots checks that deadcode_roots.go lists every //export of
// the package: an export it misses would look dead to make deadcode.
func TestDeadcodeRoots(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	export := regexp.MustCompile(`(?m)^//export (\w+)$`)
	var exports []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range export.FindAllSubmatch(b, -1) {
			exports = append(exports, string(m[1]))
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "deadcode_roots.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	ast.Inspect(f, func(n ast.Node) bool {
		if cl, ok := n.(*ast.CompositeLit); ok {
			for _, e := range cl.Elts {
				if id, ok := e.(*ast.Ident); ok {
					roots = append(roots, id.Name)
				}
			}
		}
		return true
	})
	slices.Sort(exports)
	slices.Sort(roots)
	if len(exports) == 0 || !slices.Equal(exports, roots) {
		t.Errorf("deadcode_roots.go lists\n%v\nthe package exports\n%v", roots, exports)
	}
}
