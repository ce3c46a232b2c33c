package mech

// ECDH: CKM_ECDH1_DERIVE and CKM_ECDH1_COFACTOR_DERIVE (every curve here
// has cofactor 1, so both compute the same secret). CKM_ECDH1_DERIVE also
// takes CKK_EC_MONTGOMERY keys, X25519 and X448 (xdh.go: Z is then
// the RFC 7748 shared secret, computed in software on every slot).
//
// The parameter is CK_ECDH1_DERIVE_PARAMS. Its public data is the peer's
// point, as the bare SEC 1 encoding (0x04‖X‖Y, or compressed) or wrapped in
// a DER OCTET STRING (clients send both); a point that is malformed, not on
// the key's curve (invalid-curve and twist points), or at infinity is
// CKR_MECHANISM_PARAM_INVALID, as is an unknown KDF, shared data with
// CKD_NULL, or no public data. The KDFs are CKD_NULL, CKD_SHA1_KDF to
// CKD_SHA512_KDF and (3.0) CKD_SHA3_224_KDF to CKD_SHA3_512_KDF: the ANSI X9.63 KDF, K = H(Z‖1‖SharedInfo) ‖
// H(Z‖2‖SharedInfo) ‖ ... (32-bit big-endian counter) cut to the key's
// length.
//
// Z is the x-coordinate of d·Q (ByteLen bytes, leading zeros kept). With
// CKD_NULL the key's value is Z, or its leading CKA_VALUE_LEN bytes when
// the template asks for fewer (as OpenSSL and kryoptic do; a longer key is
// CKR_TEMPLATE_INCONSISTENT); an AES key without CKA_VALUE_LEN takes the
// longest AES length Z allows. With a KDF, CKA_VALUE_LEN (or the AES
// default of 32) sets the output length. See derivedKeyLen.
//
// # Engines
//
// d·Q is computed by the slot's engine for the curve, as ECDSA's k·G (see
// ecdsa.go for the routes), through the guard (ECRoute.Shared), and
// checked by engine/alg/ecdh before it is used: a point of the curve and,
// from an engine other than the software one, equal to the software
// result. A difference, or engine.ErrDevice, is a fault, answered by the
// software engine under fallback "soft" and CKR_DEVICE_ERROR under
// "fail". The software engine's multiplication is constant-time in d.

import (
	"crypto"
	_ "crypto/sha3" // the SHA-3 mechanisms and KDFs
	"encoding/binary"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// ecdhParams are decoded CK_ECDH1_DERIVE_PARAMS.
type ecdhParams struct {
	kdf    crypto.Hash // 0: CKD_NULL
	shared []byte
	public []byte
}

// ecdhKDFs maps the CKD_ values this token knows to their hash.
var ecdhKDFs = map[uint64]crypto.Hash{
	ck.CKD_NULL:       0,
	ck.CKD_SHA1_KDF:   crypto.SHA1,
	ck.CKD_SHA224_KDF: crypto.SHA224,
	ck.CKD_SHA256_KDF: crypto.SHA256,
	ck.CKD_SHA384_KDF: crypto.SHA384,
	ck.CKD_SHA512_KDF: crypto.SHA512,
	// PKCS#11 3.0.
	ck.CKD_SHA3_224_KDF: crypto.SHA3_224,
	ck.CKD_SHA3_256_KDF: crypto.SHA3_256,
	ck.CKD_SHA3_384_KDF: crypto.SHA3_384,
	ck.CKD_SHA3_512_KDF: crypto.SHA3_512,
}

// ecdhMechanisms are CKM_ECDH1_DERIVE and CKM_ECDH1_COFACTOR_DERIVE.
func ecdhMechanisms() []Mechanism {
	var ms []Mechanism
	for _, t := range []uint64{ck.CKM_ECDH1_DERIVE, ck.CKM_ECDH1_COFACTOR_DERIVE} {
		b := ecBase(t)
		b.Available = ecdhAvailable
		if t == ck.CKM_ECDH1_DERIVE {
			b.KeyTypes = []uint64{ck.CKK_EC, ck.CKK_EC_MONTGOMERY}
			b.Available = ecdhMontgomeryAvailable
		}
		ms = append(ms, &ecdhMech{MechBase: b})
	}
	return ms
}

// ecdhMech is an ECDH mechanism bound to its CK_ECDH1_DERIVE_PARAMS.
type ecdhMech struct {
	MechBase
	p *ecdhParams
}

// ecdhAvailable: the slot derives if it can multiply on some curve; the
// key sizes are those of its curves.
func ecdhAvailable(s Slot, info *Info) bool {
	minBits, maxBits := s.Guard().ECOrderBits()
	if maxBits == 0 {
		return false
	}
	info.MinKeySize, info.MaxKeySize = uint64(minBits), uint64(maxBits)
	return true
}

// ecdhMontgomeryAvailable: CKM_ECDH1_DERIVE is offered on every slot
// (X25519 and X448 run in software), its key sizes those of the slot's
// curves widened to 256..448.
func ecdhMontgomeryAvailable(s Slot, info *Info) bool {
	if !ecdhAvailable(s, info) {
		info.MinKeySize, info.MaxKeySize = xdhMinBits, xdhMaxBits
		return true
	}
	info.MinKeySize, info.MaxKeySize = min(info.MinKeySize, xdhMinBits), max(info.MaxKeySize, xdhMaxBits)
	return true
}

// withParam decodes the mechanism's CK_ECDH1_DERIVE_PARAMS.
func (m *ecdhMech) withParam(cm *CKMechanism) (Mechanism, error) {
	if cm.ECDH == nil || len(cm.Param) != 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "%s needs CK_ECDH1_DERIVE_PARAMS", m.Name())
	}
	p, err := ParseECDHParams(cm.ECDH)
	if err != nil {
		return nil, err
	}
	b := *m
	b.p = p
	return &b, nil
}

// ParseECDHParams checks CK_ECDH1_DERIVE_PARAMS (see the file comment).
func ParseECDHParams(p *ECDH1DeriveParams) (*ecdhParams, error) {
	h, ok := ecdhKDFs[p.KDF]
	if !ok {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "ECDH KDF 0x%X not supported", p.KDF)
	}
	if h == 0 && len(p.SharedData) != 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "ECDH shared data given with CKD_NULL")
	}
	if len(p.PublicData) == 0 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "ECDH without the peer's public data")
	}
	if h != 0 && !h.Available() {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "ECDH KDF hash %v unavailable", h)
	}
	return &ecdhParams{kdf: h, shared: append([]byte(nil), p.SharedData...), public: append([]byte(nil), p.PublicData...)}, nil
}

// CheckKey: the slot must serve the key's curve.
func (m *ecdhMech) CheckKey(op Op) error {
	if op.Key().KeyType() == ck.CKK_EC_MONTGOMERY {
		if _, err := XDHCurveOf(op.Key().Attrs()[ck.CKA_EC_PARAMS]); err != nil {
			return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "Montgomery key without a usable curve: %v", err)
		}
		return nil
	}
	c, err := ecCurveOf(op.Key().Attrs())
	if err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "EC key without a usable curve: %v", err)
	}
	if _, ok := op.Slot().Guard().EC(c.Name()); !ok {
		return ck.Errorf(ck.CKR_MECHANISM_INVALID, "%s on %s: %v (%s, fallback %s)", m.Name(),
			c.Name(), errCurveNotServed, op.Slot().EngineName(), op.Slot().Policy().Fallback)
	}
	return nil
}

// Derive computes the new key's value from d·Q.
func (m *ecdhMech) Derive(op Op, tmpl attr.Map) (value []byte, err error) {
	p := m.p
	if op.Key().KeyType() == ck.CKK_EC_MONTGOMERY {
		z, err := xdhShared(op, p.public)
		if err != nil {
			return nil, err
		}
		defer clear(z)
		return ecdhKey(p, tmpl, z)
	}
	s := op.Slot()
	k, err := preparedECPrivate(s, op.Key())
	if err != nil {
		return nil, err
	}
	c := k.curve
	qx, qy, err := c.UnmarshalECPoint(p.public)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "ECDH public data: not a point of %s: %v", c.Name(), err)
	}
	natural := c.ByteLen()
	if p.kdf != 0 {
		natural = 0
	}
	n, err := DerivedKeyLen(tmpl, natural)
	if err != nil {
		return nil, err
	}
	z, err := ecdhShared(s, k, op.Key().Attrs()[ck.CKA_VALUE], qx, qy)
	if err != nil {
		return nil, err
	}
	defer clear(z)
	if p.kdf == 0 {
		return append([]byte(nil), z[:n]...), nil
	}
	return X963KDF(p.kdf, z, p.shared, n), nil
}

// ecdhKey is the new key's value from Z: its leading bytes with CKD_NULL,
// else the KDF's output, of the length the template asks for.
func ecdhKey(p *ecdhParams, tmpl attr.Map, z []byte) ([]byte, error) {
	natural := len(z)
	if p.kdf != 0 {
		natural = 0
	}
	n, err := DerivedKeyLen(tmpl, natural)
	if err != nil {
		return nil, err
	}
	if p.kdf == 0 {
		return append([]byte(nil), z[:n]...), nil
	}
	return X963KDF(p.kdf, z, p.shared, n), nil
}

// ecdhShared returns the x-coordinate of d·(qx, qy) computed by the key's
// engines and checked before release (engine/alg/ecdh through the guard).
func ecdhShared(s Slot, k *ecPrivateKey, d, qx, qy []byte) ([]byte, error) {
	z, _, err := k.route.Shared(bg, k.curve, d, qx, qy)
	if err != nil {
		return nil, s.EngineErr("ECDH", err)
	}
	return z, nil
}

// X963KDF is the ANSI X9.63 key derivation function (SEC 1 §3.6.1) with
// hash h: n bytes of H(z‖counter‖shared) for counter = 1, 2, ...
func X963KDF(h crypto.Hash, z, shared []byte, n int) []byte {
	out := make([]byte, 0, n+h.Size())
	var ctr [4]byte
	hh := h.New()
	for i := uint32(1); len(out) < n; i++ {
		hh.Reset()
		hh.Write(z)
		binary.BigEndian.PutUint32(ctr[:], i)
		hh.Write(ctr[:])
		hh.Write(shared)
		out = hh.Sum(out)
	}
	clear(out[n:])
	return out[:n]
}
