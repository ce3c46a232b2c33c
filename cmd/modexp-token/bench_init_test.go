package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkInitFree is 'modexp-token init --free --label X' in process, on
// a configuration whose only slot is taken, so that each run adds a slot
// and initialises its token (PINs from the environment, the Argon2id floor
// of freeKDF): the one-line test token of issue 27 (target <= 300 ms with
// the process start, docs/PERFORMANCE.md).
func BenchmarkInitFree(b *testing.B) {
	b.Setenv("MODEXP_TOKEN_SO_PIN", "87654321")
	b.Setenv("MODEXP_TOKEN_PIN", "123456")
	ttyPath = os.DevNull + "/no-tty"
	dir := b.TempDir()
	i := 0
	var errBuf strings.Builder
	for b.Loop() {
		b.StopTimer()
		conf := filepath.Join(dir, strconv.Itoa(i), "modexp-token.toml")
		if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
			b.Fatal(err)
		}
		b.Setenv("MODEXP_TOKEN_CONF", conf)
		i++
		b.StartTimer()
		if code := run([]string{"init", "--free", "--label", "ci"}, io.Discard, &errBuf); code != 0 {
			b.Fatalf("init --free exited with %d: %s", code, errBuf.String())
		}
	}
}
