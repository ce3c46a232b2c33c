package engines

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"math/big"
	"path/filepath"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"github.com/modexp-token/modexp-token/test/vectors/testkeys"
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

const (
	soPIN   = "87654321"
	userPIN = "123456"
)

// slotConf is the body of one [[slot]] (engine and fallback lines) plus
// the test defaults: cheap PIN hashing and a token file in dir.
func slotConf(dir, engineLines, fallback string) string {
	return fmt.Sprintf(`log = %q
log_level = "debug"

[[slot]]
label = "engines test"
token_file = %q
%s
fallback = %q
%s`, filepath.Join(dir, "module.log"), filepath.Join(dir, "token.db"), engineLines, fallback, e2e.CheapKDF)
}

// mod is a token.Module in this process with one initialised token and a
// logged-in R/W session.
type mod struct {
	t    *testing.T
	m    *token.Module
	slot uint64
	dir  string
}

// openModule loads a module on the given slot configuration.
func openModule(t *testing.T, engineLines, fallback string) *mod {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(slotConf(dir, engineLines, fallback)), dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := token.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	md := &mod{t: t, m: m, slot: m.SlotList(true)[0], dir: dir}
	md.must(m.InitToken(md.slot, []byte(soPIN), "engines"))
	sh := md.session()
	md.must(m.Login(sh, ck.CKU_SO, []byte(soPIN)))
	md.must(m.InitPIN(sh, []byte(userPIN)))
	md.must(m.Logout(sh))
	md.must(m.Login(sh, ck.CKU_USER, []byte(userPIN)))
	return md
}

func (md *mod) must(err error) {
	md.t.Helper()
	if err != nil {
		md.t.Fatal(err)
	}
}

// session opens a R/W session (the login is shared by the application's
// sessions).
func (md *mod) session() uint64 {
	md.t.Helper()
	sh, err := md.m.OpenSession(md.slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	md.must(err)
	return sh
}

// importKey stores k as a token private key and returns its handle.
func (md *mod) importKey(sh uint64, k *rsa.PrivateKey, id byte) uint64 {
	md.t.Helper()
	k.Precompute()
	a := func(t uint64, v []byte) token.Attribute { return token.Attribute{Type: t, Value: v} }
	h, err := md.m.CreateObject(sh, []token.Attribute{
		a(ck.CKA_CLASS, ck.ULong(ck.CKO_PRIVATE_KEY)), a(ck.CKA_KEY_TYPE, ck.ULong(ck.CKK_RSA)),
		a(ck.CKA_TOKEN, ck.Bool(true)), a(ck.CKA_SIGN, ck.Bool(true)), a(ck.CKA_ID, []byte{id}),
		a(ck.CKA_MODULUS, k.N.Bytes()), a(ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(k.E)).Bytes()),
		a(ck.CKA_PRIVATE_EXPONENT, k.D.Bytes()),
		a(ck.CKA_PRIME_1, k.Primes[0].Bytes()), a(ck.CKA_PRIME_2, k.Primes[1].Bytes()),
		a(ck.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()), a(ck.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
		a(ck.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes()),
	})
	md.must(err)
	return h
}

// sign signs msg with SHA256-RSA-PKCS.
func (md *mod) sign(sh, key uint64, msg []byte) ([]byte, error) {
	if err := md.m.SignInit(sh, &token.Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, key); err != nil {
		return nil, err
	}
	sig, _, err := md.m.Sign(sh, msg, token.Out{Cap: 1024})
	return sig, err
}

func (md *mod) status() token.EngineStatus {
	md.t.Helper()
	st, err := md.m.EngineStatus(md.slot)
	md.must(err)
	return st
}

// testKey is one of the fixed public test keys (test/vectors/testkeys).
func testKey(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := testkeys.Load(bits)
	if err != nil {
		t.Fatal(err)
	}
	return k.PrivateKey
}

// verifySig checks a SHA256-RSA-PKCS signature with crypto/rsa.
func verifySig(pub *rsa.PublicKey, msg, sig []byte) error {
	d := sha256.Sum256(msg)
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig)
}

// deriveOrRefuse derives a readable secret with mech from key in sh and
// reports whether it was released: a released secret must be want, a
// refusal CKR_DEVICE_ERROR; anything else fails the test (what names the
// operation).
func (md *mod) deriveOrRefuse(sh uint64, mech *token.Mechanism, key uint64, want []byte, what string) bool {
	md.t.Helper()
	h, err := md.m.DeriveKey(sh, mech, key, []token.Attribute{
		tattr(ck.CKA_SENSITIVE, ck.Bool(false)), tattr(ck.CKA_EXTRACTABLE, ck.Bool(true)),
	})
	switch {
	case err == nil:
		res, err := md.m.GetAttributeValue(sh, h, []uint64{ck.CKA_VALUE})
		md.must(err)
		if !bytes.Equal(res[0].Value, want) {
			md.t.Fatalf("%s released a wrong secret", what)
		}
		return true
	case isRV(err, ck.CKR_DEVICE_ERROR):
		return false
	}
	md.t.Fatalf("%s: %v", what, err)
	return false
}

// faultsShown returns the token's engine status and the faults the daemon
// injected since before, and fails the test when none was injected or
// detected: it would prove nothing.
func (md *mod) faultsShown(d *e2e.Daemon, before e2e.Status) (st token.EngineStatus, injected uint64, after e2e.Status) {
	md.t.Helper()
	after = d.Status()
	st = md.status()
	injected = after.FaultsInjected - before.FaultsInjected
	if injected == 0 || st.Faults == 0 {
		md.t.Fatalf("no fault injected (%d) or detected (%d): the test proves nothing", injected, st.Faults)
	}
	return st, injected, after
}

// isRV reports whether err carries the PKCS#11 code.
func isRV(err error, code ck.Error) bool { return ck.RV(err) == uint64(code) }
