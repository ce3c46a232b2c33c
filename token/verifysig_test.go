package token

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestVerifySignature: C_VerifySignatureInit with the signature, then
// C_VerifySignature or C_VerifySignatureUpdate/Final, for ECDSA with SHA-256
// (multi-part) and Ed25519: a good signature verifies, a flipped one is
// CKR_SIGNATURE_INVALID; the C_Verify functions refuse the operation and
// the C_VerifySignature functions a C_VerifyInit one, with
// CKR_OPERATION_NOT_INITIALIZED and the operation left active.
func TestVerifySignature(t *testing.T) {
	m, _, sh := readyToken(t)
	ecPub, ecPriv := genEC(t, m, sh, "P-256", false)
	edPub, edPriv, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
		[]Attribute{aBytes(ck.CKA_EC_PARAMS, mech.Ed25519OID)}, nil)
	must(t, err)
	msg := []byte("a message signed before and verified with C_VerifySignature")
	for _, c := range []struct {
		name      string
		mech      uint64
		pub, priv uint64
		multi     bool
	}{
		{"ECDSA-SHA256 one part", ck.CKM_ECDSA_SHA256, ecPub, ecPriv, false},
		{"ECDSA-SHA256 in parts", ck.CKM_ECDSA_SHA256, ecPub, ecPriv, true},
		{"Ed25519 one part", ck.CKM_EDDSA, edPub, edPriv, false},
		{"Ed25519 in parts", ck.CKM_EDDSA, edPub, edPriv, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sig, err := signWith(t, m, sh, c.priv, c.mech, msg)
			must(t, err)
			bad := append([]byte(nil), sig...)
			bad[len(bad)/2] ^= 1
			run := func(s []byte) error {
				if err := m.VerifySignatureInit(sh, &Mechanism{Type: c.mech}, c.pub, s); err != nil {
					return err
				}
				if !c.multi {
					return m.VerifySignature(sh, msg)
				}
				for i := 0; i < len(msg); i += 9 {
					if err := m.VerifySignatureUpdate(sh, msg[i:min(i+9, len(msg))]); err != nil {
						return err
					}
				}
				return m.VerifySignatureFinal(sh)
			}
			wantRV(t, run(sig), ck.CKR_OK)
			wantRV(t, run(bad), ck.CKR_SIGNATURE_INVALID)
		})
	}
	mc := &Mechanism{Type: ck.CKM_ECDSA_SHA256}
	sig, err := signWith(t, m, sh, ecPriv, ck.CKM_ECDSA_SHA256, msg)
	must(t, err)
	must(t, m.VerifySignatureInit(sh, mc, ecPub, sig))
	wantRV(t, m.Verify(sh, msg, sig), ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRV(t, m.VerifyUpdate(sh, msg), ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRV(t, m.VerifyFinal(sh, sig), ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRV(t, m.VerifyInit(sh, mc, ecPub), ck.CKR_OPERATION_ACTIVE)
	wantRV(t, m.VerifySignature(sh, msg), ck.CKR_OK) // still active, and ends
	wantRV(t, m.VerifySignature(sh, msg), ck.CKR_OPERATION_NOT_INITIALIZED)
	must(t, m.VerifyInit(sh, mc, ecPub))
	wantRV(t, m.VerifySignature(sh, msg), ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRV(t, m.VerifySignatureFinal(sh), ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRV(t, m.VerifySignatureInit(sh, mc, ecPub, sig), ck.CKR_OPERATION_ACTIVE)
	wantRV(t, m.Verify(sh, msg, sig), ck.CKR_OK)
	wantRV(t, m.VerifySignatureInit(sh, mc, ecPriv, sig), ck.CKR_KEY_TYPE_INCONSISTENT)
}
