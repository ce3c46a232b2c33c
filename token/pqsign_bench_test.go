package token

import (
	"crypto/rand"
	"testing"

	"github.com/cloudflare/circl/sign/ed448"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/slhdsa"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// benchUserSession loads a module with an initialised token and returns a
// user session.
func benchUserSession(b *testing.B) (*Module, uint64) {
	b.Helper()
	testConfigB(b)
	m, err := LoadFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	slot := m.SlotList(true)[0]
	must2(b, m.InitToken(slot, []byte(testSOPIN), "Bench"))
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must2(b, err)
	must2(b, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	must2(b, m.InitPIN(sh, []byte(testUserPIN)))
	must2(b, m.Logout(sh))
	must2(b, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	return m, sh
}

// BenchmarkPQSign measures the post-quantum and Ed448 signatures: the
// library's own call (raw-sign), the check the token adds before release
// (check: the library's verify), and C_SignInit + C_Sign (and
// C_VerifyInit + C_Verify) through the Module, hedged, over a 64-byte
// message. module-sign ≈ raw-sign + check + the token's overhead.
func BenchmarkPQSign(b *testing.B) {
	msg := make([]byte, 64)
	m, sh := benchUserSession(b)
	through := func(b *testing.B, mc *Mechanism, priv, pub uint64) {
		sig, err := pqSign(b, m, sh, priv, mc.Type, mc.SignContext, msg, false)
		if mc.EdDSA != nil || mc.Type == ck.CKM_EDDSA {
			must2(b, m.SignInit(sh, mc, priv))
			sig, _, err = m.Sign(sh, msg, Out{Cap: pqSigCap})
		}
		must2(b, err)
		b.Run("module-sign", func(b *testing.B) {
			for b.Loop() {
				must2(b, m.SignInit(sh, mc, priv))
				if _, _, err := m.Sign(sh, msg, Out{Cap: pqSigCap}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("module-verify", func(b *testing.B) {
			for b.Loop() {
				must2(b, m.VerifyInit(sh, mc, pub))
				must2(b, m.Verify(sh, msg, sig))
			}
		})
	}

	b.Run("ML-DSA-65", func(b *testing.B) {
		pk, sk, err := mldsa65.GenerateKey(rand.Reader)
		must2(b, err)
		sig := make([]byte, mldsa65.SignatureSize)
		b.Run("raw-sign", func(b *testing.B) {
			for b.Loop() {
				must2(b, mldsa65.SignTo(sk, msg, nil, true, sig))
			}
		})
		b.Run("check", func(b *testing.B) {
			for b.Loop() {
				if !mldsa65.Verify(pk, msg, nil, sig) {
					b.Fatal("does not verify")
				}
			}
		})
		pub, priv, err := mldsaGenerate(b, m, sh, ck.CKP_ML_DSA_65)
		must2(b, err)
		through(b, &Mechanism{Type: ck.CKM_ML_DSA}, priv, pub)
	})

	b.Run("SLH-DSA-SHA2-128f", func(b *testing.B) {
		pk, sk, err := slhdsa.GenerateKey(rand.Reader, slhdsa.SHA2_128f)
		must2(b, err)
		var sig []byte
		b.Run("raw-sign", func(b *testing.B) {
			for b.Loop() {
				sig, err = slhdsa.SignRandomized(&sk, rand.Reader, slhdsa.NewMessage(msg), nil)
				must2(b, err)
			}
		})
		b.Run("check", func(b *testing.B) {
			for b.Loop() {
				if !slhdsa.Verify(&pk, slhdsa.NewMessage(msg), sig, nil) {
					b.Fatal("does not verify")
				}
			}
		})
		pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_SLH_DSA_KEY_PAIR_GEN},
			[]Attribute{aULong(ck.CKA_PARAMETER_SET, ck.CKP_SLH_DSA_SHA2_128F)}, []Attribute{aBool(ck.CKA_SIGN, true)})
		must2(b, err)
		through(b, &Mechanism{Type: ck.CKM_SLH_DSA}, priv, pub)
	})

	b.Run("Ed448", func(b *testing.B) {
		pk, sk, err := ed448.GenerateKey(rand.Reader)
		must2(b, err)
		var sig []byte
		b.Run("raw-sign", func(b *testing.B) {
			for b.Loop() {
				sig = ed448.Sign(sk, msg, "")
			}
		})
		b.Run("check", func(b *testing.B) {
			for b.Loop() {
				if !ed448.Verify(pk, msg, sig, "") {
					b.Fatal("does not verify")
				}
			}
		})
		pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
			[]Attribute{aBytes(ck.CKA_EC_PARAMS, mech.Ed448OID)}, []Attribute{aBool(ck.CKA_SIGN, true)})
		must2(b, err)
		through(b, &Mechanism{Type: ck.CKM_EDDSA}, priv, pub)
	})
}
