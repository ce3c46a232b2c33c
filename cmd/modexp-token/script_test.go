package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The CLI's script tests: each testdata/script/*.txtar runs modexp-token
// (this test binary, re-executed) against a throwaway token whose
// configuration is in $MODEXP_TOKEN_CONF (one slot "test", software engine,
// fast Argon2id parameters).

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"modexp-token": func() {
			ttyPath = os.DevNull + "/no-tty" // never prompt in tests
			os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
		},
	})
}

// testConf is the default configuration of a script.
const testConf = `[[slot]]
label = "test"
token_file = "token.db"
engine = "soft"
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
`

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			conf := filepath.Join(env.WorkDir, "conf", "modexp-token.toml")
			if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(conf, []byte(testConf), 0o644); err != nil {
				return err
			}
			env.Setenv("MODEXP_TOKEN_CONF", conf)
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "data"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": exits,
		},
	})
}

// exits N CMD ARGS... runs CMD and checks that it exits with code N (its
// output is kept for stdout/stderr, as with exec).
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	if code != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], code, want)
	}
}
