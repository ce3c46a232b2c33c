//go:build modexp_testhooks

package main

import (
	"bytes"
	"crypto/mlkem"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestKEMThroughABI drives ML-KEM-768 through the 3.2 list's
// C_EncapsulateKey and C_DecapsulateKey: the length query (NULL buffer)
// and a short buffer make no key and report the ciphertext's length
// (CKR_BUFFER_TOO_SMALL for the latter); the encapsulated and the
// decapsulated keys are equal and are the secret Go's crypto/mlkem
// decapsulates from the key's seed; a ciphertext one byte short is
// CKR_ENCRYPTED_DATA_LEN_RANGE. With call records on (debug), neither the
// seed, nor the shared secret, nor the ciphertext reaches the log.
func TestKEMThroughABI(t *testing.T) {
	h, logPath := loggedSession(t)
	rv, pub, priv := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN},
		[]tsAttr{{Type: ck.CKA_PARAMETER_SET, Value: tsULong(ck.CKP_ML_KEM_768)}},
		[]tsAttr{{Type: ck.CKA_SENSITIVE, Value: tsBool(false)}, {Type: ck.CKA_EXTRACTABLE, Value: tsBool(true)}})
	wantRV(t, "C_GenerateKeyPair(ML-KEM-768)", rv, ck.CKR_OK)
	rv, seed := tsGetAttribute(h, priv, ck.CKA_SEED)
	wantRV(t, "C_GetAttributeValue(CKA_SEED)", rv, ck.CKR_OK)
	secret := []tsAttr{{Type: ck.CKA_SENSITIVE, Value: tsBool(false)}, {Type: ck.CKA_EXTRACTABLE, Value: tsBool(true)}}
	mech := tsMech{Type: ck.CKM_ML_KEM}

	rv, n, _, key := tsEncapsulate(h, mech, pub, secret, true, 0)
	wantRV(t, "C_EncapsulateKey(NULL)", rv, ck.CKR_OK)
	if n != mlkem.CiphertextSize768 || key != 0 {
		t.Fatalf("length query: %d bytes, key %d; want %d, no key", n, key, mlkem.CiphertextSize768)
	}
	rv, n, _, key = tsEncapsulate(h, mech, pub, secret, false, 100)
	wantRV(t, "C_EncapsulateKey(short buffer)", rv, ck.CKR_BUFFER_TOO_SMALL)
	if n != mlkem.CiphertextSize768 || key != 0 {
		t.Fatalf("short buffer: %d bytes, key %d; want %d, no key", n, key, mlkem.CiphertextSize768)
	}
	rv, _, ct, hEnc := tsEncapsulate(h, mech, pub, secret, false, 2048)
	wantRV(t, "C_EncapsulateKey", rv, ck.CKR_OK)
	rv, hDec := tsDecapsulate(h, mech, priv, secret, ct)
	wantRV(t, "C_DecapsulateKey", rv, ck.CKR_OK)
	rv, kEnc := tsGetAttribute(h, hEnc, ck.CKA_VALUE)
	wantRV(t, "C_GetAttributeValue", rv, ck.CKR_OK)
	rv, kDec := tsGetAttribute(h, hDec, ck.CKA_VALUE)
	wantRV(t, "C_GetAttributeValue", rv, ck.CKR_OK)
	dk, err := mlkem.NewDecapsulationKey768(seed)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := dk.Decapsulate(ct)
	if err != nil {
		t.Fatal(err)
	}
	if len(kEnc) != 32 || !bytes.Equal(kEnc, kDec) || !bytes.Equal(kEnc, theirs) {
		t.Fatalf("encapsulated %x, decapsulated %x, crypto/mlkem %x", kEnc, kDec, theirs)
	}
	rv, _ = tsDecapsulate(h, mech, priv, secret, ct[:len(ct)-1])
	wantRV(t, "C_DecapsulateKey(short ciphertext)", rv, ck.CKR_ENCRYPTED_DATA_LEN_RANGE)
	log := finishLog(t, h, logPath)
	if !strings.Contains(log, "fn=C_EncapsulateKey") || !strings.Contains(log, "fn=C_DecapsulateKey") {
		t.Errorf("no call records of the KEM functions")
	}
	noSecretInLog(t, log, map[string][]byte{"seed": seed, "shared secret": kEnc, "ciphertext": ct})
}

// TestVerifySignatureThroughABI: the 3.2 list's C_VerifySignatureInit with
// C_VerifySignature, and with C_VerifySignatureUpdate/Final, accept a
// P-256 ECDSA-SHA256 signature made by C_Sign and refuse a flipped one.
func TestVerifySignatureThroughABI(t *testing.T) {
	slot := initToken(t)
	h := openSession(t, slot, true)
	loginUser(t, h)
	rv, pub, priv := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_EC_KEY_PAIR_GEN},
		[]tsAttr{{Type: ck.CKA_EC_PARAMS, Value: []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}}},
		[]tsAttr{{Type: ck.CKA_SIGN, Value: tsBool(true)}})
	wantRV(t, "C_GenerateKeyPair(P-256)", rv, ck.CKR_OK)
	data := []byte("verified with the signature given at Init")
	mech := tsMech{Type: ck.CKM_ECDSA_SHA256}
	rv, sig := tsSign(h, mech, priv, data)
	wantRV(t, "C_Sign", rv, ck.CKR_OK)
	bad := append([]byte(nil), sig...)
	bad[3] ^= 1
	for _, parts := range []bool{false, true} {
		wantRV(t, "C_VerifySignature", tsVerifySignature(h, mech, pub, sig, data, parts), ck.CKR_OK)
		wantRV(t, "C_VerifySignature(bad)", tsVerifySignature(h, mech, pub, bad, data, parts), ck.CKR_SIGNATURE_INVALID)
	}
}

// TestMechanismListByInterface: the 3.2 list's C_GetMechanismList lists
// the ML-KEM mechanisms, the 2.40 list's does not (its callers have no
// C_EncapsulateKey and may not know the values); both list CKM_ECDH1_DERIVE
// and CKM_EC_MONTGOMERY_KEY_PAIR_GEN (3.0).
func TestMechanismListByInterface(t *testing.T) {
	slot := initToken(t)
	for _, c := range []struct {
		mech     uint64
		v32, v24 int
	}{
		{ck.CKM_ML_KEM, 1, 0}, {ck.CKM_ML_KEM_KEY_PAIR_GEN, 1, 0},
		{ck.CKM_ECDH1_DERIVE, 1, 1}, {ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN, 1, 1},
	} {
		if got := tsListsMech(slot, true, c.mech); got != c.v32 {
			t.Errorf("3.2 list: %s listed = %d, want %d", ck.Name("CKM_", c.mech), got, c.v32)
		}
		if got := tsListsMech(slot, false, c.mech); got != c.v24 {
			t.Errorf("2.40 list: %s listed = %d, want %d", ck.Name("CKM_", c.mech), got, c.v24)
		}
	}
}
