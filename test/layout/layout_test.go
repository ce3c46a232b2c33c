// Package layout checks the import rules that docs/ARCHITECTURE.md draws:
// which role may import which, and that no product package links a test
// kit. It reads the import graph with go list, so it needs the go command.
package layout

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/modexp-token/modexp-token/"

// goList runs go list in the module root with args and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.Bytes())
	}
	var lines []string
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// imports is the module's direct import graph (non-test files), its
// paths relative to the module, under the build tags given.
func imports(t *testing.T, tags string) map[string][]string {
	t.Helper()
	g := map[string][]string{}
	for _, l := range goList(t, "-tags", tags, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		f := strings.Fields(l)
		from := strings.TrimPrefix(f[0], mod)
		for _, to := range f[1:] {
			if rel, ok := strings.CutPrefix(to, mod); ok {
				g[from] = append(g[from], rel)
			}
		}
	}
	return g
}

// under reports whether pkg is p or below it.
func under(pkg, p string) bool { return pkg == p || strings.HasPrefix(pkg, p+"/") }

// isKit reports whether pkg is a test kit: a package in or under a folder
// named *test, one of test/, or the engine tree's CPU-time helper.
func isKit(pkg string) bool {
	for _, dir := range strings.Split(pkg, "/") {
		if strings.HasSuffix(dir, "test") {
			return true
		}
	}
	return under(pkg, "test") || pkg == "engine/internal/cputime"
}

// TestImportRules: each role imports only what is below it. A rule says
// that packages under from import nothing under any of not, except the
// packages listed in but.
func TestImportRules(t *testing.T) {
	rules := []struct {
		from string
		not  []string
		but  []string
		why  string
	}{
		{"keystore", []string{"token", "engine", "cgo", "cmd"}, nil, "the keystore stores bytes and knows no token or engine"},
		{"engine/alg", []string{"engine/guard", "engine/backend", "token"}, nil, "algorithms run over the engine interface, not a backend or the policy"},
		{"engine/arith", []string{"engine/guard", "engine/alg", "engine/backend", "token"}, nil, "arithmetic is the bottom layer"},
		{"engine/backend", []string{"engine/guard", "engine/alg", "token"}, nil, "backends implement the interface and know nothing above it"},
		{"engine/guard", []string{"engine/backend", "token"}, []string{"engine/backend/pool"}, "the guard sees engines through the interface (pool: its members' status)"},
		{"token", []string{"engine/backend", "engine/arith/mont", "cgo", "cmd"}, nil, "the token sees engines only through the guard"},
		{"token/mech", []string{"token"}, []string{"token/attr", "token/ck", "token/config", "token/keywrap", "token/rsapad", "token/internal/aesni"}, "mechanisms see the state only through the seam (token/mech/seam.go)"},
		{"token/attr", []string{"token", "engine"}, []string{"token/ck"}, "the attribute model is a leaf"},
		{"token/internal/aesni", []string{"token", "engine"}, nil, "the AES kernels are a leaf"},
	}
	for _, tags := range []string{"", "modexp_etcd"} {
		for from, tos := range imports(t, tags) {
			for _, r := range rules {
				if !under(from, r.from) {
					continue
				}
				for _, to := range tos {
					if slices.Contains(r.but, to) {
						continue
					}
					for _, n := range r.not {
						if under(to, n) {
							t.Errorf("tags %q: %s imports %s: %s", tags, from, to, r.why)
						}
					}
				}
			}
		}
	}
}

// TestNoKitInProduct: the module and the programs link no test kit (the
// fixed test keys, the conformance suites, the embedded etcd members).
func TestNoKitInProduct(t *testing.T) {
	for _, tags := range []string{"", "modexp_etcd"} {
		for _, dep := range goList(t, "-tags", tags, "-deps", "./cgo", "./cmd/...") {
			if rel, ok := strings.CutPrefix(dep, mod); ok && isKit(rel) {
				t.Errorf("tags %q: a product package depends on the test kit %s", tags, rel)
			}
		}
	}
}
