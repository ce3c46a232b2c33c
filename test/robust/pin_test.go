package robust

import (
	"bytes"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// helperLogin runs `robusthelper login PIN` (a separate process) and
// returns the CKR name it got.
func helperLogin(t *testing.T, k *tok, pin string) string {
	t.Helper()
	cmd := exec.Command(helperBin, "login", pin)
	cmd.Env = k.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("robusthelper login: %v\n%s", err, out)
	}
	return strings.TrimSpace(strings.TrimPrefix(string(out), "login "))
}

// userFlags returns the user PIN flags of C_GetTokenInfo, read in this
// process (package token) and, when available, by pkcs11-tool -T through
// the module; both must agree.
func userFlags(t *testing.T, k *tok) []string {
	t.Helper()
	x := loadModule(t, k)
	ti, err := x.m.TokenInfo(x.slot)
	x.m.Close()
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, f := range []struct {
		bit  uint64
		name string
	}{{ck.CKF_USER_PIN_COUNT_LOW, "user PIN count low"}, {ck.CKF_USER_PIN_FINAL_TRY, "final user PIN try"},
		{ck.CKF_USER_PIN_LOCKED, "user PIN locked"}} {
		if ti.Flags&f.bit != 0 {
			flags = append(flags, f.name)
		}
	}
	if _, err := exec.LookPath("pkcs11-tool"); err == nil && libErr == nil {
		cmd := exec.Command("pkcs11-tool", "--module", libPath, "-T")
		cmd.Env = k.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pkcs11-tool -T: %v\n%s", err, out)
		}
		for _, name := range []string{"user PIN count low", "final user PIN try", "user PIN locked"} {
			in := strings.Contains(string(out), name)
			want := strings.Contains(strings.Join(flags, ","), name)
			if in != want {
				t.Fatalf("pkcs11-tool -T and C_GetTokenInfo disagree on %q:\n%s", name, out)
			}
		}
	}
	return flags
}

func wantFlags(t *testing.T, k *tok, want ...string) {
	t.Helper()
	if got := userFlags(t, k); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("user PIN flags %q, want %q", got, want)
	}
}

// TestPINLockoutAcrossProcesses makes wrong logins from two different
// processes (robusthelper through package token, and the CLI) and checks
// that the count is shared through the token file: the flags of
// C_GetTokenInfo (read in-process and by pkcs11-tool through the module),
// the lockout after max_pin_tries, the right PIN refused once locked (also
// through the module), and the SO's reset.
func TestPINLockoutAcrossProcesses(t *testing.T) {
	k := newTok(t, "max_pin_tries = 4\n")
	k.initToken(t)
	wrong := k.with("MODEXP_TOKEN_PIN=wrong-pin")
	wantFlags(t, k)

	if got := helperLogin(t, k, "wrong-pin"); got != "CKR_PIN_INCORRECT" {
		t.Fatalf("wrong PIN: %s", got)
	}
	if out, err := k.cli(wrong, "keys", "list"); err == nil || !strings.Contains(out, "PIN_INCORRECT") {
		t.Fatalf("CLI with a wrong PIN: %v\n%s", err, out)
	}
	wantFlags(t, k, "user PIN count low")
	// The right PIN resets the count.
	if got := helperLogin(t, k, userPIN); got != "CKR_OK" {
		t.Fatalf("right PIN: %s", got)
	}
	wantFlags(t, k)

	for i := range 3 {
		if got := helperLogin(t, k, "wrong-pin"); got != "CKR_PIN_INCORRECT" {
			t.Fatalf("wrong PIN %d: %s", i, got)
		}
	}
	wantFlags(t, k, "user PIN count low", "final user PIN try")
	if out, err := k.cli(wrong, "keys", "list"); err == nil || !strings.Contains(out, "PIN_INCORRECT") {
		t.Fatalf("CLI with the 4th wrong PIN: %v\n%s", err, out)
	}
	wantFlags(t, k, "user PIN locked")

	// Locked: the right PIN is refused by every process.
	if got := helperLogin(t, k, userPIN); got != "CKR_PIN_LOCKED" {
		t.Fatalf("right PIN while locked (package token): %s", got)
	}
	if out, err := k.cli(k.env, "keys", "list"); err == nil || !strings.Contains(out, "PIN_LOCKED") {
		t.Fatalf("right PIN while locked (CLI): %v\n%s", err, out)
	}
	if _, err := exec.LookPath("pkcs11-tool"); err == nil && libErr == nil {
		cmd := exec.Command("pkcs11-tool", "--module", libPath, "--login", "--pin", userPIN, "-O")
		cmd.Env = k.env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "CKR_PIN_LOCKED") {
			t.Fatalf("right PIN while locked (pkcs11-tool): %v\n%s", err, out)
		}
	}
	wantFlags(t, k, "user PIN locked")

	// The SO resets the user PIN (another process): unlocked.
	if out, err := k.cli(k.with("MODEXP_TOKEN_NEW_PIN="+userPIN), "pin", "reset"); err != nil {
		t.Fatalf("pin reset: %v\n%s", err, out)
	}
	wantFlags(t, k)
	if got := helperLogin(t, k, userPIN); got != "CKR_OK" {
		t.Fatalf("after the SO's reset: %s", got)
	}
}

// TestNoSecretsAtRest imports an RSA key whose values the test knows and
// searches the token file, its backup, the module log and every output of
// the CLI (including errors) for its private values and for the PINs.
func TestNoSecretsAtRest(t *testing.T) {
	k, priv := importedToken(t)
	priv.Precompute()
	var outputs bytes.Buffer
	run := func(env []string, args ...string) {
		out, _ := k.cli(env, args...)
		outputs.WriteString(out)
	}
	k.setEnv(t)
	run(k.env, "keys", "list")
	run(k.with("MODEXP_TOKEN_PIN=wrong-pin-1"), "keys", "list")
	run(k.env, "keys", "generate", "--type", "rsa:999")
	run(k.env, "keys", "import", "--file", filepath.Join(k.dir, "missing.pem"))
	run(k.env, "backup", "--out", filepath.Join(k.dir, "backup.db"))
	run(k.with("MODEXP_TOKEN_NEW_PIN="+newPIN), "pin", "change")
	run(k.with("MODEXP_TOKEN_PIN="+newPIN, "MODEXP_TOKEN_NEW_PIN="+userPIN), "pin", "change")
	// The module's log at debug level, through a signature.
	x := loadModule(t, k)
	sh := x.session(ck.CKU_USER, userPIN)
	keys := x.find(sh, ulongAttr(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY))
	if len(keys) != 1 {
		t.Fatalf("%d private keys", len(keys))
	}
	if _, err := x.sign(sh, keys[0], []byte("m")); err != nil {
		t.Fatal(err)
	}
	if res, err := x.m.GetAttributeValue(sh, keys[0], []uint64{ck.CKA_PRIME_1, ck.CKA_PRIVATE_EXPONENT}); err != nil ||
		res[0].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) || res[1].Err != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
		t.Fatalf("sensitive values readable: %+v, %v", res, err)
	}
	x.m.Close()

	secrets := map[string][]byte{
		"d": priv.D.Bytes(), "p": priv.Primes[0].Bytes(), "q": priv.Primes[1].Bytes(),
		"dp": priv.Precomputed.Dp.Bytes(), "dq": priv.Precomputed.Dq.Bytes(), "qinv": priv.Precomputed.Qinv.Bytes(),
		"user PIN": []byte(userPIN), "SO PIN": []byte(soPIN), "new PIN": []byte(newPIN),
	}
	// Also little-endian (a CK_ULONG-style dump) and hex and decimal forms.
	for name, v := range map[string]*big.Int{"p": priv.Primes[0], "d": priv.D} {
		be := v.Bytes()
		le := make([]byte, len(be))
		for i := range be {
			le[i] = be[len(be)-1-i]
		}
		secrets[name+" (little-endian)"] = le
		secrets[name+" (hex)"] = []byte(v.Text(16))
		secrets[name+" (decimal)"] = []byte(v.Text(10))
	}
	files := map[string][]byte{"CLI output": outputs.Bytes()}
	for name, path := range map[string]string{"token file": k.file, "backup": filepath.Join(k.dir, "backup.db"), "module log": k.log} {
		b, err := os.ReadFile(path)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v (%d bytes)", name, err, len(b))
		}
		files[name] = b
	}
	for where, data := range files {
		for what, secret := range secrets {
			// A 16-byte window of the value is enough to count as a leak.
			for off := 0; off+16 <= len(secret); off += 16 {
				if bytes.Contains(data, secret[off:off+16]) {
					t.Errorf("%s holds %s (bytes %d..%d)", where, what, off, off+16)
					break
				}
			}
			if len(secret) < 16 && bytes.Contains(data, secret) {
				t.Errorf("%s holds %s", where, what)
			}
		}
	}
	// The search works: the public modulus is in the token file in the clear.
	if !bytes.Contains(files["token file"], priv.N.Bytes()) {
		t.Fatal("the modulus is not in the token file: the search would find nothing")
	}
}
