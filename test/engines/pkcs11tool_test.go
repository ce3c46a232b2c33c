package engines

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// tool is pkcs11-tool on the built module with one token whose slot
// configuration the test rewrites between calls (keys are generated on the
// software engine, then used on the engine under test).
type tool struct {
	t    *testing.T
	dir  string
	conf string
	env  []string
}

func newTool(t *testing.T) *tool {
	t.Helper()
	e2e.NeedTool(t, "pkcs11-tool")
	tk := e2e.NewToken(t, "engines", "")
	tl := &tool{t: t, dir: tk.Dir, conf: tk.Conf, env: tk.With("MODEXP_TOKEN_LOG_LEVEL=debug")}
	tl.engine(`engine = "soft"`, "fail")
	tl.run("--init-token", "--label", "engines", "--so-pin", soPIN)
	tl.run("--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN)
	return tl
}

// engine rewrites the slot's engine lines and fallback policy.
func (tl *tool) engine(lines, fallback string) {
	tl.t.Helper()
	if err := os.WriteFile(tl.conf, []byte(slotConf(tl.dir, lines, fallback)), 0o600); err != nil {
		tl.t.Fatal(err)
	}
}

func (tl *tool) try(args ...string) (string, error) {
	return runCmd(tl.env, "pkcs11-tool", append([]string{"--module", libPath}, args...)...)
}

func (tl *tool) run(args ...string) string {
	tl.t.Helper()
	out, err := tl.try(args...)
	if err != nil {
		tl.t.Fatalf("pkcs11-tool %v: %v\n%s", args, err, out)
	}
	return out
}

func (tl *tool) path(name string) string { return filepath.Join(tl.dir, name) }

// pub reads the public key with id (DER SubjectPublicKeyInfo).
func (tl *tool) pub(id string) any {
	tl.t.Helper()
	der := tl.path("pub-" + id + ".der")
	tl.run("--read-object", "--type", "pubkey", "--id", id, "--output-file", der)
	b, err := os.ReadFile(der)
	if err != nil {
		tl.t.Fatal(err)
	}
	k, err := x509.ParsePKIXPublicKey(b)
	if err != nil {
		if rk, err2 := x509.ParsePKCS1PublicKey(b); err2 == nil {
			return rk
		}
		tl.t.Fatalf("public key %s: %v", id, err)
	}
	return k
}

// sign signs msg with the key id and mechanism; it returns the signature
// file's bytes, pkcs11-tool's output and its error.
func (tl *tool) sign(id, mech string, msg []byte) ([]byte, string, error) {
	tl.t.Helper()
	in, out := tl.path("msg-"+id), tl.path("sig-"+id)
	os.Remove(out)
	if err := os.WriteFile(in, msg, 0o600); err != nil {
		tl.t.Fatal(err)
	}
	o, err := tl.try("--login", "--pin", userPIN, "--sign", "--id", id, "--mechanism", mech, "--input-file", in, "--output-file", out)
	if err != nil {
		return nil, o, err
	}
	sig, rerr := os.ReadFile(out)
	if rerr != nil {
		tl.t.Fatal(rerr)
	}
	return sig, o, nil
}

func (tl *tool) log() string {
	b, _ := os.ReadFile(tl.path("module.log"))
	return string(b)
}

// TestPkcs11ToolChips: pkcs11-tool signs on the chip engines (RSA-1024 on
// orup561 through its 512-bit CRT halves, RSA-2048 on pukcc), the debug
// log shows each operation's simulated device time, and a broken chip
// (orup561 overclocked to 30 MHz; cryptech zeroing above 1024 bits with a
// 4096-bit key) gives CKR_DEVICE_ERROR with fallback "fail" and a valid
// signature with "soft" — never a wrong one.
func TestPkcs11ToolChips(t *testing.T) {
	tl := newTool(t)
	tl.run("--login", "--pin", userPIN, "--keypairgen", "--key-type", "rsa:1024", "--id", "10", "--label", "k1024")
	tl.run("--login", "--pin", userPIN, "--keypairgen", "--key-type", "rsa:2048", "--id", "20", "--label", "k2048")
	// A 4096-bit key (engine/backend/chip's public test key), imported.
	k4096 := testKey(t, 4096)
	der := tl.path("k4096.der")
	if err := os.WriteFile(der, x509.MarshalPKCS1PrivateKey(k4096), 0o600); err != nil {
		t.Fatal(err)
	}
	tl.run("--login", "--pin", userPIN, "--write-object", der, "--type", "privkey", "--id", "40", "--label", "k4096", "--usage-sign")
	pubs := map[string]*rsa.PublicKey{"10": tl.pub("10").(*rsa.PublicKey), "20": tl.pub("20").(*rsa.PublicKey), "40": &k4096.PublicKey}

	cases := []struct {
		engine, fallback, id string
		wantErr              bool
	}{
		{"chip:orup561", "fail", "10", false},
		{"chip:pukcc", "fail", "20", false},
		{"chip:cryptech", "fail", "20", false},
		{"chip:orup561,f=30e6", "fail", "10", true},
		{"chip:orup561,f=30e6", "soft", "10", false},
		{"chip:cryptech,zero-above:1024", "fail", "40", true},
		{"chip:cryptech,zero-above:1024", "soft", "40", false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%s", c.engine, c.fallback, c.id), func(t *testing.T) {
			tl.engine(fmt.Sprintf("engine = %q", c.engine), c.fallback)
			logBefore := len(tl.log())
			msg := []byte("pkcs11-tool on " + c.engine)
			sig, out, err := tl.sign(c.id, "SHA256-RSA-PKCS", msg)
			if c.wantErr {
				if err == nil || !strings.Contains(out, "CKR_DEVICE_ERROR") {
					t.Fatalf("want CKR_DEVICE_ERROR, got err %v:\n%s", err, out)
				}
				if strings.Contains(tl.log()[logBefore:], "engine known-answer test failed") == false {
					t.Fatalf("no KAT failure in the log")
				}
				return
			}
			if err != nil {
				t.Fatalf("sign: %v\n%s", err, out)
			}
			if err := verifySig(pubs[c.id], msg, sig); err != nil {
				t.Fatalf("signature invalid: %v", err)
			}
			log := tl.log()[logBefore:]
			var line string
			for l := range strings.SplitSeq(log, "\n") {
				if strings.Contains(l, `msg="private operation"`) {
					line = l
				}
			}
			if line == "" || !strings.Contains(line, "device_time=") || strings.Contains(line, "device_time=0s") {
				t.Fatalf("no private operation line with a device time:\n%s", log)
			}
			t.Logf("log: %s", line[strings.Index(line, "op="):])
			if c.fallback == "soft" && !strings.Contains(log, "engine fault detected") {
				t.Fatalf("fallback used but no fault logged:\n%s", log)
			}
		})
	}
}

// TestPkcs11ToolECDSAOnPUKCC: ECDSA P-256 on the pukcc engine through
// pkcs11-tool. Skipped until the token offers CKM_ECDSA (being added).
func TestPkcs11ToolECDSAOnPUKCC(t *testing.T) {
	tl := newTool(t)
	tl.engine(`engine = "chip:pukcc"`, "fail")
	if out := tl.run("--list-mechanisms"); !strings.Contains(out, "ECDSA-SHA256") {
		t.Skip("the token offers no ECDSA-SHA256 yet")
	}
	tl.run("--login", "--pin", userPIN, "--keypairgen", "--key-type", "EC:prime256v1", "--id", "30", "--label", "p256")
	pub, ok := tl.pub("30").(*ecdsa.PublicKey)
	if !ok {
		t.Fatalf("public key is %T", tl.pub("30"))
	}
	logBefore := len(tl.log())
	msg := []byte("ECDSA on pukcc")
	sig, out, err := tl.sign("30", "ECDSA-SHA256", msg)
	if err != nil {
		t.Fatalf("sign: %v\n%s", err, out)
	}
	if len(sig) != 64 {
		t.Fatalf("signature of %d bytes, want r||s of 64", len(sig))
	}
	d := sha256.Sum256(msg)
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, d[:], r, s) {
		t.Fatal("ECDSA signature invalid")
	}
	if !strings.Contains(tl.log()[logBefore:], "engine=chip:pukcc") {
		t.Fatalf("no log line naming the engine:\n%s", tl.log()[logBefore:])
	}
}

// TestPkcs11ToolDevice: pkcs11-tool signs through a token whose engine is a
// running modexpd on a unix socket; the daemon saw the requests.
func TestPkcs11ToolDevice(t *testing.T) {
	tl := newTool(t)
	tl.run("--login", "--pin", userPIN, "--keypairgen", "--key-type", "rsa:2048", "--id", "01", "--label", "dev")
	pub := tl.pub("01").(*rsa.PublicKey)
	sock := filepath.Join(e2e.SockDir(t), "d.sock")
	d := startDaemon(t, sock, "--engine", "soft")
	tl.engine(deviceLine(sock, ""), "fail")
	before := d.Status().Modexps()
	msg := []byte("through modexpd")
	sig, out, err := tl.sign("01", "SHA256-RSA-PKCS", msg)
	if err != nil {
		t.Fatalf("sign: %v\n%s", err, out)
	}
	if err := verifySig(pub, msg, sig); err != nil {
		t.Fatalf("signature invalid: %v", err)
	}
	// Self-test, KAT and the signature: at least the two CRT halves of each.
	if n := d.Status().Modexps() - before; n < 4 {
		t.Fatalf("the daemon saw %d MODEXP requests", n)
	}
	// The daemon stopped: the token refuses instead of hanging.
	d.Stop()
	_, out, err = tl.sign("01", "SHA256-RSA-PKCS", msg)
	if err == nil {
		t.Fatalf("signed with the daemon stopped:\n%s", out)
	}
}
