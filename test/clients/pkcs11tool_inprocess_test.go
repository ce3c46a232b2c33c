package clients

// TestPKCS11Tool's in-process client: what pkcs11-tool 0.23 cannot drive
// (mechanism parameters it has no option for, C_DeriveKey with DH,
// C_GenerateKey of domain parameters, C_GenerateKeyPair of DSA and DH keys)
// and p11-kit's RPC does not carry is driven by this test binary, re-run as
// a child that loads the module itself through miekg/pkcs11 (two Go
// runtimes in one process: see DESIGN.md). A child, because the module's Go
// runtime reads the environment (MODEXP_TOKEN_CONF) once, when it is
// loaded: each test token needs a fresh process. The child checks every
// result with Go's crypto (or openssl) and reports what it exercised;
// TestPKCS11Tool marks only those capabilities.
//
// Child protocol, on stdout: "EXERCISED <names> <capability>" (names
// comma-separated, as pkcs11-tool -M may print them), "DATA <name> <hex>"
// for what the parent needs next.

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/pkcs11"
)

// Environment of the in-process child.
const (
	inProcessEnv       = "MODEXP_P11TOOL_INPROCESS" // "1" in the child
	inProcessModuleEnv = "MODEXP_P11TOOL_INPROCESS_MODULE"
)

// p11Exercises is what TestPKCS11Tool's exercises share: the token, the
// capabilities `pkcs11-tool -M` lists and the record of exercised ones.
type p11Exercises struct {
	tk   *testToken
	has  func(mech, capability string) bool
	mark func(mech, capability string)
}

// inProcess runs the in-process child on the token (after pkcs11-tool made
// it) with extra environment entries, marks what it exercised and returns
// its DATA lines.
func (ex *p11Exercises) inProcess(t *testing.T, extra ...string) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestPKCS11Tool$", "-test.v", "-test.count=1")
	cmd.Env = append(append(append([]string(nil), ex.tk.env...), inProcessEnv+"=1", inProcessModuleEnv+"="+ex.tk.module), extra...)
	start := time.Now()
	b, err := cmd.CombinedOutput()
	out := string(b)
	if ctx.Err() != nil {
		t.Fatalf("in-process child hung (killed after 2 minutes):\n%s", tail(out, 40))
	}
	if err != nil || !strings.Contains(out, "\nPASS") {
		t.Fatalf("in-process child: %v\n%s", err, tail(out, 60))
	}
	data := map[string][]byte{}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "EXERCISED":
			n++
			for _, n := range strings.Split(f[1], ",") {
				ex.mark(n, f[2])
			}
		case len(f) == 3 && f[0] == "DATA":
			v, err := hex.DecodeString(f[2])
			if err != nil {
				t.Fatalf("child's DATA line %q: %v", line, err)
			}
			data[f[1]] = v
		}
	}
	t.Logf("in-process child: %d capabilities exercised in %v", n, time.Since(start).Round(time.Millisecond))
	return data
}

// inProcessClient is the child's view of the module: a logged-in session
// and the mechanisms the slot offers.
type inProcessClient struct {
	t     *testing.T
	p     *pkcs11.Ctx
	s     pkcs11.SessionHandle
	mechs map[uint]bool
}

// offers reports whether the module lists every mechanism given: an
// exercise of a mechanism the module does not offer (SoftHSMv2 has no
// CKM_*_HMAC_GENERAL) is left out, and the parent's check says nothing of it.
func (c *inProcessClient) offers(ckm ...uint) bool {
	for _, m := range ckm {
		if !c.mechs[m] {
			return false
		}
	}
	return true
}

// exercised reports a capability checked: name is pkcs11-tool's name of
// mechanism ckm (also reported as "mechtype-0x...", its name for a
// mechanism it does not know).
func (c *inProcessClient) exercised(ckm uint, name, capability string) {
	fmt.Printf("EXERCISED %s,mechtype-0x%X %s\n", name, ckm, capability)
}

// data hands a value to the parent.
func (c *inProcessClient) data(name string, v []byte) {
	fmt.Printf("DATA %s %x\n", name, v)
}

// inProcessChild is TestPKCS11Tool in the child: it loads the module,
// logs in to the test token and runs the in-process exercises.
func inProcessChild(t *testing.T) {
	p := pkcs11.New(os.Getenv(inProcessModuleEnv))
	if p == nil {
		t.Fatalf("load %s failed", os.Getenv(inProcessModuleEnv))
	}
	defer p.Destroy()
	if err := p.Initialize(); err != nil {
		t.Fatalf("C_Initialize: %v", err)
	}
	defer p.Finalize()
	slots, err := p.GetSlotList(true)
	if err != nil || len(slots) == 0 {
		t.Fatalf("C_GetSlotList: %v %v", slots, err)
	}
	s, err := p.OpenSession(slots[0], pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
	if err != nil {
		t.Fatalf("C_OpenSession: %v", err)
	}
	defer p.CloseSession(s)
	if err := p.Login(s, pkcs11.CKU_USER, userPIN); err != nil {
		t.Fatalf("C_Login: %v", err)
	}
	defer p.Logout(s)
	ms, err := p.GetMechanismList(slots[0])
	if err != nil {
		t.Fatalf("C_GetMechanismList: %v", err)
	}
	c := &inProcessClient{t: t, p: p, s: s, mechs: map[uint]bool{}}
	for _, m := range ms {
		c.mechs[m.Mechanism] = true
	}
	c.symmetric()
	c.dsaDH()
	c.aesDerive()
	c.hkdf()
}

// secretKey makes a session secret key with the given value that
// encrypts, decrypts, signs and verifies.
func (c *inProcessClient) secretKey(keyType uint, value []byte) pkcs11.ObjectHandle {
	c.t.Helper()
	return c.secretKeyWith(keyType, value, pkcs11.CKA_ENCRYPT, pkcs11.CKA_DECRYPT, pkcs11.CKA_SIGN, pkcs11.CKA_VERIFY)
}

// encrypt is C_EncryptInit then C_Encrypt.
func (c *inProcessClient) encrypt(m *pkcs11.Mechanism, key pkcs11.ObjectHandle, pt []byte) []byte {
	c.t.Helper()
	if err := c.p.EncryptInit(c.s, []*pkcs11.Mechanism{m}, key); err != nil {
		c.t.Fatalf("C_EncryptInit(0x%x): %v", m.Mechanism, err)
	}
	ct, err := c.p.Encrypt(c.s, pt)
	if err != nil {
		c.t.Fatalf("C_Encrypt(0x%x): %v", m.Mechanism, err)
	}
	return ct
}

// decrypt is C_DecryptInit then C_Decrypt; it returns C_Decrypt's error.
func (c *inProcessClient) decrypt(m *pkcs11.Mechanism, key pkcs11.ObjectHandle, ct []byte) ([]byte, error) {
	c.t.Helper()
	if err := c.p.DecryptInit(c.s, []*pkcs11.Mechanism{m}, key); err != nil {
		c.t.Fatalf("C_DecryptInit(0x%x): %v", m.Mechanism, err)
	}
	return c.p.Decrypt(c.s, ct)
}

// sign is C_SignInit then C_Sign.
func (c *inProcessClient) sign(m *pkcs11.Mechanism, key pkcs11.ObjectHandle, msg []byte) []byte {
	c.t.Helper()
	if err := c.p.SignInit(c.s, []*pkcs11.Mechanism{m}, key); err != nil {
		c.t.Fatalf("C_SignInit(0x%x): %v", m.Mechanism, err)
	}
	sig, err := c.p.Sign(c.s, msg)
	if err != nil {
		c.t.Fatalf("C_Sign(0x%x): %v", m.Mechanism, err)
	}
	return sig
}

// verifies checks that C_Verify accepts sig and refuses it altered
// (CKR_SIGNATURE_INVALID); false, after reporting, if not.
func (c *inProcessClient) verifies(m *pkcs11.Mechanism, key pkcs11.ObjectHandle, msg, sig []byte) bool {
	c.t.Helper()
	verify := func(sig []byte) error {
		if err := c.p.VerifyInit(c.s, []*pkcs11.Mechanism{m}, key); err != nil {
			c.t.Fatalf("C_VerifyInit(0x%x): %v", m.Mechanism, err)
		}
		return c.p.Verify(c.s, msg, sig)
	}
	if err := verify(sig); err != nil {
		c.t.Errorf("C_Verify(0x%x) of a good signature: %v", m.Mechanism, err)
		return false
	}
	bad := bytes.Clone(sig)
	bad[len(bad)/2] ^= 0x01
	if e, ok := verify(bad).(pkcs11.Error); !ok || e != pkcs11.CKR_SIGNATURE_INVALID {
		c.t.Errorf("C_Verify(0x%x) of an altered signature: %v, want CKR_SIGNATURE_INVALID", m.Mechanism, e)
		return false
	}
	return true
}

// ulongParam is a CK_ULONG mechanism parameter (CK_MAC_GENERAL_PARAMS),
// in the host's byte order (amd64: little-endian, 8 bytes).
func ulongParam(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}
