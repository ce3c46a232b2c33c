// Package install tests what a new user meets first: the installation, and
// the module's errors in the system log (syslog_test.go).
//
// The installation: `make install` into a temporary
// DESTDIR (always), and the Debian package built by `make deb` installed on
// this machine, its module loaded by its installed path, then removed
// (only with MODEXP_TEST_DEB=1 as root: `make test-install`, which make test
// runs after the other integration tests, so no other test sees a
// system-wide module meanwhile).
package install

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	return e2e.Root()
}

// run runs a command and returns its combined output, failing the test on
// error.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// makeArgs runs make without rebuilding (the integration tests run after
// make build; -o keeps make from touching the artifacts other tests load).
func makeArgs(target string, vars ...string) []string {
	return append([]string{"--no-print-directory", "-o", "build", "-o", "lib", "-o", "cli", target}, vars...)
}

func multiarch(t *testing.T) string {
	out, err := exec.Command("dpkg-architecture", "-qDEB_HOST_MULTIARCH").Output()
	if err != nil {
		if out, err = exec.Command("gcc", "-print-multiarch").Output(); err != nil {
			t.Fatalf("multiarch: %v", err)
		}
	}
	return strings.TrimSpace(string(out))
}

func TestMakeInstallDestdir(t *testing.T) {
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "build", "libmodexp-pkcs11.so")); err != nil {
		t.Fatalf("not built (run make build): %v", err)
	}
	dest := t.TempDir()
	ma := multiarch(t)
	for _, prefix := range []string{"/usr", "/usr/local"} {
		t.Run(prefix, func(t *testing.T) {
			run(t, root, nil, "make", makeArgs("install", "DESTDIR="+dest, "PREFIX="+prefix)...)
			lib := prefix + "/lib/" + ma + "/pkcs11/libmodexp-pkcs11.so"
			files := []string{lib, prefix + "/share/p11-kit/modules/modexp-token.module",
				prefix + "/bin/modexp-token", prefix + "/bin/modexpd",
				prefix + "/share/man/man1/modexp-token.1", prefix + "/share/man/man1/modexp-token-keys-generate.1",
				prefix + "/share/man/man1/modexpd.1", prefix + "/share/bash-completion/completions/modexp-token",
				prefix + "/share/zsh/vendor-completions/_modexp-token", prefix + "/share/fish/vendor_completions.d/modexp-token.fish",
				prefix + "/lib/systemd/system/modexpd.service"}
			for _, f := range files {
				if _, err := os.Stat(dest + f); err != nil {
					t.Errorf("not installed: %v", err)
				}
			}
			mod, _ := os.ReadFile(dest + prefix + "/share/p11-kit/modules/modexp-token.module")
			if !bytes.Contains(mod, []byte("\nmodule: "+lib+"\n")) {
				t.Errorf("p11-kit module file does not name %s:\n%s", lib, mod)
			}
			unit, _ := os.ReadFile(dest + prefix + "/lib/systemd/system/modexpd.service")
			if !bytes.Contains(unit, []byte("ExecStart="+prefix+"/bin/modexpd serve")) {
				t.Errorf("systemd unit does not start %s/bin/modexpd:\n%s", prefix, unit)
			}
			if out := run(t, root, nil, dest+prefix+"/bin/modexp-token", "--version"); !strings.HasPrefix(out, "modexp-token ") {
				t.Errorf("installed modexp-token --version: %q", out)
			}
			if out := run(t, root, nil, dest+prefix+"/bin/modexpd", "--version"); !strings.HasPrefix(out, "modexpd ") {
				t.Errorf("installed modexpd --version: %q", out)
			}
			run(t, root, nil, "make", "--no-print-directory", "uninstall", "DESTDIR="+dest, "PREFIX="+prefix)
			for _, f := range files {
				if _, err := os.Stat(dest + f); err == nil {
					t.Errorf("left after make uninstall: %s", f)
				}
			}
		})
	}
}

// TestDebianPackage builds the package, installs it with dpkg, lists it with
// p11-kit, makes a token, a key and a signature with pkcs11-tool through the
// installed module path and the installed CLI, and removes the package.
func TestDebianPackage(t *testing.T) {
	if os.Getenv("MODEXP_TEST_DEB") != "1" {
		t.Skip("installs a package system-wide: make test-install (MODEXP_TEST_DEB=1, as root)")
	}
	if os.Getuid() != 0 {
		t.Skip("the package test needs root (dpkg -i); CI runs make test as root")
	}
	if err := exec.Command("dpkg-query", "-W", "modexp-token").Run(); err == nil {
		t.Skip("a modexp-token package is installed on this machine: not replacing it")
	}
	lib := "/usr/lib/" + multiarch(t) + "/pkcs11/libmodexp-pkcs11.so"
	if _, err := os.Stat(lib); err == nil {
		t.Skipf("%s exists (make install PREFIX=/usr?): not replacing it", lib)
	}
	root := repoRoot(t)
	out := run(t, root, nil, "make", makeArgs("deb", "DEB_COMPRESS=-Zgzip -z1")...) // xz takes a minute
	lines := strings.Split(strings.TrimSpace(out), "\n")
	deb := filepath.Join(root, lines[len(lines)-1])
	if !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("make deb did not name the package:\n%s", out)
	}
	t.Logf("built %s", deb)
	run(t, root, nil, "dpkg", "-i", deb)
	t.Log("installed")
	removed := false
	remove := func() {
		if !removed {
			removed = true
			run(t, root, nil, "dpkg", "-r", "modexp-token")
		}
	}
	t.Cleanup(remove)

	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp-token.toml")
	body := "[[slot]]\nlabel = \"deb\"\ntoken_file = \"token.db\"\n" + e2e.CheapKDF
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MODEXP_TOKEN_CONF=" + conf, "MODEXP_TOKEN_LOG=" + filepath.Join(dir, "module.log"),
		"HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "data"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}

	if out := run(t, dir, env, "p11-kit", "list-modules"); !strings.Contains(out, "modexp-token") {
		t.Errorf("p11-kit list-modules does not show the installed module:\n%s", out)
	}
	if out := run(t, dir, env, "/usr/bin/modexp-token", "--version"); !strings.HasPrefix(out, "modexp-token ") {
		t.Errorf("/usr/bin/modexp-token --version: %q", out)
	}
	run(t, dir, env, "pkcs11-tool", "--module", lib, "--init-token", "--label", "deb", "--so-pin", "87654321")
	run(t, dir, env, "pkcs11-tool", "--module", lib, "--login", "--login-type", "so", "--so-pin", "87654321", "--init-pin", "--pin", "123456")
	run(t, dir, append(env, "MODEXP_TOKEN_PIN=123456"), "/usr/bin/modexp-token", "keys", "generate", "--type", "ec:P-256", "--label", "k", "--id", "01")
	msg := filepath.Join(dir, "msg")
	if err := os.WriteFile(msg, []byte("installed"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, dir, env, "pkcs11-tool", "--module", lib, "--login", "--pin", "123456", "--sign", "--id", "01",
		"-m", "ECDSA-SHA256", "-i", msg, "-o", filepath.Join(dir, "sig"))
	if fi, err := os.Stat(filepath.Join(dir, "sig")); err != nil || fi.Size() != 64 {
		t.Errorf("signature through the installed module: %v", err)
	}
	if out := run(t, dir, env, "man", "-w", "modexp-token"); !strings.Contains(out, "modexp-token.1") {
		t.Logf("man -w modexp-token: %s", out) // man-db may be absent in minimal images
	}

	remove()
	for _, f := range []string{lib, "/usr/bin/modexp-token", "/usr/bin/modexpd", "/usr/share/p11-kit/modules/modexp-token.module"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("left after dpkg -r: %s", f)
		}
	}
}
