package aesni

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedUpToDate runs gen_amd64.go into a temporary directory and
// checks that the committed files are what it writes (run go generate
// ./token/internal/aesni if not).
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	dir := t.TempDir()
	if out, err := exec.Command(gobin, "run", "gen_amd64.go", "-dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("go run gen_amd64.go: %v\n%s", err, out)
	}
	for _, name := range []string{"kernel_amd64.s", "kernel_amd64.go", "emu_test.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what gen_amd64.go writes: run go generate ./token/internal/aesni", name)
		}
	}
}
