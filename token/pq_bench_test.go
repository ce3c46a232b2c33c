package token

import (
	"crypto/ecdh"
	"crypto/mlkem"
	"crypto/rand"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// benchModule loads a Module on a one-slot soft configuration for a
// benchmark, closed when it ends, and returns it with its slot.
func benchModule(b *testing.B) (*Module, uint64) {
	testConfigB(b)
	m, err := LoadFromEnv()
	must2(b, err)
	b.Cleanup(func() { _ = m.Close() })
	return m, m.SlotList(true)[0]
}

// benchSession is a logged-in R/W session on a fresh token.
func benchSession(b *testing.B) (*Module, uint64) {
	m, slot := benchModule(b)
	must2(b, m.InitToken(slot, []byte(testSOPIN), "Bench"))
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	must2(b, err)
	must2(b, m.Login(sh, ck.CKU_SO, []byte(testSOPIN)))
	must2(b, m.InitPIN(sh, []byte(testUserPIN)))
	must2(b, m.Logout(sh))
	must2(b, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	return m, sh
}

// BenchmarkMLKEM768 is ML-KEM-768 encapsulation and decapsulation through
// the token (EncapsulateKey / DecapsulateKey: the checks, the library call
// and the new session key; its destruction is outside the timer) and the
// same operation of Go's crypto/mlkem alone.
func BenchmarkMLKEM768(b *testing.B) {
	m, sh := benchSession(b)
	pub, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN},
		[]Attribute{aULong(ck.CKA_PARAMETER_SET, ck.CKP_ML_KEM_768)}, nil)
	must2(b, err)
	mc := &Mechanism{Type: ck.CKM_ML_KEM}
	ct, _, _, err := m.EncapsulateKey(sh, mc, pub, nil, Out{Cap: 2048})
	must2(b, err)
	dk, err := mlkem.GenerateKey768()
	must2(b, err)
	ek := dk.EncapsulationKey()
	_, rawCT := ek.Encapsulate()
	b.Run("encapsulate/token", func(b *testing.B) {
		for b.Loop() {
			_, _, h, err := m.EncapsulateKey(sh, mc, pub, nil, Out{Cap: 2048})
			must2(b, err)
			b.StopTimer()
			must2(b, m.DestroyObject(sh, h))
			b.StartTimer()
		}
	})
	b.Run("encapsulate/crypto-mlkem", func(b *testing.B) {
		for b.Loop() {
			// The token parses the stored key each time: so does this.
			k, err := mlkem.NewEncapsulationKey768(ek.Bytes())
			must2(b, err)
			k.Encapsulate()
		}
	})
	b.Run("decapsulate/token", func(b *testing.B) {
		for b.Loop() {
			h, err := m.DecapsulateKey(sh, mc, priv, nil, ct)
			must2(b, err)
			b.StopTimer()
			must2(b, m.DestroyObject(sh, h))
			b.StartTimer()
		}
	})
	b.Run("decapsulate/crypto-mlkem", func(b *testing.B) {
		for b.Loop() {
			if _, err := dk.Decapsulate(rawCT); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkX25519Derive is CKM_ECDH1_DERIVE (CKD_NULL) on an X25519 key
// through the token against crypto/ecdh's ECDH alone.
func BenchmarkX25519Derive(b *testing.B) {
	m, sh := benchSession(b)
	_, priv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN},
		[]Attribute{aBytes(ck.CKA_EC_PARAMS, mech.X25519Curve.OID)}, []Attribute{aBool(ck.CKA_DERIVE, true)})
	must2(b, err)
	peer, err := ecdh.X25519().GenerateKey(rand.Reader)
	must2(b, err)
	mc := &Mechanism{Type: ck.CKM_ECDH1_DERIVE, ECDH: &ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: peer.PublicKey().Bytes()}}
	b.Run("token", func(b *testing.B) {
		for b.Loop() {
			h, err := m.DeriveKey(sh, mc, priv, nil)
			must2(b, err)
			b.StopTimer()
			must2(b, m.DestroyObject(sh, h))
			b.StartTimer()
		}
	})
	mine, err := ecdh.X25519().GenerateKey(rand.Reader)
	must2(b, err)
	b.Run("crypto-ecdh", func(b *testing.B) {
		for b.Loop() {
			pk, err := ecdh.X25519().NewPublicKey(peer.PublicKey().Bytes())
			must2(b, err)
			if _, err := mine.ECDH(pk); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMechanismList is C_GetMechanismList's Go side on the default
// slot (every registered mechanism asked whether the slot offers it).
func BenchmarkMechanismList(b *testing.B) {
	m, slot := benchModule(b)
	for b.Loop() {
		if _, err := m.MechanismList(slot); err != nil {
			b.Fatal(err)
		}
	}
}
