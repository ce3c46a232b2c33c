package mont

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedKernelsUpToDate runs gen_fixed_amd64.go and
// gen_ifma_amd64.go into a temporary directory and checks that the
// committed files are what they write (run go generate if not).
func TestGeneratedKernelsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	for gen, names := range map[string][]string{
		"gen_fixed_amd64.go": {"kernel_fixed_amd64.s", "kernel_fixed_amd64.go"},
		"gen_ifma_amd64.go gen_ifma8_amd64.go": {"kernel_ifma_amd64.s", "kernel_ifma_amd64.go", "ifma_emu_test.go",
			"kernel_ifma8_amd64.s", "kernel_ifma8_amd64.go", "ifma8_emu_test.go"},
	} {
		dir := t.TempDir()
		args := append(append([]string{"run"}, strings.Fields(gen)...), "-dir", dir)
		cmd := exec.Command(gobin, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go run %s: %v\n%s", gen, err, out)
		}
		for _, name := range names {
			want, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is not what %s writes: run go generate ./engine/arith/mont", name, gen)
			}
		}
	}
}
