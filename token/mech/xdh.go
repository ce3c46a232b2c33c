package mech

// X25519 and X448 (RFC 7748): CKM_EC_MONTGOMERY_KEY_PAIR_GEN. The
// agreement is CKM_ECDH1_DERIVE on a CKK_EC_MONTGOMERY key (ecdh.go):
// its CK_ECDH1_DERIVE_PARAMS public data is the peer's u-coordinate, bare
// or as a DER OCTET STRING; Z is the RFC 7748 shared secret (32 or 56
// bytes), then CKD_NULL or a KDF as for the other curves. A low-order peer
// point (the all-zero shared secret) or a u-coordinate of the wrong length
// is CKR_MECHANISM_PARAM_INVALID. Keys: xdh_key.go.

import (
	"bytes"
	"crypto/rand"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// xdhMinBits and xdhMaxBits are the key sizes of X25519 and X448.
const xdhMinBits, xdhMaxBits = 256, 448

// xdhMechanisms is CKM_EC_MONTGOMERY_KEY_PAIR_GEN.
func xdhMechanisms() []Mechanism {
	return []Mechanism{&xdhKeyPairGen{MechBase{Type: ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN,
		KeyTypes: []uint64{ck.CKK_EC_MONTGOMERY}, MinBits: xdhMinBits, MaxBits: xdhMaxBits}}}
}

// xdhKeyPairGen is CKM_EC_MONTGOMERY_KEY_PAIR_GEN.
type xdhKeyPairGen struct{ MechBase }

// GenerateKeyPair: CKA_EC_PARAMS in the public template names the curve
// (given in the private template too, it must be equal).
func (m *xdhKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	params, ok := pub[ck.CKA_EC_PARAMS]
	if !ok {
		return nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_EC_PARAMS missing from the public key template")
	}
	c, err := XDHCurveOf(params)
	if err != nil {
		return nil, nil, err
	}
	if pv, ok := priv[ck.CKA_EC_PARAMS]; ok && !bytes.Equal(pv, params) {
		return nil, nil, Inconsistent("CKA_EC_PARAMS differs between the public and private templates")
	}
	scalar := make([]byte, c.Size)
	if _, err := rand.Read(scalar); err != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "generate %s key: %v", c.Name, err)
	}
	k, err := newXDHPrivate(c, scalar)
	if err != nil {
		clear(scalar)
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "generate %s key: %v", c.Name, err)
	}
	point := c.point(k.pub)
	pubVals := attr.Map{ck.CKA_EC_POINT: point}
	privVals := attr.Map{ck.CKA_EC_PARAMS: bytes.Clone(params), ck.CKA_VALUE: scalar, ck.CKA_EC_POINT: point}
	return pubVals, privVals, nil
}

// xdhShared is Z of CKM_ECDH1_DERIVE on a Montgomery key.
func xdhShared(op Op, public []byte) ([]byte, error) {
	k, err := preparedXDH(op.Slot(), op.Key())
	if err != nil {
		return nil, err
	}
	u, err := k.c.publicBytes(public)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "ECDH public data: %v", err)
	}
	z, err := k.shared(u)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s public data: %v", k.c.Name, err)
	}
	return z, nil
}
