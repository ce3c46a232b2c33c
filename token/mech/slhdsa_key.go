package mech

// SLH-DSA keys (CKK_SLH_DSA, FIPS 205; PKCS#11 3.2): the key type, its
// twelve parameter sets and the private key prepared for signing.
// github.com/cloudflare/circl's sign/slhdsa does the hashing. The
// mechanisms are in slhdsa.go.
//
//   - CKA_PARAMETER_SET is one of CKP_SLH_DSA_SHA2_128S ...
//     CKP_SLH_DSA_SHAKE_256F (1 to 12, the order of FIPS 205's table and
//     of circl's IDs); another value is CKR_PARAMETER_SET_NOT_SUPPORTED.
//   - A public key's CKA_VALUE is PK.seed ‖ PK.root (2n bytes), a private
//     key's SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root (4n bytes), sealed. On
//     import a private key's root is recomputed from its seeds (the cost
//     of a key generation) and must be the one given.
//   - Both keys get CKA_PUBLIC_KEY_INFO (SubjectPublicKeyInfo with the
//     parameter set's id-slh-dsa-* OID of NIST's CSOR, no parameters).
//   - CK_MECHANISM_INFO's key sizes are the parameter sets (1 to 12), and
//     so is the key size the token compares with them.

import (
	"bytes"
	"encoding/asn1"
	"strconv"

	"github.com/cloudflare/circl/sign/slhdsa"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// slhdsaSet is one SLH-DSA parameter set.
type slhdsaSet struct {
	ckp  uint64
	id   slhdsa.ID
	Name string
	OID  asn1.ObjectIdentifier
}

// N is the set's security parameter in bytes.
func (s *slhdsaSet) N() int { return s.id.Scheme().PublicKeySize() / 2 }

// SLHDSASets are the parameter sets by CKP_ value: circl's IDs have the
// same numbers, and the CSOR OIDs are 2.16.840.1.101.3.4.3.20 (SHA2-128s)
// to .31 (SHAKE-256f) in FIPS 205's order.
var SLHDSASets = func() map[uint64]*slhdsaSet {
	order := []struct {
		ckp uint64
		id  slhdsa.ID
		arc int
	}{
		{ck.CKP_SLH_DSA_SHA2_128S, slhdsa.SHA2_128s, 20}, {ck.CKP_SLH_DSA_SHA2_128F, slhdsa.SHA2_128f, 21},
		{ck.CKP_SLH_DSA_SHA2_192S, slhdsa.SHA2_192s, 22}, {ck.CKP_SLH_DSA_SHA2_192F, slhdsa.SHA2_192f, 23},
		{ck.CKP_SLH_DSA_SHA2_256S, slhdsa.SHA2_256s, 24}, {ck.CKP_SLH_DSA_SHA2_256F, slhdsa.SHA2_256f, 25},
		{ck.CKP_SLH_DSA_SHAKE_128S, slhdsa.SHAKE_128s, 26}, {ck.CKP_SLH_DSA_SHAKE_128F, slhdsa.SHAKE_128f, 27},
		{ck.CKP_SLH_DSA_SHAKE_192S, slhdsa.SHAKE_192s, 28}, {ck.CKP_SLH_DSA_SHAKE_192F, slhdsa.SHAKE_192f, 29},
		{ck.CKP_SLH_DSA_SHAKE_256S, slhdsa.SHAKE_256s, 30}, {ck.CKP_SLH_DSA_SHAKE_256F, slhdsa.SHAKE_256f, 31},
	}
	m := map[uint64]*slhdsaSet{}
	for _, o := range order {
		m[o.ckp] = &slhdsaSet{ckp: o.ckp, id: o.id, Name: o.id.String(),
			OID: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 3, o.arc}}
	}
	return m
}()

// SLH-DSA's schemas.
var (
	slhdsaPublicSchema = attr.PublicKeySchema.With(attr.Schema{
		ck.CKA_PARAMETER_SET: {Kind: attr.KindULong, Flags: attr.Required | attr.Fixed},
		ck.CKA_VALUE:         {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated},
	})
	slhdsaPrivateSchema = attr.PrivateKeySchema.With(attr.Schema{
		// Required on import; on generation taken from the public
		// template (given here too, it must be the same).
		ck.CKA_PARAMETER_SET: {Kind: attr.KindULong, Flags: attr.Required | attr.Fixed},
		ck.CKA_VALUE:         {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated | attr.Secret},
	})
)

func init() {
	registerKeyType(&KeyType{
		typ:             ck.CKK_SLH_DSA,
		PublicSchema:    slhdsaPublicSchema,
		PrivateSchema:   slhdsaPrivateSchema,
		CompletePublic:  CompleteSLHDSAPublic,
		CompletePrivate: CompleteSLHDSAPrivate,
		Bits: func(a attr.Map) int {
			set, err := slhdsaSetOf(a)
			if err != nil {
				return 0
			}
			return int(set.ckp)
		},
	})
}

// slhdsaSetByValue decodes a CKA_PARAMETER_SET value.
func slhdsaSetByValue(v []byte, present bool) (*slhdsaSet, error) {
	if !present {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_PARAMETER_SET missing")
	}
	p, ok := ck.ParseULong(v)
	if !ok {
		return nil, Invalid(ck.CKA_PARAMETER_SET, "not a CK_ULONG")
	}
	set, ok := SLHDSASets[p]
	if !ok {
		return nil, ck.Errorf(ck.CKR_PARAMETER_SET_NOT_SUPPORTED, "SLH-DSA parameter set %d (1 to 12)", p)
	}
	return set, nil
}

// slhdsaSetOf returns the parameter set of a key's attributes.
func slhdsaSetOf(a attr.Map) (*slhdsaSet, error) {
	v, ok := a[ck.CKA_PARAMETER_SET]
	return slhdsaSetByValue(v, ok)
}

// slhdsaPublicKey decodes a public key of set.
func slhdsaPublicKey(set *slhdsaSet, b []byte) (*slhdsa.PublicKey, error) {
	pk := &slhdsa.PublicKey{ID: set.id}
	if len(b) != 2*set.N() || pk.UnmarshalBinary(b) != nil {
		return nil, Invalid(ck.CKA_VALUE, "an "+set.Name+" public key has "+strconv.Itoa(2*set.N())+" bytes")
	}
	return pk, nil
}

// slhdsaPrivateKey decodes a private key of set and checks its root
// against its seeds.
func slhdsaPrivateKey(set *slhdsaSet, b []byte) (*slhdsa.PrivateKey, error) {
	n := set.N()
	sk := &slhdsa.PrivateKey{ID: set.id}
	if len(b) != 4*n || sk.UnmarshalBinary(b) != nil {
		return nil, Invalid(ck.CKA_VALUE, "an "+set.Name+" private key has "+strconv.Itoa(4*n)+" bytes")
	}
	// FIPS 205's key generation reads SK.seed, SK.prf, PK.seed: the
	// key's first 3n bytes.
	pub, _, err := slhdsa.GenerateKey(bytes.NewReader(b[:3*n]), set.id)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "recompute %s public key: %v", set.Name, err)
	}
	if !pub.Equal(sk.PublicKey()) {
		return nil, Invalid(ck.CKA_VALUE, "the "+set.Name+" private key's PK.root is not the root of its seeds")
	}
	return sk, nil
}

// CompleteSLHDSAPublic checks an SLH-DSA public key template and adds
// its CKA_PUBLIC_KEY_INFO.
func CompleteSLHDSAPublic(a attr.Map) error {
	set, err := slhdsaSetOf(a)
	if err != nil {
		return err
	}
	if _, err := slhdsaPublicKey(set, a[ck.CKA_VALUE]); err != nil {
		return err
	}
	a[ck.CKA_PUBLIC_KEY_INFO] = pqSPKI(set.OID, a[ck.CKA_VALUE])
	return nil
}

// CompleteSLHDSAPrivate checks an SLH-DSA private key template and adds
// what follows from the key.
func CompleteSLHDSAPrivate(a attr.Map) error {
	set, err := slhdsaSetOf(a)
	if err != nil {
		return err
	}
	v := a[ck.CKA_VALUE]
	if _, err := slhdsaPrivateKey(set, v); err != nil {
		return err
	}
	n := set.N()
	a[ck.CKA_VALUE] = bytes.Clone(v)
	a[ck.CKA_PUBLIC_KEY_INFO] = pqSPKI(set.OID, v[2*n:])
	return nil
}

// slhdsaKey is an SLH-DSA private key prepared for signing.
type slhdsaKey struct {
	set *slhdsaSet
	sk  *slhdsa.PrivateKey
	pk  *slhdsa.PublicKey
}

// preparedSLHDSA returns the prepared SLH-DSA private key of o, once per
// snapshot (the root was checked when the key was stored).
func preparedSLHDSA(s Slot, o Key) (*slhdsaKey, error) {
	return preparedKey(o, func() error { return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed") }, func() (*slhdsaKey, error) {
		set, err := slhdsaSetOf(o.Attrs())
		if err != nil {
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored SLH-DSA key: %v", err)
		}
		sk := &slhdsa.PrivateKey{ID: set.id}
		if v := o.Attrs()[ck.CKA_VALUE]; len(v) != 4*set.N() || sk.UnmarshalBinary(v) != nil {
			s.Log().Error("stored SLH-DSA key unusable", "object", o.Handle())
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s key unusable", set.Name)
		}
		pk := sk.PublicKey()
		k := &slhdsaKey{set: set, sk: sk, pk: &pk}
		return k, nil
	})
}
