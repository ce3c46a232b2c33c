package token

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// signCase is one signing mechanism and key of BenchmarkSignPath.
type signCase struct {
	name string
	mech uint64
	in   []byte
	gen  func(b testing.TB, m *Module, sh uint64) (pub, priv uint64)
	// allocs is what C_SignInit + C_Sign may allocate, all of it below
	// the token (-1: not held).
	allocs float64
}

var signCases = []signCase{
	{"ECDSA-P-256", ck.CKM_ECDSA, make([]byte, 32), func(b testing.TB, m *Module, sh uint64) (uint64, uint64) {
		return genEC(b, m, sh, "P-256", false)
	}, 1}, // the engine's k·G (engine.ECEngine returns fresh coordinates)
	{"ECDSA-P-384", ck.CKM_ECDSA, make([]byte, 48), func(b testing.TB, m *Module, sh uint64) (uint64, uint64) {
		return genEC(b, m, sh, "P-384", false)
	}, 1}, // the engine's k·G (engine.ECEngine returns fresh coordinates)
	{"Ed25519", ck.CKM_EDDSA, make([]byte, 32), func(b testing.TB, m *Module, sh uint64) (uint64, uint64) {
		pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, mech.Ed25519OID), aBool(ck.CKA_VERIFY, true)},
			[]Attribute{aBool(ck.CKA_SIGN, true)})
		must2(b, err)
		return pub, priv
	}, 2}, // crypto/ed25519's signature, and the message accumulator of C_SignInit
	{"RSA-2048-SHA256-PKCS", ck.CKM_SHA256_RSA_PKCS, make([]byte, 32), func(b testing.TB, m *Module, sh uint64) (uint64, uint64) {
		pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN},
			[]Attribute{aULong(ck.CKA_MODULUS_BITS, 2048), aBool(ck.CKA_VERIFY, true)},
			[]Attribute{aBool(ck.CKA_SIGN, true)})
		must2(b, err)
		return pub, priv
	}, 9}, // the hash, token/rsapad, the guard and the engine's CRT halves and result
}

// BenchmarkSignPath is C_SignInit + C_Sign through the Module, the
// signature written into the caller's buffer as cgo passes it (Out.Buf),
// for the signing mechanisms of issue 28; allocs/op is the token's and
// the engine's together (testConfigB: the module logs at info).
func BenchmarkSignPath(b *testing.B) {
	for _, c := range signCases {
		b.Run(c.name, func(b *testing.B) {
			m, sh := benchSession(b)
			_, priv := c.gen(b, m, sh)
			buf := make([]byte, 512)
			cm := &Mechanism{Type: c.mech}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := m.SignInit(sh, cm, priv); err != nil {
					b.Fatal(err)
				}
				if _, _, err := m.Sign(sh, c.in, Out{Cap: len(buf), Buf: buf}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSignPathAllocs holds C_SignInit + C_Sign, the signature written into
// the caller's buffer, at what the engine and the libraries below allocate
// (signCase.allocs): the token's own sign path allocates nothing (the
// prepared key, the operation, the mechanism's offer and the digest are
// reused).
func TestSignPathAllocs(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates")
	}
	m, sh := benchSession(t)
	buf := make([]byte, 512)
	for _, c := range signCases {
		if c.allocs < 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			_, priv := c.gen(t, m, sh)
			cm := &Mechanism{Type: c.mech}
			sign := func() {
				must(t, m.SignInit(sh, cm, priv))
				if _, _, err := m.Sign(sh, c.in, Out{Cap: len(buf), Buf: buf}); err != nil {
					t.Fatal(err)
				}
			}
			sign() // the prepared key, the spare operation
			if n := testing.AllocsPerRun(50, sign); n > c.allocs {
				t.Fatalf("%v allocations per C_SignInit + C_Sign, want at most %v", n, c.allocs)
			}
		})
	}
}

// TestECDSACheckConfig: ecdsa_check reaches the slot's guard as its check
// before release, and P-256 signatures made under either verify.
func TestECDSACheckConfig(t *testing.T) {
	for _, c := range []struct {
		conf string
		want ecdsa.Check
	}{
		{"", ecdsa.CheckDefault},
		{"ecdsa_check = \"relation\"\n", ecdsa.CheckDefault},
		{"ecdsa_check = \"verify\"\n", ecdsa.CheckVerify},
	} {
		m, slotID, sh := readyTokenWith(t, c.conf)
		s, err := m.slot(slotID)
		must(t, err)
		if got := ecdsaCheck(s.cfg.ECDSACheck); got != c.want {
			t.Fatalf("%q: check %d, want %d", c.conf, got, c.want)
		}
		pub, priv := genEC(t, m, sh, "P-256", false)
		h := make([]byte, 32)
		sig, err := signWith(t, m, sh, priv, ck.CKM_ECDSA, h)
		must(t, err)
		must(t, verifyWith(t, m, sh, pub, ck.CKM_ECDSA, h, sig))
	}
}

// TestSignInPlace: a caller whose output buffer is its input (C_Sign with
// pSignature = pData) gets a signature of the input it gave, not of the
// signature being written over it.
func TestSignInPlace(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, c := range signCases {
		if c.allocs < 0 {
			continue // RSA signs into a buffer of its own
		}
		t.Run(c.name, func(t *testing.T) {
			pub, priv := c.gen(t, m, sh)
			in := bytes.Repeat([]byte{0x5c}, len(c.in))
			buf := make([]byte, 512)
			copy(buf, in)
			must(t, m.SignInit(sh, &Mechanism{Type: c.mech}, priv))
			sig, _, err := m.Sign(sh, buf[:len(in)], Out{Cap: len(buf), Buf: buf})
			must(t, err)
			must(t, verifyWith(t, m, sh, pub, c.mech, in, bytes.Clone(sig)))
		})
	}
}
