//go:build modexp_testhooks

package main

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// TestMLDSAThroughC: through the C ABI an ML-DSA-65 key pair is
// generated, signs with a CK_SIGN_ADDITIONAL_CONTEXT (deterministic and
// hedged), and circl verifies the signatures against CKA_VALUE of the
// public key; a context over 255 bytes is CKR_MECHANISM_PARAM_INVALID
// and a short structure the same.
func TestMLDSAThroughC(t *testing.T) {
	slot := initToken(t)
	h := openSession(t, slot, true)
	loginUser(t, h)
	rv, hPub, hPriv := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_ML_DSA_KEY_PAIR_GEN},
		[]tsAttr{{Type: ck.CKA_PARAMETER_SET, Value: tsULong(ck.CKP_ML_DSA_65)}, {Type: ck.CKA_VERIFY, Value: tsBool(true)}},
		[]tsAttr{{Type: ck.CKA_SIGN, Value: tsBool(true)}})
	wantRV(t, "C_GenerateKeyPair(ML-DSA-65)", rv, ck.CKR_OK)
	rv, raw := tsGetAttribute(h, hPub, ck.CKA_VALUE)
	wantRV(t, "C_GetAttributeValue(CKA_VALUE)", rv, ck.CKR_OK)
	var pk mldsa65.PublicKey
	if err := pk.UnmarshalBinary(raw); err != nil {
		t.Fatalf("CKA_VALUE: %v", err)
	}
	msg, ctx := []byte("firmware image 7"), []byte("secure-boot")
	var sigs [][]byte
	for _, hedge := range []uint64{ck.CKH_DETERMINISTIC_REQUIRED, ck.CKH_DETERMINISTIC_REQUIRED, ck.CKH_HEDGE_REQUIRED} {
		rv, sig := tsSign(h, tsMech{Type: ck.CKM_ML_DSA, Kind: 6, Sign: token.SignContextParams{Hedge: hedge, Context: ctx}}, hPriv, msg)
		wantRV(t, "C_Sign(CKM_ML_DSA)", rv, ck.CKR_OK)
		if !mldsa65.Verify(&pk, msg, ctx, sig) {
			t.Fatalf("hedge %d: circl does not verify the signature", hedge)
		}
		sigs = append(sigs, sig)
	}
	if !bytes.Equal(sigs[0], sigs[1]) || bytes.Equal(sigs[0], sigs[2]) {
		t.Fatal("deterministic signatures differ, or the hedged one equals them")
	}
	rv, _ = tsSign(h, tsMech{Type: ck.CKM_ML_DSA, Kind: 6, Sign: token.SignContextParams{Context: make([]byte, 256)}}, hPriv, msg)
	wantRV(t, "C_SignInit(context of 256 bytes)", rv, ck.CKR_MECHANISM_PARAM_INVALID)
	rv, _ = tsSign(h, tsMech{Type: ck.CKM_ML_DSA, Kind: 6, LenDelta: -8}, hPriv, msg)
	wantRV(t, "C_SignInit(short CK_SIGN_ADDITIONAL_CONTEXT)", rv, ck.CKR_MECHANISM_PARAM_INVALID)
}

// TestCallLogMLDSASeed: at debug level, importing ML-DSA keys (seed and
// expanded key, then a refused one), signing with a context and the
// refusals write call records, and no window of the seed, the expanded
// key, the context or the message is in the log.
func TestCallLogMLDSASeed(t *testing.T) {
	h, logPath := loggedSession(t)
	var seed [mldsa65.SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		t.Fatal(err)
	}
	_, sk := mldsa65.NewKeyFromSeed(&seed)
	expanded, err := sk.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	tmpl := func(extra ...tsAttr) []tsAttr {
		return append([]tsAttr{{Type: ck.CKA_CLASS, Value: tsULong(ck.CKO_PRIVATE_KEY)}, {Type: ck.CKA_KEY_TYPE, Value: tsULong(ck.CKK_ML_DSA)},
			{Type: ck.CKA_PARAMETER_SET, Value: tsULong(ck.CKP_ML_DSA_65)}, {Type: ck.CKA_SIGN, Value: tsBool(true)}}, extra...)
	}
	rv, hKey := tsCreateObject(h, tmpl(tsAttr{Type: ck.CKA_SEED, Value: seed[:]}, tsAttr{Type: ck.CKA_VALUE, Value: expanded}))
	wantRV(t, "C_CreateObject(ML-DSA seed and expanded key)", rv, ck.CKR_OK)
	rv, _ = tsCreateObject(h, tmpl(tsAttr{Type: ck.CKA_VALUE, Value: expanded[:len(expanded)-1]}))
	wantRV(t, "C_CreateObject(short expanded key)", rv, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	bad := append([]byte(nil), expanded...)
	bad[200] ^= 0xff
	rv, _ = tsCreateObject(h, tmpl(tsAttr{Type: ck.CKA_SEED, Value: seed[:]}, tsAttr{Type: ck.CKA_VALUE, Value: bad}))
	if rv == uint64(ck.CKR_OK) {
		t.Fatal("a seed with another expanded key was accepted")
	}
	msg, ctx := []byte("log-probe message 5d2a"), []byte("log-probe context 91c3")
	rv, _ = tsSign(h, tsMech{Type: ck.CKM_ML_DSA, Kind: 6, Sign: token.SignContextParams{Context: ctx}}, hKey, msg)
	wantRV(t, "C_Sign(CKM_ML_DSA)", rv, ck.CKR_OK)
	log := finishLog(t, h, logPath)
	if !strings.Contains(log, "mechanism=CKM_ML_DSA ") || !strings.Contains(log, "rv=CKR_ATTRIBUTE_VALUE_INVALID") {
		t.Fatalf("the call records are missing:\n%s", log)
	}
	noSecretInLog(t, log, map[string][]byte{"seed": seed[:], "expanded key": expanded, "changed expanded key": bad, "context": ctx, "message": msg})
}
