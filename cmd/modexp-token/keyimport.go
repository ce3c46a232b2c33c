package main

// Parsing the private keys 'keys import' reads: PKCS#1 (RSA), SEC 1 (EC,
// on every curve the token has, secp256k1 included) and unencrypted PKCS#8
// (RSA, EC, Ed25519, DSA, DH here; the post-quantum types, Ed448, X25519
// and X448 by the token's own reader, keyimport_pq.go). Go's crypto/x509 knows neither secp256k1
// nor DSA and DH private keys, so the PKCS#8 and SEC 1 envelopes are read
// here; RSA's inner key is crypto/x509's. A public value missing from the
// file (DSA and DH y, an EC point) is computed in constant time in the
// private value (engine/alg/dsa, engine/alg/dh, engine/arith/ec).

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/alg/dsa"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// parsedKey is a private key read from a file: what to call it, its public
// key's SubjectPublicKeyInfo (the default ID), and the kind-specific
// attributes of its private and public objects (key type, values, usage).
type parsedKey struct {
	what      string // "RSA-2048 private key"
	spki      []byte
	priv, pub []token.Attribute
}

// Algorithm OIDs of PKCS#8 and SubjectPublicKeyInfo.
var (
	oidRSA     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	oidEC      = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidEd25519 = asn1.ObjectIdentifier{1, 3, 101, 112}
	oidEd448   = asn1.ObjectIdentifier{1, 3, 101, 113}
	oidDSA     = asn1.ObjectIdentifier{1, 2, 840, 10040, 4, 1}
	oidDH      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 3, 1} // PKCS #3 dhKeyAgreement, as OpenSSL writes DH keys
)

// pkcs8Parsers reads the privateKey octets of a PKCS#8 key by its
// algorithm OID (params are the AlgorithmIdentifier's parameters).
var pkcs8Parsers = []struct {
	oid   asn1.ObjectIdentifier
	parse func(params asn1.RawValue, key []byte) (*parsedKey, error)
}{
	{oidRSA, func(_ asn1.RawValue, key []byte) (*parsedKey, error) {
		k, err := x509.ParsePKCS1PrivateKey(key)
		if err != nil {
			return nil, fmt.Errorf("PKCS#8 RSA key: %w", err)
		}
		return rsaKey(k.N, big.NewInt(int64(k.E)), k.D, k.Primes)
	}},
	{oidEC, func(params asn1.RawValue, key []byte) (*parsedKey, error) {
		return parseSEC1(key, params.FullBytes)
	}},
	{oidEd25519, func(_ asn1.RawValue, key []byte) (*parsedKey, error) {
		var seed []byte
		if rest, err := asn1.Unmarshal(key, &seed); err != nil || len(rest) > 0 || len(seed) != ed25519.SeedSize {
			return nil, errors.New("PKCS#8 Ed25519 key: want a 32-byte seed")
		}
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		point := mustMarshal([]byte(pub))
		spki, err := marshalSPKI(oidEd25519, nil, pub)
		return &parsedKey{what: "Ed25519 private key", spki: spki,
			priv: []token.Attribute{ulong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS), attr(ck.CKA_EC_PARAMS, ed25519Params),
				attr(ck.CKA_VALUE, seed), boolAttr(ck.CKA_SIGN, true)},
			pub: []token.Attribute{ulong(ck.CKA_KEY_TYPE, ck.CKK_EC_EDWARDS), attr(ck.CKA_EC_PARAMS, ed25519Params),
				attr(ck.CKA_EC_POINT, point), boolAttr(ck.CKA_VERIFY, true)}}, err
	}},
	{oidDSA, func(params asn1.RawValue, key []byte) (*parsedKey, error) {
		var p struct{ P, Q, G *big.Int }
		if rest, err := asn1.Unmarshal(params.FullBytes, &p); err != nil || len(rest) > 0 {
			return nil, errors.New("PKCS#8 DSA key: parameters are not a SEQUENCE of p, q, g")
		}
		x, err := derInteger(key)
		if err != nil {
			return nil, fmt.Errorf("PKCS#8 DSA key: %w", err)
		}
		dp := &dsa.Parameters{P: p.P, Q: p.Q, G: p.G}
		xb := x.FillBytes(make([]byte, (p.Q.BitLen()+7)/8))
		y, err := dsa.PublicValue(dp, xb)
		if err != nil {
			return nil, fmt.Errorf("PKCS#8 DSA key: %w", err)
		}
		spki, err := marshalSPKI(oidDSA, params.FullBytes, mustMarshal(y))
		domain := []token.Attribute{ulong(ck.CKA_KEY_TYPE, ck.CKK_DSA), attr(ck.CKA_PRIME, p.P.Bytes()),
			attr(ck.CKA_SUBPRIME, p.Q.Bytes()), attr(ck.CKA_BASE, p.G.Bytes())}
		return &parsedKey{what: fmt.Sprintf("DSA-%d private key", p.P.BitLen()), spki: spki,
			priv: append(clone(domain), attr(ck.CKA_VALUE, xb), boolAttr(ck.CKA_SIGN, true)),
			pub:  append(clone(domain), attr(ck.CKA_VALUE, y.Bytes()), boolAttr(ck.CKA_VERIFY, true))}, err
	}},
	{oidDH, func(params asn1.RawValue, key []byte) (*parsedKey, error) {
		var p struct {
			P, G *big.Int
			L    int `asn1:"optional"`
		}
		if rest, err := asn1.Unmarshal(params.FullBytes, &p); err != nil || len(rest) > 0 {
			return nil, errors.New("PKCS#8 DH key: parameters are not a SEQUENCE of p, g")
		}
		x, err := derInteger(key)
		if err != nil {
			return nil, fmt.Errorf("PKCS#8 DH key: %w", err)
		}
		g, err := dh.LookupGroup(p.P, p.G)
		if err != nil {
			return nil, fmt.Errorf("PKCS#8 DH key: %w", err)
		}
		xb := x.Bytes()
		y, err := dh.PublicValue(g, xb)
		if err != nil {
			return nil, fmt.Errorf("PKCS#8 DH key: %w", err)
		}
		spki, err := marshalSPKI(oidDH, params.FullBytes, mustMarshal(new(big.Int).SetBytes(y)))
		domain := []token.Attribute{ulong(ck.CKA_KEY_TYPE, ck.CKK_DH), attr(ck.CKA_PRIME, p.P.Bytes()), attr(ck.CKA_BASE, p.G.Bytes())}
		what := fmt.Sprintf("DH-%d private key", p.P.BitLen())
		if g.Name != "" {
			what = "DH " + g.Name + " private key"
		}
		return &parsedKey{what: what, spki: spki,
			priv: append(clone(domain), attr(ck.CKA_VALUE, xb), boolAttr(ck.CKA_DERIVE, true)),
			pub:  append(clone(domain), attr(ck.CKA_VALUE, y))}, err
	}},
}

func clone(a []token.Attribute) []token.Attribute { return append([]token.Attribute(nil), a...) }

// derInteger decodes a DER INTEGER that is the whole of b.
func derInteger(b []byte) (*big.Int, error) {
	var x *big.Int
	if rest, err := asn1.Unmarshal(b, &x); err != nil || len(rest) > 0 || x.Sign() <= 0 {
		return nil, errors.New("the private value is not a positive INTEGER")
	}
	return x, nil
}

// parsePrivateKey reads a DER private key: PKCS#1, SEC 1 or PKCS#8.
func parsePrivateKey(der []byte) (*parsedKey, error) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return rsaKey(k.N, big.NewInt(int64(k.E)), k.D, k.Primes)
	}
	if k, err := parseSEC1(der, nil); err == nil {
		return k, nil
	}
	var p8 struct {
		Version   int
		Algorithm struct {
			OID    asn1.ObjectIdentifier
			Params asn1.RawValue `asn1:"optional"`
		}
		Key []byte
	}
	if rest, err := asn1.Unmarshal(der, &p8); err != nil || len(rest) > 0 {
		return nil, errors.New("not a private key (RSA, EC, Ed25519, DSA or DH; PKCS#1, SEC 1 or unencrypted PKCS#8; ML-DSA, SLH-DSA, ML-KEM, Ed448, X25519 or X448 in PKCS#8) nor an X.509 certificate, in PEM or DER")
	}
	for _, p := range pkcs8Parsers {
		if p.oid.Equal(p8.Algorithm.OID) {
			return p.parse(p8.Algorithm.Params, p8.Key)
		}
	}
	return tokenPKCS8(der) // ML-DSA, SLH-DSA, ML-KEM, Ed448, X25519, X448 (keyimport_pq.go)
}

// rsaKey builds the objects of an RSA key.
func rsaKey(n, e, d *big.Int, primes []*big.Int) (*parsedKey, error) {
	if len(primes) != 2 {
		return nil, errors.New("multi-prime RSA keys are not supported")
	}
	one := big.NewInt(1)
	p, q := primes[0], primes[1]
	dp := new(big.Int).Mod(d, new(big.Int).Sub(p, one))
	dq := new(big.Int).Mod(d, new(big.Int).Sub(q, one))
	qinv := new(big.Int).ModInverse(q, p)
	if qinv == nil {
		return nil, errors.New("RSA key: q has no inverse mod p")
	}
	spki, err := rsaSPKI(n, e)
	return &parsedKey{what: fmt.Sprintf("RSA-%d private key", n.BitLen()), spki: spki,
		priv: []token.Attribute{ulong(ck.CKA_KEY_TYPE, ck.CKK_RSA), boolAttr(ck.CKA_SIGN, true), boolAttr(ck.CKA_DECRYPT, true),
			attr(ck.CKA_MODULUS, n.Bytes()), attr(ck.CKA_PUBLIC_EXPONENT, e.Bytes()), attr(ck.CKA_PRIVATE_EXPONENT, d.Bytes()),
			attr(ck.CKA_PRIME_1, p.Bytes()), attr(ck.CKA_PRIME_2, q.Bytes()),
			attr(ck.CKA_EXPONENT_1, dp.Bytes()), attr(ck.CKA_EXPONENT_2, dq.Bytes()), attr(ck.CKA_COEFFICIENT, qinv.Bytes())},
		pub: []token.Attribute{ulong(ck.CKA_KEY_TYPE, ck.CKK_RSA), boolAttr(ck.CKA_VERIFY, true), boolAttr(ck.CKA_ENCRYPT, true),
			attr(ck.CKA_MODULUS, n.Bytes()), attr(ck.CKA_PUBLIC_EXPONENT, e.Bytes())}}, err
}

// parseSEC1 reads an ECPrivateKey (RFC 5915). outerParams are the PKCS#8
// AlgorithmIdentifier parameters (the curve), nil for a bare SEC 1 key,
// which must then name its curve itself.
func parseSEC1(der, outerParams []byte) (*parsedKey, error) {
	var k struct {
		Version    int
		PrivateKey []byte
		Curve      asn1.ObjectIdentifier `asn1:"optional,explicit,tag:0"`
		PublicKey  asn1.BitString        `asn1:"optional,explicit,tag:1"`
	}
	if rest, err := asn1.Unmarshal(der, &k); err != nil || len(rest) > 0 || k.Version != 1 {
		return nil, errors.New("not a SEC 1 EC private key")
	}
	params := outerParams
	if len(k.Curve) > 0 {
		params = mustMarshal(k.Curve)
	}
	if len(params) == 0 {
		return nil, errors.New("EC private key names no curve")
	}
	c, err := ec.CurveByOID(params)
	if err != nil {
		return nil, fmt.Errorf("EC private key on a curve this token does not have (%s)", oidOf(params))
	}
	d := new(big.Int).SetBytes(k.PrivateKey)
	if d.Sign() == 0 || d.Cmp(new(big.Int).SetBytes(c.Order())) >= 0 {
		return nil, errors.New("EC private key: the scalar is not in [1, n-1]")
	}
	scalar := d.FillBytes(make([]byte, c.OrderByteLen()))
	x, y, err := c.ScalarBaseMult(scalar)
	if err != nil {
		return nil, fmt.Errorf("EC private key: %w", err)
	}
	point := append(append([]byte{4}, x...), y...)
	spki, err := marshalSPKI(oidEC, c.OID(), point)
	return &parsedKey{what: "EC " + c.Name() + " private key", spki: spki,
		priv: []token.Attribute{ulong(ck.CKA_KEY_TYPE, ck.CKK_EC), attr(ck.CKA_EC_PARAMS, c.OID()),
			attr(ck.CKA_VALUE, scalar), boolAttr(ck.CKA_SIGN, true)},
		pub: []token.Attribute{ulong(ck.CKA_KEY_TYPE, ck.CKK_EC), attr(ck.CKA_EC_PARAMS, c.OID()),
			attr(ck.CKA_EC_POINT, mustMarshal(point)), boolAttr(ck.CKA_VERIFY, true)}}, err
}

// spki is a SubjectPublicKeyInfo.
type spki struct {
	Algorithm struct {
		OID    asn1.ObjectIdentifier
		Params asn1.RawValue `asn1:"optional"`
	}
	Key asn1.BitString
}

// marshalSPKI encodes a SubjectPublicKeyInfo; params is the DER of the
// algorithm parameters (nil: absent).
func marshalSPKI(oid asn1.ObjectIdentifier, params, key []byte) ([]byte, error) {
	var k spki
	k.Algorithm.OID = oid
	if params != nil {
		k.Algorithm.Params = asn1.RawValue{FullBytes: params}
	}
	k.Key = asn1.BitString{Bytes: key, BitLength: 8 * len(key)}
	return asn1.Marshal(k)
}

func rsaSPKI(n, e *big.Int) ([]byte, error) {
	key, err := asn1.Marshal(struct{ N, E *big.Int }{n, e})
	if err != nil {
		return nil, err
	}
	return marshalSPKI(oidRSA, asn1.NullBytes, key)
}

// secretKey builds the object of a secret key imported from raw bytes.
func secretKey(spec keySpec, value []byte) ([]token.Attribute, string, error) {
	kind := spec.kind
	switch kind.keyType {
	case ck.CKK_AES:
		if n := len(value); n != 16 && n != 24 && n != 32 {
			return nil, "", fmt.Errorf("an AES key has 16, 24 or 32 bytes; the file has %d", n)
		}
	case ck.CKK_DES3:
		if len(value) != 24 {
			return nil, "", fmt.Errorf("a triple-DES key has 24 bytes; the file has %d", len(value))
		}
	case ck.CKK_GENERIC_SECRET:
		if len(value) < 1 || len(value) > 64<<10 {
			return nil, "", fmt.Errorf("a generic secret has 1 to %d bytes; the file has %d", 64<<10, len(value))
		}
	default:
		return nil, "", fmt.Errorf("%s keys are not imported from raw bytes", kind.name)
	}
	desc := kind.describe(map[uint64][]byte{ck.CKA_VALUE_LEN: ck.ULong(uint64(len(value)))})
	if spec.explicit && kind.parse != nil && desc != spec.String() {
		return nil, "", fmt.Errorf("--type %s, but the file holds a %d-byte key", spec, len(value))
	}
	_, _, use, err := kind.plan(nil, spec.arg)
	if err != nil {
		return nil, "", err
	}
	tmpl := []token.Attribute{ulong(ck.CKA_KEY_TYPE, kind.keyType), attr(ck.CKA_VALUE, value)}
	for _, a := range use {
		if a.Type != ck.CKA_VALUE_LEN {
			tmpl = append(tmpl, a)
		}
	}
	return tmpl, desc + " secret key", nil
}
