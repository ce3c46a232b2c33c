package mont

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedKernelsUpToDate runs gen_fixed_amd64.go into a temporary
// directory and checks that the committed kernel_fixed_amd64.s and
// kernel_fixed_amd64.go are what it writes (run go generate if not).
func TestGeneratedKernelsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	dir := t.TempDir()
	cmd := exec.Command(gobin, "run", "gen_fixed_amd64.go", "-dir", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run gen_fixed_amd64.go: %v\n%s", err, out)
	}
	for _, name := range []string{"kernel_fixed_amd64.s", "kernel_fixed_amd64.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what gen_fixed_amd64.go writes: run go generate ./engine/internal/mont", name)
		}
	}
}
