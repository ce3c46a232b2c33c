package token

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// mechanismSide are the files of the mechanism library (seam.go).
var mechanismSide = []string{"mech_*.go", "*_key.go", "pkcs8*.go", "keytype.go", "mechanism.go", "ec_explicit.go", "symstream.go"}

// TestMechanismsSeeOnlyTheSeam: no non-test file of the mechanism side
// names the types slot, object or operation, or reaches an object's
// fields; they go through slotView, opView, keyView and preparedKey.
func TestMechanismsSeeOnlyTheSeam(t *testing.T) {
	fset := token.NewFileSet()
	n := 0
	for _, pat := range mechanismSide {
		files, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			n++
			ast.Inspect(f, func(nd ast.Node) bool {
				switch x := nd.(type) {
				case *ast.StarExpr:
					if id, ok := x.X.(*ast.Ident); ok && (id.Name == "slot" || id.Name == "object" || id.Name == "operation") {
						t.Errorf("%s: names *%s (use slotView, keyView, opView)", fset.Position(x.Pos()), id.Name)
					}
				case *ast.SelectorExpr:
					switch x.Sel.Name {
					case "slot":
						t.Errorf("%s: reaches .slot (use op.view())", fset.Position(x.Pos()))
					case "prepOnce", "prepared", "attrs", "handle", "complete":
						t.Errorf("%s: reaches an object's field (use keyView, preparedKey)", fset.Position(x.Pos()))
					}
				}
				return true
			})
		}
	}
	if n < 40 {
		t.Fatalf("only %d files of the mechanism side found", n)
	}
}
