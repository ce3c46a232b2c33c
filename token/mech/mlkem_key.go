package mech

// ML-KEM keys (CKK_ML_KEM, FIPS 203): the key type, its parameter sets and
// the key prepared for decapsulation. The mechanisms are in mlkem.go.
//
//   - CKA_PARAMETER_SET is CKP_ML_KEM_512, CKP_ML_KEM_768 or
//     CKP_ML_KEM_1024. Generation takes it from the public template; on
//     import it may be left out and is then read from the key's length
//     (a value that does not fit the key is CKR_TEMPLATE_INCONSISTENT, an
//     unknown one CKR_ATTRIBUTE_VALUE_INVALID).
//   - A public key's CKA_VALUE is the encapsulation key ek (800, 1184 or
//     1568 bytes); one whose coefficients are not reduced modulo q (FIPS
//     203 §7.2's modulus check) is CKR_ATTRIBUTE_VALUE_INVALID.
//   - A private key is kept as its 64-byte seed d‖z (CKA_SEED, sealed like
//     every private value); the expanded decapsulation key (CKA_VALUE,
//     1632, 2400 or 3168 bytes) is derived from it when the key is used and
//     not stored. A key imported in the expanded form alone keeps that
//     form in CKA_VALUE (sealed); it is checked as FIPS 203 §7.3 says
//     (length, the hash H(ek) it holds, the modulus check of its ek).
//     Imported with both, the two must agree (CKR_TEMPLATE_INCONSISTENT).
//   - Both keys get CKA_PUBLIC_KEY_INFO, the SubjectPublicKeyInfo of ek
//     under id-alg-ml-kem-512/768/1024 (NIST, 2.16.840.1.101.3.4.4.1–3).
//   - CKA_ENCAPSULATE (public) and CKA_DECAPSULATE (private) default to
//     true; CKA_ENCAPSULATE_TEMPLATE and CKA_DECAPSULATE_TEMPLATE are added
//     to the template of the key they make (token/kem.go).
//   - The key size, as CK_MECHANISM_INFO counts it, is the parameter
//     set's number: 512, 768, 1024.
//
// # Libraries
//
// ML-KEM-768 and ML-KEM-1024 keys given by their seed, and every
// encapsulation to them, are Go's crypto/mlkem; ML-KEM-512 and keys held
// in the expanded form are github.com/cloudflare/circl's kem/mlkem (Go's
// package has neither). Both are constant-time in the secret values.

import (
	"bytes"
	"crypto/mlkem"
	"crypto/sha3"
	"crypto/subtle"
	"encoding/asn1"
	"fmt"

	"github.com/cloudflare/circl/kem"
	"github.com/cloudflare/circl/kem/mlkem/mlkem1024"
	"github.com/cloudflare/circl/kem/mlkem/mlkem512"
	"github.com/cloudflare/circl/kem/mlkem/mlkem768"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// mlkemSeedLen is the length of an ML-KEM private seed d‖z.
const mlkemSeedLen = 64

// mlkemParams describes one ML-KEM parameter set.
type mlkemParams struct {
	set    uint64 // CKP_ML_KEM_*
	Name   string // "ML-KEM-768"
	k      int    // module rank
	OID    asn1.ObjectIdentifier
	scheme kem.Scheme // circl's, for ML-KEM-512 and expanded keys
}

func (p *mlkemParams) ekLen() int { return 384*p.k + 32 }
func (p *mlkemParams) dkLen() int { return 768*p.k + 96 }
func (p *mlkemParams) CTLen() int { return p.scheme.CiphertextSize() }
func (p *mlkemParams) bits() int  { return 256 * p.k }

// MLKEMSets are the parameter sets, by CKP_ value.
var MLKEMSets = map[uint64]*mlkemParams{
	ck.CKP_ML_KEM_512:  {set: ck.CKP_ML_KEM_512, Name: "ML-KEM-512", k: 2, OID: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 4, 1}, scheme: mlkem512.Scheme()},
	ck.CKP_ML_KEM_768:  {set: ck.CKP_ML_KEM_768, Name: "ML-KEM-768", k: 3, OID: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 4, 2}, scheme: mlkem768.Scheme()},
	ck.CKP_ML_KEM_1024: {set: ck.CKP_ML_KEM_1024, Name: "ML-KEM-1024", k: 4, OID: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 4, 3}, scheme: mlkem1024.Scheme()},
}

var (
	mlkemPublicSchema = attr.PublicKeySchema.With(attr.Schema{
		ck.CKA_PARAMETER_SET:        {Kind: attr.KindULong, Flags: attr.Fixed},
		ck.CKA_VALUE:                {Kind: attr.KindBytes, Flags: attr.Required | attr.Fixed | attr.Generated},
		ck.CKA_ENCAPSULATE:          {Kind: attr.KindBool, Default: attr.True},
		ck.CKA_ENCAPSULATE_TEMPLATE: {Kind: attr.KindAttrs, Default: attr.Empty},
	})
	mlkemPrivateSchema = attr.PrivateKeySchema.With(attr.Schema{
		ck.CKA_PARAMETER_SET:        {Kind: attr.KindULong, Flags: attr.Fixed},
		ck.CKA_SEED:                 {Kind: attr.KindBytes, Flags: attr.Fixed | attr.Generated | attr.Secret},
		ck.CKA_VALUE:                {Kind: attr.KindBytes, Flags: attr.Fixed | attr.Generated | attr.Secret},
		ck.CKA_DECAPSULATE:          {Kind: attr.KindBool, Default: attr.True},
		ck.CKA_DECAPSULATE_TEMPLATE: {Kind: attr.KindAttrs, Default: attr.Empty},
	})
)

func init() {
	registerKeyType(&KeyType{
		typ:             ck.CKK_ML_KEM,
		PublicSchema:    mlkemPublicSchema,
		PrivateSchema:   mlkemPrivateSchema,
		CompletePublic:  completeMLKEMPublic,
		CompletePrivate: completeMLKEMPrivate,
		Bits: func(a attr.Map) int {
			p, err := mlkemParamsOf(a)
			if err != nil {
				return 0
			}
			return p.bits()
		},
	})
}

// mlkemParamsOf returns the parameter set of a stored key.
func mlkemParamsOf(a attr.Map) (*mlkemParams, error) {
	v, ok := a.ULong(ck.CKA_PARAMETER_SET)
	if !ok {
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "ML-KEM key without CKA_PARAMETER_SET")
	}
	p, ok := MLKEMSets[v]
	if !ok {
		return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "ML-KEM key with parameter set %d", v)
	}
	return p, nil
}

// mlkemParamSet resolves a template's parameter set: the one it names
// (which must fit the length n of the key when fits is given), else the
// one fits picks from n.
func mlkemParamSet(a attr.Map, n int, fits func(p *mlkemParams) int) (*mlkemParams, error) {
	if _, present := a[ck.CKA_PARAMETER_SET]; present {
		v, ok := a.ULong(ck.CKA_PARAMETER_SET)
		p, known := MLKEMSets[v]
		if !ok || !known {
			return nil, Invalid(ck.CKA_PARAMETER_SET, "not an ML-KEM parameter set (CKP_ML_KEM_512, _768, _1024)")
		}
		if fits != nil && fits(p) != n {
			return nil, Inconsistent(fmt.Sprintf("a %s key has %d bytes, not %d", p.Name, fits(p), n))
		}
		return p, nil
	}
	if fits != nil {
		for _, p := range MLKEMSets {
			if fits(p) == n {
				return p, nil
			}
		}
		return nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "ML-KEM key of %d bytes fits no parameter set", n)
	}
	return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_PARAMETER_SET missing")
}

// checkEK applies FIPS 203 §7.2's checks to an encapsulation key: its
// length and the modulus check (every coefficient below q).
func (p *mlkemParams) checkEK(ek []byte) error {
	if len(ek) != p.ekLen() {
		return fmt.Errorf("%s encapsulation key of %d bytes, want %d", p.Name, len(ek), p.ekLen())
	}
	var err error
	switch p.set {
	case ck.CKP_ML_KEM_768:
		_, err = mlkem.NewEncapsulationKey768(ek)
	case ck.CKP_ML_KEM_1024:
		_, err = mlkem.NewEncapsulationKey1024(ek)
	default:
		_, err = p.scheme.UnmarshalBinaryPublicKey(ek)
	}
	if err != nil {
		return fmt.Errorf("%s encapsulation key: %w", p.Name, err)
	}
	return nil
}

// Encapsulate makes a shared secret and its ciphertext for ek.
func (p *mlkemParams) Encapsulate(ek []byte) (ct, secret []byte, err error) {
	switch p.set {
	case ck.CKP_ML_KEM_768:
		k, err := mlkem.NewEncapsulationKey768(ek)
		if err != nil {
			return nil, nil, err
		}
		secret, ct = k.Encapsulate()
		return ct, secret, nil
	case ck.CKP_ML_KEM_1024:
		k, err := mlkem.NewEncapsulationKey1024(ek)
		if err != nil {
			return nil, nil, err
		}
		secret, ct = k.Encapsulate()
		return ct, secret, nil
	}
	pk, err := p.scheme.UnmarshalBinaryPublicKey(ek)
	if err != nil {
		return nil, nil, err
	}
	return p.scheme.Encapsulate(pk)
}

// mlkemPrivate is an ML-KEM decapsulation key ready for use.
type mlkemPrivate struct {
	p   *mlkemParams
	EK  []byte
	dec func(ct []byte) ([]byte, error)
}

// FromSeed expands the 64-byte seed d‖z.
func (p *mlkemParams) FromSeed(seed []byte) (*mlkemPrivate, error) {
	if len(seed) != mlkemSeedLen {
		return nil, fmt.Errorf("ML-KEM seed of %d bytes, want 64", len(seed))
	}
	switch p.set {
	case ck.CKP_ML_KEM_768:
		k, err := mlkem.NewDecapsulationKey768(seed)
		if err != nil {
			return nil, err
		}
		return &mlkemPrivate{p: p, EK: k.EncapsulationKey().Bytes(), dec: k.Decapsulate}, nil
	case ck.CKP_ML_KEM_1024:
		k, err := mlkem.NewDecapsulationKey1024(seed)
		if err != nil {
			return nil, err
		}
		return &mlkemPrivate{p: p, EK: k.EncapsulationKey().Bytes(), dec: k.Decapsulate}, nil
	}
	pk, sk := p.scheme.DeriveKeyPair(seed)
	return p.circlPrivate(pk, sk)
}

// fromExpanded parses an expanded decapsulation key dkPKE‖ek‖H(ek)‖z and
// checks it (FIPS 203 §7.3: its length, H(ek), and ek's modulus check).
func (p *mlkemParams) fromExpanded(dk []byte) (*mlkemPrivate, error) {
	if len(dk) != p.dkLen() {
		return nil, fmt.Errorf("%s decapsulation key of %d bytes, want %d", p.Name, len(dk), p.dkLen())
	}
	ek := dk[384*p.k : 384*p.k+p.ekLen()]
	h := sha3.Sum256(ek)
	if subtle.ConstantTimeCompare(h[:], dk[384*p.k+p.ekLen():384*p.k+p.ekLen()+32]) != 1 {
		return nil, fmt.Errorf("%s decapsulation key: H(ek) does not match", p.Name)
	}
	if err := p.checkEK(ek); err != nil {
		return nil, err
	}
	sk, err := p.scheme.UnmarshalBinaryPrivateKey(dk)
	if err != nil {
		return nil, fmt.Errorf("%s decapsulation key: %w", p.Name, err)
	}
	return p.circlPrivate(sk.Public(), sk)
}

func (p *mlkemParams) circlPrivate(pk kem.PublicKey, sk kem.PrivateKey) (*mlkemPrivate, error) {
	ek, err := pk.MarshalBinary()
	if err != nil {
		return nil, err
	}
	dec := func(ct []byte) ([]byte, error) {
		if len(ct) != p.CTLen() {
			return nil, fmt.Errorf("%s ciphertext of %d bytes, want %d", p.Name, len(ct), p.CTLen())
		}
		return p.scheme.Decapsulate(sk, ct)
	}
	return &mlkemPrivate{p: p, EK: ek, dec: dec}, nil
}

// Expanded is the expanded decapsulation key of a seed (for an import
// that gives both forms).
func (p *mlkemParams) Expanded(seed []byte) ([]byte, error) {
	if len(seed) != mlkemSeedLen {
		return nil, fmt.Errorf("ML-KEM seed of %d bytes, want 64", len(seed))
	}
	_, sk := p.scheme.DeriveKeyPair(seed)
	return sk.MarshalBinary()
}

// mlkemSPKI is the SubjectPublicKeyInfo of ek.
func (p *mlkemParams) spki(ek []byte) []byte {
	der, err := asn1.Marshal(struct {
		Alg struct{ OID asn1.ObjectIdentifier }
		Key asn1.BitString
	}{Alg: struct{ OID asn1.ObjectIdentifier }{p.OID}, Key: asn1.BitString{Bytes: ek, BitLength: 8 * len(ek)}})
	if err != nil {
		return []byte{}
	}
	return der
}

func completeMLKEMPublic(a attr.Map) error {
	ek := a[ck.CKA_VALUE]
	p, err := mlkemParamSet(a, len(ek), (*mlkemParams).ekLen)
	if err != nil {
		return err
	}
	if err := p.checkEK(ek); err != nil {
		return Invalid(ck.CKA_VALUE, err.Error())
	}
	a[ck.CKA_PARAMETER_SET] = ck.ULong(p.set)
	a[ck.CKA_PUBLIC_KEY_INFO] = p.spki(ek)
	return nil
}

func completeMLKEMPrivate(a attr.Map) error {
	seed, hasSeed := a[ck.CKA_SEED]
	dk, hasDK := a[ck.CKA_VALUE]
	var p *mlkemParams
	var err error
	switch {
	case hasDK:
		p, err = mlkemParamSet(a, len(dk), (*mlkemParams).dkLen)
	case hasSeed:
		p, err = mlkemParamSet(a, 0, nil)
	default:
		return ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "an ML-KEM private key needs CKA_SEED or CKA_VALUE")
	}
	if err != nil {
		return err
	}
	var k *mlkemPrivate
	if hasSeed {
		if len(seed) != mlkemSeedLen {
			return Invalid(ck.CKA_SEED, "an ML-KEM seed has 64 bytes (d‖z)")
		}
		if k, err = p.FromSeed(seed); err != nil {
			return Invalid(ck.CKA_SEED, err.Error())
		}
		if hasDK {
			want, err := p.Expanded(seed)
			if err != nil {
				return Invalid(ck.CKA_SEED, err.Error())
			}
			same := subtle.ConstantTimeCompare(want, dk)
			clear(want)
			if same != 1 {
				return Inconsistent("CKA_VALUE is not the expanded key of CKA_SEED")
			}
		}
		// Kept as the seed: the expanded key is derived on use.
		delete(a, ck.CKA_VALUE)
		a[ck.CKA_SEED] = bytes.Clone(seed)
	} else {
		if k, err = p.fromExpanded(dk); err != nil {
			return Invalid(ck.CKA_VALUE, err.Error())
		}
		a[ck.CKA_VALUE] = bytes.Clone(dk)
	}
	a[ck.CKA_PARAMETER_SET] = ck.ULong(p.set)
	a[ck.CKA_PUBLIC_KEY_INFO] = p.spki(k.EK)
	return nil
}

// preparedMLKEM returns the decapsulation key of o, once per snapshot.
func preparedMLKEM(s Slot, o Key) (*mlkemPrivate, error) {
	return preparedKey(o, func() error { return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "private values of the key are sealed") }, func() (*mlkemPrivate, error) {
		p, err := mlkemParamsOf(o.Attrs())
		if err != nil {
			return nil, err
		}
		var k *mlkemPrivate
		if seed, ok := o.Attrs()[ck.CKA_SEED]; ok {
			k, err = p.FromSeed(seed)
		} else {
			k, err = p.fromExpanded(o.Attrs()[ck.CKA_VALUE])
		}
		if err != nil {
			s.Log().Error("stored ML-KEM key unusable", "object", o.Handle(), "err", err)
			return nil, ck.Errorf(ck.CKR_KEY_TYPE_INCONSISTENT, "stored %s key: %v", p.Name, err)
		}
		return k, nil
	})
}
