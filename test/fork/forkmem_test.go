package fork

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// forkmemWorkers are the numbers of children forkmem.c forks: one alone
// (the first use of a child, undisturbed), and 16 at once (an nginx start
// with 16 workers).
var forkmemWorkers = []string{"1", "16"}

// TestForkStartCost runs forkmem.c: a parent logs in and forks 1, then 16 children
// that each do what a worker does before its first handshake (C_Initialize,
// a session, C_Login, find, one P-256 signature); with all of them alive
// it reads their memory (Rss, Pss) and CPU. Ours runs on a token at the
// default Argon2id cost (not the tests' cheap one) with each pin_cache
// mode, so that the children's logins are what a deployment pays; and
// SoftHSMv2 alongside when it is installed. docs/FORK.md quotes a run; the
// figures are logged, the test checks that every child worked.
func TestForkStartCost(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "forkmem")
	if out, err := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O1", "-o", bin,
		filepath.Join(repoRoot, "test", "fork", "csrc", "forkmem.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	e2e.NeedTool(t, "pkcs11-tool")
	run := func(t *testing.T, env []string, module string) {
		t.Helper()
		for _, k := range forkmemWorkers {
			out, err := e2e.Run(env, 120*time.Second, bin, module, "t", userPIN, "ec", k)
			if err != nil || !strings.Contains(out, "children "+k+" ") {
				t.Fatalf("forkmem: %v\n%s", err, out)
			}
			t.Logf("\n%s", out)
		}
	}
	for _, mode := range []string{"keyring", "process", "off"} {
		t.Run("ours pin_cache="+mode, func(t *testing.T) {
			k := e2e.NewToken(t, "t", "")
			body := "[[slot]]\nlabel = \"t\"\ntoken_file = " + quote(k.File) + "\nengine = \"soft\"\npin_cache = \"" + mode + "\"\n"
			if err := os.WriteFile(k.Conf, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			p11 := func(args ...string) {
				if out, err := e2e.Run(k.Env, 120*time.Second, "pkcs11-tool", append([]string{"--module", libPath}, args...)...); err != nil {
					t.Fatalf("pkcs11-tool %v: %v\n%s", args, err, out)
				}
			}
			p11("--init-token", "--label", "t", "--so-pin", soPIN)
			p11("--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN)
			p11("--login", "--pin", userPIN, "--keypairgen", "--key-type", "EC:prime256v1", "--label", "ec")
			run(t, k.Env, libPath)
		})
	}
	t.Run("SoftHSMv2", func(t *testing.T) {
		module := ""
		for _, c := range []string{"/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so"} {
			if _, err := os.Stat(c); err == nil {
				module = c
			}
		}
		if module == "" {
			t.Skip("SoftHSMv2 not installed")
		}
		dir := t.TempDir()
		conf := filepath.Join(dir, "softhsm2.conf")
		body := "directories.tokendir = " + filepath.Join(dir, "tokens") + "\nobjectstore.backend = file\nlog.level = ERROR\n"
		if err := os.MkdirAll(filepath.Join(dir, "tokens"), 0o700); err != nil || os.WriteFile(conf, []byte(body), 0o600) != nil {
			t.Fatal(err)
		}
		env := append(os.Environ(), "SOFTHSM2_CONF="+conf)
		for _, args := range [][]string{
			{"--init-token", "--slot", "0", "--label", "t", "--so-pin", soPIN, "--init-pin", "--pin", userPIN},
			{"--login", "--pin", userPIN, "--token-label", "t", "--keypairgen", "--key-type", "EC:prime256v1", "--label", "ec"},
		} {
			if out, err := e2e.Run(env, 60*time.Second, "pkcs11-tool", append([]string{"--module", module}, args...)...); err != nil {
				t.Fatalf("pkcs11-tool %v: %v\n%s", args, err, out)
			}
		}
		run(t, env, module)
	})
}

// quote is a TOML basic string.
func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
