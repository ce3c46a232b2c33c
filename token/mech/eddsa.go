package mech

// EdDSA: CKK_EC_EDWARDS keys, CKM_EC_EDWARDS_KEY_PAIR_GEN and CKM_EDDSA,
// for Ed25519 and Ed448 (RFC 8032; Go's crypto/ed25519 and circl's
// sign/ed448 do the arithmetic, in constant time).
//
//   - CKA_EC_PARAMS names the curve as the clients send it: the OID
//     id-Ed25519 (1.3.101.112), the PrintableString "edwards25519"
//     (pkcs11-tool 0.23, SoftHSMv2), or GnuPG's OID 1.3.6.1.4.1.11591.15.1;
//     for Ed448 the OID id-Ed448 (1.3.101.113) or "edwards448". The value
//     is kept as given. Other curves are CKR_CURVE_NOT_SUPPORTED; bytes
//     that are not one DER element CKR_ATTRIBUTE_VALUE_INVALID.
//   - CKA_EC_POINT is the DER OCTET STRING of the public key (32 bytes,
//     Ed448 57; as SoftHSMv2 and OpenSC have it); the bare bytes are
//     accepted on import and stored wrapped.
//   - CKA_VALUE of a private key is the private key of RFC 8032 (the
//     seed: 32 bytes, Ed448 57); its public key is computed and kept in the
//     private object's CKA_EC_POINT, as for CKK_EC.
//   - Both keys get CKA_PUBLIC_KEY_INFO (SubjectPublicKeyInfo, id-Ed25519
//     or id-Ed448).
//   - The key size is 256 bits, Ed448 448 (SoftHSMv2 counts so).
//
// CKM_EDDSA signs and verifies the message itself, in one part or several
// (the parts are kept until C_SignFinal; at most maxEdDSAMessage bytes).
// Without a parameter it is Ed25519 or Ed448 (with an empty context);
// CK_EDDSA_PARAMS selects Ed25519ph (phFlag: the token hashes the message
// with SHA-512) and Ed25519ctx (a context of 1 to 255 bytes; with phFlag,
// Ed25519ph's context), on an Ed448 key Ed448ph (phFlag: SHAKE256) and
// Ed448's context. Every signature is verified before release. A
// signature that is not 64 bytes (Ed448 114) is CKR_SIGNATURE_LEN_RANGE,
// a wrong one CKR_SIGNATURE_INVALID.

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"hash"

	"github.com/cloudflare/circl/sign/ed448"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// maxEdDSAMessage bounds the message of a multi-part EdDSA operation.
const maxEdDSAMessage = 64 << 20

// edBase is the common part of the EdDSA mechanisms.
func edBase(typ uint64) MechBase {
	return MechBase{Type: typ, KeyTypes: []uint64{ck.CKK_EC_EDWARDS}, MinBits: edKeyBits, MaxBits: ed448KeyBits}
}

// eddsaMechanisms are CKM_EC_EDWARDS_KEY_PAIR_GEN and CKM_EDDSA.
func eddsaMechanisms() []Mechanism {
	return []Mechanism{&edKeyPairGen{edBase(ck.CKM_EC_EDWARDS_KEY_PAIR_GEN)}, &eddsaMech{MechBase: edBase(ck.CKM_EDDSA)}}
}

// eddsaMech is CKM_EDDSA bound to its CK_EDDSA_PARAMS (nil: none given,
// Ed25519).
type eddsaMech struct {
	MechBase
	p *eddsaParams
}

// edKeyPairGen is CKM_EC_EDWARDS_KEY_PAIR_GEN.
type edKeyPairGen struct{ MechBase }

// GenerateKeyPair: CKA_EC_PARAMS in the public template names the curve
// (given in the private template too, it must be equal).
func (m *edKeyPairGen) GenerateKeyPair(s Slot, pub, priv attr.Map) (attr.Map, attr.Map, error) {
	params, ok := pub[ck.CKA_EC_PARAMS]
	if !ok {
		return nil, nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_EC_PARAMS missing from the public key template")
	}
	c, err := edCurveOf(params)
	if err != nil {
		return nil, nil, err
	}
	if pv, ok := priv[ck.CKA_EC_PARAMS]; ok && !bytes.Equal(pv, params) {
		return nil, nil, Inconsistent("CKA_EC_PARAMS differs between the public and private templates")
	}
	if c == Edwards448 {
		pk, sk, err := ed448.GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "generate Ed448 key: %v", err)
		}
		seed := bytes.Clone(sk.Seed())
		clear(sk)
		point := EdPoint(pk)
		return attr.Map{ck.CKA_EC_POINT: point}, attr.Map{ck.CKA_EC_PARAMS: bytes.Clone(params), ck.CKA_VALUE: seed, ck.CKA_EC_POINT: point}, nil
	}
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "generate Ed25519 key: %v", err)
	}
	seed := bytes.Clone(sk.Seed())
	clear(sk)
	point := EdPoint(pk)
	pubVals := attr.Map{ck.CKA_EC_POINT: point}
	privVals := attr.Map{ck.CKA_EC_PARAMS: bytes.Clone(params), ck.CKA_VALUE: seed, ck.CKA_EC_POINT: point}
	return pubVals, privVals, nil
}

// eddsaParams are decoded CK_EDDSA_PARAMS (nil: pure Ed25519).
type eddsaParams struct {
	ph      bool
	context string
	opts    ed25519.Options // made once by parseEdDSAParams
}

// pureEd25519 are the options of pure Ed25519, which crypto/ed25519 only
// reads.
var pureEd25519 = &ed25519.Options{}

// options are the crypto/ed25519 options of the parameters.
func (p *eddsaParams) options() *ed25519.Options {
	if p == nil {
		return pureEd25519
	}
	return &p.opts
}

func (m *eddsaMech) withParam(cm *CKMechanism) (Mechanism, error) {
	if len(cm.Param) != 0 || cm.PSS != nil || cm.OAEP != nil || cm.ECDH != nil {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKM_EDDSA takes CK_EDDSA_PARAMS or nothing")
	}
	if cm.EdDSA == nil && m.p == nil {
		return m, nil // nothing to bind: no copy
	}
	b := *m
	b.p = nil
	if cm.EdDSA != nil {
		p, err := parseEdDSAParams(cm.EdDSA)
		if err != nil {
			return nil, err
		}
		b.p = p
	}
	return &b, nil
}

// parseEdDSAParams checks CK_EDDSA_PARAMS: a context of at most 255 bytes.
func parseEdDSAParams(p *EdDSAParams) (*eddsaParams, error) {
	if len(p.Context) > 255 {
		return nil, ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "EdDSA context of %d bytes (at most 255)", len(p.Context))
	}
	ep := &eddsaParams{ph: p.PH, context: string(p.Context)}
	ep.opts.Context = ep.context
	if ep.ph {
		ep.opts.Hash = crypto.SHA512
	}
	return ep, nil
}

// CheckKey: the key's curve must be Ed25519 or Ed448.
func (m *eddsaMech) CheckKey(op Op) error {
	if err := EdCheckParams(op.Key().Attrs()[ck.CKA_EC_PARAMS]); err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "Edwards key without a usable curve: %v", err)
	}
	return nil
}

// curve is the curve of the operation's key (checked at Init).
func (m *eddsaMech) curve(op Op) edCurve {
	c, _ := edCurveOf(op.Key().Attrs()[ck.CKA_EC_PARAMS])
	return c
}

// Accumulator is the operation's input: SHA-512 of the message for
// Ed25519ph, else the message kept whole (Ed448ph hashes it in circl).
func (m *eddsaMech) Accumulator(op Op) (hash.Hash, error) {
	if m.p != nil && m.p.ph && m.curve(op) == edwards25519 {
		return sha512.New(), nil
	}
	mb := &messageBuffer{}
	mb.b = mb.small[:0]
	return mb, nil
}

// messageBuffer is the hash.Hash of a mechanism that signs the whole
// message (PureEdDSA): Sum returns the message. A short one stays in
// small (no second allocation).
type messageBuffer struct {
	b        []byte
	overflow bool
	small    [128]byte
}

func (m *messageBuffer) Write(p []byte) (int, error) {
	if len(m.b)+len(p) > maxEdDSAMessage {
		m.overflow = true
		return len(p), nil
	}
	m.b = append(m.b, p...)
	return len(p), nil
}
func (m *messageBuffer) Sum(b []byte) []byte { return append(b, m.b...) }
func (m *messageBuffer) Reset()              { m.b, m.overflow = m.b[:0], false }
func (m *messageBuffer) Size() int           { return len(m.b) }
func (m *messageBuffer) BlockSize() int      { return 1 }

// eddsaInputOK reports an overflowing multi-part message.
func eddsaInputOK(op Op) error {
	if mb, ok := op.Accumulator().(*messageBuffer); ok && mb.overflow {
		return ck.Errorf(ck.CKR_DATA_LEN_RANGE, "EdDSA message over %d bytes", maxEdDSAMessage)
	}
	return nil
}

// Sign signs msg (the message, or its SHA-512 for Ed25519ph) and
// verifies the signature before release.
func (m *eddsaMech) Sign(op Op, msg []byte) ([]byte, error) {
	if err := eddsaInputOK(op); err != nil {
		return nil, err
	}
	if m.curve(op) == Edwards448 {
		return m.sign448(op, msg)
	}
	k, err := preparedEd(op.Slot(), op.Key())
	if err != nil {
		return nil, err
	}
	opts := m.p.options()
	sig, err := k.Sign(nil, msg, opts)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "Ed25519 sign: %v", err)
	}
	if err := ed25519.VerifyWithOptions(k.Public().(ed25519.PublicKey), msg, sig, opts); err != nil {
		op.Slot().Log().Error("Ed25519 signature failed its check", "object", op.Key().Handle(), "err", err)
		return nil, ck.Errorf(ck.CKR_DEVICE_ERROR, "Ed25519 signature failed its check")
	}
	return sig, nil
}

// Verify checks an Ed25519 signature of msg with the operation's public
// key.
func (m *eddsaMech) Verify(op Op, msg, sig []byte) error {
	if err := eddsaInputOK(op); err != nil {
		return err
	}
	c := m.curve(op)
	pub, err := edPublicBytes(c, op.Key().Attrs()[ck.CKA_EC_POINT])
	if err != nil {
		return ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s key without a usable point", c.name())
	}
	if c == Edwards448 {
		return m.verify448(ed448.PublicKey(pub), msg, sig)
	}
	if len(sig) != ed25519.SignatureSize {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "Ed25519 signature of %d bytes, want 64", len(sig))
	}
	if err := ed25519.VerifyWithOptions(ed25519.PublicKey(pub), msg, sig, m.p.options()); err != nil {
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "Ed25519 signature does not verify")
	}
	return nil
}

// ed448Context is the Ed448 context of the parameters ("" without).
func (p *eddsaParams) ed448Context() string {
	if p == nil {
		return ""
	}
	return p.context
}

// sign448 signs msg with an Ed448 key (Ed448ph with phFlag) and verifies
// the signature before release.
func (m *eddsaMech) sign448(op Op, msg []byte) ([]byte, error) {
	k, err := preparedEd448(op.Slot(), op.Key())
	if err != nil {
		return nil, err
	}
	ctx, ph := m.p.ed448Context(), m.p != nil && m.p.ph
	var sig []byte
	if ph {
		sig = ed448.SignPh(k, msg, ctx)
	} else {
		sig = ed448.Sign(k, msg, ctx)
	}
	if m.verify448(k.Public().(ed448.PublicKey), msg, sig) != nil {
		op.Slot().Log().Error("Ed448 signature failed its check", "object", op.Key().Handle())
		return nil, ck.Errorf(ck.CKR_DEVICE_ERROR, "Ed448 signature failed its check")
	}
	return sig, nil
}

// verify448 checks an Ed448 (or Ed448ph) signature of msg.
func (m *eddsaMech) verify448(pub ed448.PublicKey, msg, sig []byte) error {
	if len(sig) != ed448.SignatureSize {
		return ck.Errorf(ck.CKR_SIGNATURE_LEN_RANGE, "Ed448 signature of %d bytes, want 114", len(sig))
	}
	ctx := m.p.ed448Context()
	var ok bool
	if m.p != nil && m.p.ph {
		ok = ed448.VerifyPh(pub, msg, sig, ctx)
	} else {
		ok = ed448.Verify(pub, msg, sig, ctx)
	}
	if !ok {
		return ck.Errorf(ck.CKR_SIGNATURE_INVALID, "Ed448 signature does not verify")
	}
	return nil
}
