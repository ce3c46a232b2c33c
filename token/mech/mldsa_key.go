package mech

// ML-DSA keys (CKK_ML_DSA, FIPS 204; PKCS#11 3.2): the key type, its
// parameter sets and encodings, and the private key prepared for signing.
// github.com/cloudflare/circl's sign/mldsa does the arithmetic (in
// constant time). The mechanisms are in mldsa.go.
//
//   - CKA_PARAMETER_SET is CKP_ML_DSA_44, _65 or _87 (a CK_ULONG); another
//     value is CKR_PARAMETER_SET_NOT_SUPPORTED.
//   - A public key's CKA_VALUE is the FIPS 204 public key (pkEncode).
//   - A private key is kept as its 32-byte seed ξ in CKA_SEED (what key
//     generation stores); the expanded key (skEncode) is derived from it
//     when the key is first used. A key imported as the expanded key alone
//     is kept in CKA_VALUE. Given both, they must agree, and the seed is
//     kept. Both are private values, stored sealed. An expanded key is
//     checked on import: its length, the range of s1 and s2, and that its
//     tr is the hash of the public key it implies.
//   - Both keys get CKA_PUBLIC_KEY_INFO (SubjectPublicKeyInfo,
//     id-ml-dsa-44/65/87 of NIST's CSOR, no parameters).
//   - CK_MECHANISM_INFO's key sizes are the parameter sets (1 to 3), and
//     so is the key size the token compares with them.

import (
	"bytes"
	"crypto/sha3"
	"crypto/subtle"
	"encoding/asn1"
	"strconv"

	circlsign "github.com/cloudflare/circl/sign"
	"github.com/cloudflare/circl/sign/mldsa/mldsa44"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/mldsa/mldsa87"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// mldsaSeedSize is the length of an ML-DSA seed ξ.
const mldsaSeedSize = 32

// mldsaSet is one ML-DSA parameter set.
type mldsaSet struct {
	ckp    uint64
	name   string
	OID    asn1.ObjectIdentifier
	Scheme circlsign.Scheme
	// k, l, eta are FIPS 204's parameters, for the check of an expanded
	// key's s1 and s2.
	k, l, eta int
	// SignTo signs msg with context ctx, hedged when randomized.
	SignTo func(sk circlsign.PrivateKey, msg, ctx []byte, randomized bool) ([]byte, error)
	// verify checks sig over msg with context ctx.
	verify func(pk circlsign.PublicKey, msg, ctx, sig []byte) bool
}

// MLDSASets are the parameter sets by CKP_ value.
var MLDSASets = map[uint64]*mldsaSet{
	ck.CKP_ML_DSA_44: {
		ckp: ck.CKP_ML_DSA_44, name: "ML-DSA-44", OID: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 3, 17},
		Scheme: mldsa44.Scheme(), k: 4, l: 4, eta: 2,
		SignTo: func(sk circlsign.PrivateKey, msg, ctx []byte, rnd bool) ([]byte, error) {
			sig := make([]byte, mldsa44.SignatureSize)
			return sig, mldsa44.SignTo(sk.(*mldsa44.PrivateKey), msg, ctx, rnd, sig)
		},
		verify: func(pk circlsign.PublicKey, msg, ctx, sig []byte) bool {
			return mldsa44.Verify(pk.(*mldsa44.PublicKey), msg, ctx, sig)
		},
	},
	ck.CKP_ML_DSA_65: {
		ckp: ck.CKP_ML_DSA_65, name: "ML-DSA-65", OID: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 3, 18},
		Scheme: mldsa65.Scheme(), k: 6, l: 5, eta: 4,
		SignTo: func(sk circlsign.PrivateKey, msg, ctx []byte, rnd bool) ([]byte, error) {
			sig := make([]byte, mldsa65.SignatureSize)
			return sig, mldsa65.SignTo(sk.(*mldsa65.PrivateKey), msg, ctx, rnd, sig)
		},
		verify: func(pk circlsign.PublicKey, msg, ctx, sig []byte) bool {
			return mldsa65.Verify(pk.(*mldsa65.PublicKey), msg, ctx, sig)
		},
	},
	ck.CKP_ML_DSA_87: {
		ckp: ck.CKP_ML_DSA_87, name: "ML-DSA-87", OID: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 3, 19},
		Scheme: mldsa87.Scheme(), k: 8, l: 7, eta: 2,
		SignTo: func(sk circlsign.PrivateKey, msg, ctx []byte, rnd bool) ([]byte, error) {
			sig := make([]byte, mldsa87.SignatureSize)
			return sig, mldsa87.SignTo(sk.(*mldsa87.PrivateKey), msg, ctx, rnd, sig)
		},
		verify: func(pk circlsign.PublicKey, msg, ctx, sig []byte) bool {
			return mldsa87.Verify(pk.(*mldsa87.PublicKey), msg, ctx, sig)
		},
	},
}

// ML-DSA's schemas.
var (
	mldsaPublicSchema = attr.PublicKeySchema.With(attr.Schema{
		ck.CKA_PARAMETER_SET: {Kind: attr.KindULong, Flags: attr.Required | attr.Fixed},
		ck.CKA_VALUE:         {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated},
	})
	mldsaPrivateSchema = attr.PrivateKeySchema.With(attr.Schema{
		// Required on import; on generation taken from the public
		// template (given here too, it must be the same).
		ck.CKA_PARAMETER_SET: {Kind: attr.KindULong, Flags: attr.Required | attr.Fixed},
		// One of the two is required on import (completeMLDSAPrivate).
		ck.CKA_SEED:  {Kind: attr.KindBytes, Flags: attr.Fixed | attr.Generated | attr.Secret},
		ck.CKA_VALUE: {Kind: attr.KindBytes, Flags: attr.Fixed | attr.Generated | attr.Secret},
	})
)

func init() {
	registerKeyType(&KeyType{
		typ:             ck.CKK_ML_DSA,
		PublicSchema:    mldsaPublicSchema,
		PrivateSchema:   mldsaPrivateSchema,
		CompletePublic:  CompleteMLDSAPublic,
		CompletePrivate: CompleteMLDSAPrivate,
		Bits: func(a attr.Map) int {
			set, err := mldsaSetOf(a)
			if err != nil {
				return 0
			}
			return int(set.ckp)
		},
	})
}

// MLDSASetByValue decodes a CKA_PARAMETER_SET value.
func MLDSASetByValue(v []byte, present bool) (*mldsaSet, error) {
	if !present {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_PARAMETER_SET missing")
	}
	p, ok := ck.ParseULong(v)
	if !ok {
		return nil, Invalid(ck.CKA_PARAMETER_SET, "not a CK_ULONG")
	}
	set, ok := MLDSASets[p]
	if !ok {
		return nil, ck.Errorf(ck.CKR_PARAMETER_SET_NOT_SUPPORTED, "ML-DSA parameter set %d (CKP_ML_DSA_44, _65, _87 are 1, 2, 3)", p)
	}
	return set, nil
}

// mldsaSetOf returns the parameter set of a key's attributes.
func mldsaSetOf(a attr.Map) (*mldsaSet, error) {
	v, ok := a[ck.CKA_PARAMETER_SET]
	return MLDSASetByValue(v, ok)
}

// mldsaSPKI is the SubjectPublicKeyInfo of an ML-DSA public key.
func mldsaSPKI(set *mldsaSet, pub []byte) []byte { return pqSPKI(set.OID, pub) }

// pqSPKI is a SubjectPublicKeyInfo with an absent algorithm parameter
// (ML-DSA, SLH-DSA, Ed448).
func pqSPKI(oid asn1.ObjectIdentifier, pub []byte) []byte {
	der, err := asn1.Marshal(struct {
		Algorithm struct{ Algorithm asn1.ObjectIdentifier }
		PublicKey asn1.BitString
	}{struct{ Algorithm asn1.ObjectIdentifier }{oid}, asn1.BitString{Bytes: pub, BitLength: 8 * len(pub)}})
	if err != nil {
		return []byte{}
	}
	return der
}

// CompleteMLDSAPublic checks an ML-DSA public key template and adds its
// CKA_PUBLIC_KEY_INFO.
func CompleteMLDSAPublic(a attr.Map) error {
	set, err := mldsaSetOf(a)
	if err != nil {
		return err
	}
	pub := a[ck.CKA_VALUE]
	if _, err := set.Scheme.UnmarshalBinaryPublicKey(pub); err != nil {
		return Invalid(ck.CKA_VALUE, "not an "+set.name+" public key")
	}
	a[ck.CKA_PUBLIC_KEY_INFO] = mldsaSPKI(set, pub)
	return nil
}

// mldsaExpandedOK checks an expanded ML-DSA private key (skEncode): every
// coefficient of s1 and s2 in [-η, η], that is its packed value at most
// 2η. The check runs in time independent of the coefficients.
func mldsaExpandedOK(set *mldsaSet, sk []byte) bool {
	bitsPer := 3
	if set.eta == 4 {
		bitsPer = 4
	}
	polyBytes := 256 * bitsPer / 8
	start := 128 // ρ, K, tr
	end := start + (set.l+set.k)*polyBytes
	if len(sk) < end {
		return false
	}
	var bad int32
	limit := int32(2 * set.eta)
	var acc, nacc uint32
	for _, b := range sk[start:end] {
		acc |= uint32(b) << nacc
		nacc += 8
		for nacc >= uint32(bitsPer) {
			c := int32(acc & (1<<bitsPer - 1))
			bad |= (limit - c) >> 31
			acc >>= bitsPer
			nacc -= uint32(bitsPer)
		}
	}
	return bad == 0
}

// mldsaFromExpanded decodes and checks an expanded private key; it
// returns the key and its public key.
func mldsaFromExpanded(set *mldsaSet, b []byte) (circlsign.PrivateKey, circlsign.PublicKey, error) {
	if len(b) != set.Scheme.PrivateKeySize() {
		return nil, nil, Invalid(ck.CKA_VALUE, "an "+set.name+" private key has "+strconv.Itoa(set.Scheme.PrivateKeySize())+" bytes")
	}
	if !mldsaExpandedOK(set, b) {
		return nil, nil, Invalid(ck.CKA_VALUE, "an "+set.name+" private key with s1 or s2 out of range")
	}
	sk, err := set.Scheme.UnmarshalBinaryPrivateKey(b)
	if err != nil {
		return nil, nil, Invalid(ck.CKA_VALUE, "not an "+set.name+" private key")
	}
	pk := sk.Public().(circlsign.PublicKey)
	pkb, err := pk.MarshalBinary()
	if err != nil {
		return nil, nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "encode %s public key: %v", set.name, err)
	}
	tr := make([]byte, 64)
	h := sha3.NewSHAKE256()
	_, _ = h.Write(pkb)
	_, _ = h.Read(tr)
	if subtle.ConstantTimeCompare(tr, b[64:128]) != 1 {
		return nil, nil, Invalid(ck.CKA_VALUE, "an "+set.name+" private key whose tr is not the hash of its public key")
	}
	return sk, pk, nil
}

// mldsaFromSeed derives the key pair of a seed.
func mldsaFromSeed(set *mldsaSet, seed []byte) (circlsign.PrivateKey, circlsign.PublicKey, error) {
	if len(seed) != mldsaSeedSize {
		return nil, nil, Invalid(ck.CKA_SEED, "an ML-DSA seed has 32 bytes")
	}
	pk, sk := set.Scheme.DeriveKey(seed)
	return sk, pk, nil
}

// CompleteMLDSAPrivate checks an ML-DSA private key template (the seed,
// the expanded key or both) and adds what follows from the key.
func CompleteMLDSAPrivate(a attr.Map) error {
	set, err := mldsaSetOf(a)
	if err != nil {
		return err
	}
	seed, hasSeed := a[ck.CKA_SEED]
	expanded, hasExpanded := a[ck.CKA_VALUE]
	var pk circlsign.PublicKey
	switch {
	case hasSeed:
		var sk circlsign.PrivateKey
		if sk, pk, err = mldsaFromSeed(set, seed); err != nil {
			return err
		}
		if hasExpanded {
			if _, _, err := mldsaFromExpanded(set, expanded); err != nil {
				return err
			}
			derived, err := sk.MarshalBinary()
			if err != nil {
				return ck.Errorf(ck.CKR_FUNCTION_FAILED, "encode %s private key: %v", set.name, err)
			}
			same := subtle.ConstantTimeCompare(derived, expanded) == 1
			clear(derived)
			if !same {
				return Inconsistent("CKA_VALUE is not the expanded key of CKA_SEED")
			}
			delete(a, ck.CKA_VALUE)
		}
		a[ck.CKA_SEED] = bytes.Clone(seed)
	case hasExpanded:
		if _, pk, err = mldsaFromExpanded(set, expanded); err != nil {
			return err
		}
		a[ck.CKA_VALUE] = bytes.Clone(expanded)
	default:
		return ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "an ML-DSA private key needs CKA_SEED or CKA_VALUE")
	}
	pkb, err := pk.MarshalBinary()
	if err != nil {
		return ck.Errorf(ck.CKR_FUNCTION_FAILED, "encode %s public key: %v", set.name, err)
	}
	a[ck.CKA_PUBLIC_KEY_INFO] = mldsaSPKI(set, pkb)
	return nil
}

// mldsaKey is an ML-DSA private key prepared for signing: the expanded
// key and its public key.
type mldsaKey struct {
	set *mldsaSet
	sk  circlsign.PrivateKey
	pk  circlsign.PublicKey
}

// preparedMLDSA returns the prepared ML-DSA private key of o, once per
// snapshot.
func preparedMLDSA(s Slot, o Key) (*mldsaKey, error) {
	return preparedKey(o, func() error { return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed") }, func() (*mldsaKey, error) {
		set, err := mldsaSetOf(o.Attrs())
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored ML-DSA key: %v", err)
		}
		var sk circlsign.PrivateKey
		var pk circlsign.PublicKey
		if seed, ok := o.Attrs()[ck.CKA_SEED]; ok {
			sk, pk, err = mldsaFromSeed(set, seed)
		} else {
			sk, pk, err = mldsaFromExpanded(set, o.Attrs()[ck.CKA_VALUE])
		}
		if err != nil {
			s.Log().Error("stored ML-DSA key unusable", "object", o.Handle())
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s key unusable", set.name)
		}
		k := &mldsaKey{set: set, sk: sk, pk: pk}
		return k, nil
	})
}

// mldsaPublicKey is an ML-DSA public key decoded for verifying.
type mldsaPublicKey struct {
	set *mldsaSet
	pk  circlsign.PublicKey
}

// preparedMLDSAPublic returns the decoded ML-DSA public key of o, once per
// snapshot (decoding expands the matrix A: five times the cost of the
// verification itself).
func preparedMLDSAPublic(s Slot, o Key) (*mldsaPublicKey, error) {
	return preparedKey(o, nil, func() (*mldsaPublicKey, error) {
		set, err := mldsaSetOf(o.Attrs())
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored ML-DSA key: %v", err)
		}
		pk, err := set.Scheme.UnmarshalBinaryPublicKey(o.Attrs()[ck.CKA_VALUE])
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s public key unusable", set.name)
		}
		k := &mldsaPublicKey{set: set, pk: pk}
		return k, nil
	})
}
