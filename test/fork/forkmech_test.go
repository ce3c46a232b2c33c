package fork

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/dsa" //nolint:staticcheck // the token offers DSA; Go's is the second implementation
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/md5"
	"crypto/mlkem"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/asn1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/cloudflare/circl/sign"
	"github.com/cloudflare/circl/sign/ed448"
	"github.com/cloudflare/circl/sign/mldsa/mldsa44"
	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/cloudflare/circl/sign/mldsa/mldsa87"
	"github.com/cloudflare/circl/sign/slhdsa"
	"github.com/cloudflare/circl/xof"

	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"github.com/modexp-token/modexp-token/token/ck"
)

// The hash functions are registered for crypto.Hash.New.
var _ = []any{md5.New, sha1.New, sha256.New, sha512.New, sha3.New256}

// opFlags are the CK_MECHANISM_INFO flags that name an operation: each
// one a mechanism claims must have its round trip in the table.
var opFlags = []struct {
	flag uint64
	name string
}{
	{ck.CKF_ENCRYPT, "ENCRYPT"}, {ck.CKF_DECRYPT, "DECRYPT"}, {ck.CKF_DIGEST, "DIGEST"},
	{ck.CKF_SIGN, "SIGN"}, {ck.CKF_SIGN_RECOVER, "SIGN_RECOVER"}, {ck.CKF_VERIFY, "VERIFY"},
	{ck.CKF_VERIFY_RECOVER, "VERIFY_RECOVER"}, {ck.CKF_GENERATE, "GENERATE"},
	{ck.CKF_GENERATE_KEY_PAIR, "GENERATE_KEY_PAIR"}, {ck.CKF_WRAP, "WRAP"}, {ck.CKF_UNWRAP, "UNWRAP"},
	{ck.CKF_DERIVE, "DERIVE"}, {ck.CKF_ENCAPSULATE, "ENCAPSULATE"}, {ck.CKF_DECAPSULATE, "DECAPSULATE"},
	{ck.CKF_MESSAGE_ENCRYPT, "MESSAGE_ENCRYPT"}, {ck.CKF_MESSAGE_DECRYPT, "MESSAGE_DECRYPT"},
	{ck.CKF_MESSAGE_SIGN, "MESSAGE_SIGN"}, {ck.CKF_MESSAGE_VERIFY, "MESSAGE_VERIFY"},
}

const (
	fSig    = ck.CKF_SIGN | ck.CKF_VERIFY | ck.CKF_MESSAGE_SIGN | ck.CKF_MESSAGE_VERIFY
	fCipher = ck.CKF_ENCRYPT | ck.CKF_DECRYPT
	fWrap   = ck.CKF_WRAP | ck.CKF_UNWRAP
	fKEM    = ck.CKF_ENCAPSULATE | ck.CKF_DECAPSULATE
	fMsgEnc = ck.CKF_MESSAGE_ENCRYPT | ck.CKF_MESSAGE_DECRYPT
)

// rvOK and the other return values the round trips expect.
const (
	rvOK               = uint64(ck.CKR_OK)
	rvSignatureInvalid = uint64(ck.CKR_SIGNATURE_INVALID)
)

// rvName is a CK_RV's name.
func rvName(rv uint64) string { return ck.Name("CKR_", rv) }

// mechName is a mechanism's name.
func mechName(m uint64) string { return ck.Name("CKM_", m) }

// The fixed inputs of the round trips.
var (
	rtMsg   = []byte("every mechanism crosses the fork: 48 bytes long.")
	rtAES16 = seq(16, 0x10)
	rtAES32 = seq(32, 0x30)
	rtDES8  = oddParity(seq(8, 0x51))
	rtDES16 = oddParity(seq(16, 0x61))
	rtDES24 = oddParity(seq(24, 0x71))
	rtGen32 = seq(32, 0xa0)
	// rtTarget is the value of the AES-128 key every wrap mechanism wraps.
	rtTarget = seq(16, 0xc0)
	rtIV16   = seq(16, 0xe0)
	rtIV8    = seq(8, 0xf0)
)

// seq is n bytes counting from start.
func seq(n int, start byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// oddParity sets DES's parity bits.
func oddParity(b []byte) []byte {
	for i, v := range b {
		v &^= 1
		if bitsSet(v)%2 == 0 {
			v |= 1
		}
		b[i] = v
	}
	return b
}

// bitsSet counts the bits set in v.
func bitsSet(v byte) int {
	n := 0
	for ; v != 0; v &= v - 1 {
		n++
	}
	return n
}

// short is a fingerprint of deterministic output for the transcripts.
func short(b []byte) string {
	s := sha256.Sum256(b)
	return fmt.Sprintf("%d:%s", len(b), hex.EncodeToString(s[:6]))
}

// The hash functions of the mechanisms, by the mechanism's type.
var (
	digestHash = map[uint64]crypto.Hash{
		ck.CKM_MD5: crypto.MD5, ck.CKM_SHA_1: crypto.SHA1, ck.CKM_SHA224: crypto.SHA224, ck.CKM_SHA256: crypto.SHA256,
		ck.CKM_SHA384: crypto.SHA384, ck.CKM_SHA512: crypto.SHA512, ck.CKM_SHA512_224: crypto.SHA512_224,
		ck.CKM_SHA512_256: crypto.SHA512_256, ck.CKM_SHA3_224: crypto.SHA3_224, ck.CKM_SHA3_256: crypto.SHA3_256,
		ck.CKM_SHA3_384: crypto.SHA3_384, ck.CKM_SHA3_512: crypto.SHA3_512,
	}
	hmacHash = map[uint64]crypto.Hash{
		ck.CKM_MD5_HMAC: crypto.MD5, ck.CKM_SHA_1_HMAC: crypto.SHA1, ck.CKM_SHA224_HMAC: crypto.SHA224,
		ck.CKM_SHA256_HMAC: crypto.SHA256, ck.CKM_SHA384_HMAC: crypto.SHA384, ck.CKM_SHA512_HMAC: crypto.SHA512,
		ck.CKM_SHA512_224_HMAC: crypto.SHA512_224, ck.CKM_SHA512_256_HMAC: crypto.SHA512_256,
		ck.CKM_SHA3_224_HMAC: crypto.SHA3_224, ck.CKM_SHA3_256_HMAC: crypto.SHA3_256,
		ck.CKM_SHA3_384_HMAC: crypto.SHA3_384, ck.CKM_SHA3_512_HMAC: crypto.SHA3_512,
	}
	hmacGeneralHash = map[uint64]crypto.Hash{
		ck.CKM_MD5_HMAC_GENERAL: crypto.MD5, ck.CKM_SHA_1_HMAC_GENERAL: crypto.SHA1,
		ck.CKM_SHA224_HMAC_GENERAL: crypto.SHA224, ck.CKM_SHA256_HMAC_GENERAL: crypto.SHA256,
		ck.CKM_SHA384_HMAC_GENERAL: crypto.SHA384, ck.CKM_SHA512_HMAC_GENERAL: crypto.SHA512,
		ck.CKM_SHA512_224_HMAC_GENERAL: crypto.SHA512_224, ck.CKM_SHA512_256_HMAC_GENERAL: crypto.SHA512_256,
		ck.CKM_SHA3_224_HMAC_GENERAL: crypto.SHA3_224, ck.CKM_SHA3_256_HMAC_GENERAL: crypto.SHA3_256,
		ck.CKM_SHA3_384_HMAC_GENERAL: crypto.SHA3_384, ck.CKM_SHA3_512_HMAC_GENERAL: crypto.SHA3_512,
	}
	rsaPKCSHash = map[uint64]crypto.Hash{
		ck.CKM_MD5_RSA_PKCS: crypto.MD5, ck.CKM_SHA1_RSA_PKCS: crypto.SHA1, ck.CKM_SHA224_RSA_PKCS: crypto.SHA224,
		ck.CKM_SHA256_RSA_PKCS: crypto.SHA256, ck.CKM_SHA384_RSA_PKCS: crypto.SHA384,
		ck.CKM_SHA512_RSA_PKCS: crypto.SHA512, ck.CKM_SHA3_224_RSA_PKCS: crypto.SHA3_224,
		ck.CKM_SHA3_256_RSA_PKCS: crypto.SHA3_256, ck.CKM_SHA3_384_RSA_PKCS: crypto.SHA3_384,
		ck.CKM_SHA3_512_RSA_PKCS: crypto.SHA3_512,
	}
	rsaPSSHash = map[uint64]crypto.Hash{
		ck.CKM_SHA1_RSA_PKCS_PSS: crypto.SHA1, ck.CKM_SHA224_RSA_PKCS_PSS: crypto.SHA224,
		ck.CKM_SHA256_RSA_PKCS_PSS: crypto.SHA256, ck.CKM_SHA384_RSA_PKCS_PSS: crypto.SHA384,
		ck.CKM_SHA512_RSA_PKCS_PSS: crypto.SHA512, ck.CKM_SHA3_224_RSA_PKCS_PSS: crypto.SHA3_224,
		ck.CKM_SHA3_256_RSA_PKCS_PSS: crypto.SHA3_256, ck.CKM_SHA3_384_RSA_PKCS_PSS: crypto.SHA3_384,
		ck.CKM_SHA3_512_RSA_PKCS_PSS: crypto.SHA3_512,
	}
	ecdsaHash = map[uint64]crypto.Hash{
		ck.CKM_ECDSA_SHA1: crypto.SHA1, ck.CKM_ECDSA_SHA224: crypto.SHA224, ck.CKM_ECDSA_SHA256: crypto.SHA256,
		ck.CKM_ECDSA_SHA384: crypto.SHA384, ck.CKM_ECDSA_SHA512: crypto.SHA512,
		ck.CKM_ECDSA_SHA3_224: crypto.SHA3_224, ck.CKM_ECDSA_SHA3_256: crypto.SHA3_256,
		ck.CKM_ECDSA_SHA3_384: crypto.SHA3_384, ck.CKM_ECDSA_SHA3_512: crypto.SHA3_512,
	}
	dsaHash = map[uint64]crypto.Hash{
		ck.CKM_DSA_SHA1: crypto.SHA1, ck.CKM_DSA_SHA224: crypto.SHA224, ck.CKM_DSA_SHA256: crypto.SHA256,
		ck.CKM_DSA_SHA384: crypto.SHA384, ck.CKM_DSA_SHA512: crypto.SHA512,
	}
	slhHash = map[uint64]crypto.Hash{
		ck.CKM_HASH_SLH_DSA_SHA224: crypto.SHA224, ck.CKM_HASH_SLH_DSA_SHA256: crypto.SHA256,
		ck.CKM_HASH_SLH_DSA_SHA384: crypto.SHA384, ck.CKM_HASH_SLH_DSA_SHA512: crypto.SHA512,
		ck.CKM_HASH_SLH_DSA_SHA3_224: crypto.SHA3_224, ck.CKM_HASH_SLH_DSA_SHA3_256: crypto.SHA3_256,
		ck.CKM_HASH_SLH_DSA_SHA3_384: crypto.SHA3_384, ck.CKM_HASH_SLH_DSA_SHA3_512: crypto.SHA3_512,
	}
	slhXOF = map[uint64]xof.ID{ck.CKM_HASH_SLH_DSA_SHAKE128: xof.SHAKE128, ck.CKM_HASH_SLH_DSA_SHAKE256: xof.SHAKE256}
	// mgf1 is the CKG_MGF1_ of each hash, and hashMech its CKM_.
	mgf1 = map[crypto.Hash]uint64{
		crypto.SHA1: ck.CKG_MGF1_SHA1, crypto.SHA224: ck.CKG_MGF1_SHA224, crypto.SHA256: ck.CKG_MGF1_SHA256,
		crypto.SHA384: ck.CKG_MGF1_SHA384, crypto.SHA512: ck.CKG_MGF1_SHA512, crypto.SHA3_224: ck.CKG_MGF1_SHA3_224,
		crypto.SHA3_256: ck.CKG_MGF1_SHA3_256, crypto.SHA3_384: ck.CKG_MGF1_SHA3_384, crypto.SHA3_512: ck.CKG_MGF1_SHA3_512,
	}
	hashMech = map[crypto.Hash]uint64{}
)

// init makes hashMech, the inverse of digestHash.
func init() {
	for m, h := range digestHash {
		hashMech[h] = m
	}
}

// digestOf is h(b).
func digestOf(h crypto.Hash, b []byte) []byte {
	w := h.New()
	w.Write(b)
	return w.Sum(nil)
}

// rtKey is a key pair the parent makes on the token for the round trips.
type rtKey struct {
	label   string
	gen     uint64
	pub     tmpl
	priv    tmpl
	readPub []uint64 // attributes of the public key Go reads
	readPri []uint64 // attributes of the private key Go reads
}

var (
	oidP256    = []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}
	oidEd25519 = []byte{0x06, 0x03, 0x2b, 0x65, 0x70}
	oidX25519  = []byte{0x06, 0x03, 0x2b, 0x65, 0x6e}
	oidEd448   = []byte{0x06, 0x03, 0x2b, 0x65, 0x71}
)

// otherCurves are the NIST curves besides P-256 that the table signs and
// derives on (variants of CKM_ECDSA and CKM_ECDH1_DERIVE), each a token key
// rt-<name>; Go has no P-192.
var otherCurves = []struct {
	name  string
	oid   []byte
	curve elliptic.Curve
}{
	{"p224", []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x21}, elliptic.P224()},
	{"p384", []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22}, elliptic.P384()},
	{"p521", []byte{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23}, elliptic.P521()},
}

// rtKeys are the token key pairs: one per key type, made once by the parent
// (token objects, so that every child finds the same keys), extractable and
// not sensitive so that Go reads the private halves and checks everything.
func rtKeys(dsaP, dsaQ, dsaG *big.Int, group *dh.Group) []rtKey {
	yes := boolv(true)
	open := tmpl{{ck.CKA_TOKEN, yes}, {ck.CKA_SENSITIVE, boolv(false)}, {ck.CKA_EXTRACTABLE, yes}}
	with := func(t tmpl, more ...attr) tmpl { return append(append(tmpl{}, t...), more...) }
	pubBase := tmpl{{ck.CKA_TOKEN, yes}}
	var curves []rtKey
	for _, c := range otherCurves {
		curves = append(curves, rtKey{"rt-" + c.name, ck.CKM_EC_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_EC_PARAMS, c.oid}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}, attr{ck.CKA_DERIVE, yes}),
			[]uint64{ck.CKA_EC_POINT}, []uint64{ck.CKA_VALUE}})
	}
	return append([]rtKey{
		{"rt-rsa", ck.CKM_RSA_PKCS_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_MODULUS_BITS, ulv(2048)}, attr{ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}},
				attr{ck.CKA_VERIFY, yes}, attr{ck.CKA_ENCRYPT, yes}, attr{ck.CKA_WRAP, yes}),
			with(open, attr{ck.CKA_SIGN, yes}, attr{ck.CKA_DECRYPT, yes}, attr{ck.CKA_UNWRAP, yes}),
			nil, []uint64{ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT, ck.CKA_PRIVATE_EXPONENT, ck.CKA_PRIME_1, ck.CKA_PRIME_2}},
		{"rt-ec", ck.CKM_EC_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_EC_PARAMS, oidP256}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}, attr{ck.CKA_DERIVE, yes}),
			[]uint64{ck.CKA_EC_POINT}, []uint64{ck.CKA_VALUE}},
		{"rt-ed", ck.CKM_EC_EDWARDS_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_EC_PARAMS, oidEd25519}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}),
			[]uint64{ck.CKA_EC_POINT}, []uint64{ck.CKA_VALUE}},
		{"rt-ed448", ck.CKM_EC_EDWARDS_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_EC_PARAMS, oidEd448}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}),
			[]uint64{ck.CKA_EC_POINT}, nil},
		{"rt-x", ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_EC_PARAMS, oidX25519}),
			with(open, attr{ck.CKA_DERIVE, yes}),
			[]uint64{ck.CKA_EC_POINT}, []uint64{ck.CKA_VALUE}},
		{"rt-dsa", ck.CKM_DSA_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_PRIME, dsaP.Bytes()}, attr{ck.CKA_SUBPRIME, dsaQ.Bytes()},
				attr{ck.CKA_BASE, dsaG.Bytes()}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}),
			[]uint64{ck.CKA_VALUE}, []uint64{ck.CKA_VALUE}},
		{"rt-dh", ck.CKM_DH_PKCS_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_PRIME, group.P.Bytes()}, attr{ck.CKA_BASE, group.G.Bytes()}),
			with(open, attr{ck.CKA_DERIVE, yes}),
			[]uint64{ck.CKA_VALUE}, []uint64{ck.CKA_VALUE}},
		{"rt-mlkem", ck.CKM_ML_KEM_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_PARAMETER_SET, ulv(ck.CKP_ML_KEM_768)}, attr{ck.CKA_ENCAPSULATE, yes}),
			with(open, attr{ck.CKA_DECAPSULATE, yes}),
			[]uint64{ck.CKA_VALUE}, []uint64{ck.CKA_SEED}},
		{"rt-mldsa", ck.CKM_ML_DSA_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_PARAMETER_SET, ulv(ck.CKP_ML_DSA_44)}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}),
			[]uint64{ck.CKA_VALUE}, nil},
		{"rt-mlkem1024", ck.CKM_ML_KEM_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_PARAMETER_SET, ulv(ck.CKP_ML_KEM_1024)}, attr{ck.CKA_ENCAPSULATE, yes}),
			with(open, attr{ck.CKA_DECAPSULATE, yes}),
			[]uint64{ck.CKA_VALUE}, []uint64{ck.CKA_SEED}},
		{"rt-mldsa65", ck.CKM_ML_DSA_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_PARAMETER_SET, ulv(ck.CKP_ML_DSA_65)}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}),
			[]uint64{ck.CKA_VALUE}, nil},
		{"rt-mldsa87", ck.CKM_ML_DSA_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_PARAMETER_SET, ulv(ck.CKP_ML_DSA_87)}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}),
			[]uint64{ck.CKA_VALUE}, nil},
		{"rt-slh", ck.CKM_SLH_DSA_KEY_PAIR_GEN,
			with(pubBase, attr{ck.CKA_PARAMETER_SET, ulv(ck.CKP_SLH_DSA_SHA2_128F)}, attr{ck.CKA_VERIFY, yes}),
			with(open, attr{ck.CKA_SIGN, yes}),
			[]uint64{ck.CKA_VALUE}, nil},
	}, curves...)
}

// goKeys are the token keys as Go sees them, read once from the parent.
type goKeys struct {
	rsa      *rsa.PrivateKey
	ec       *ecdsa.PrivateKey
	ecPoint  []byte                       // uncompressed
	curves   map[string]*ecdsa.PrivateKey // otherCurves' keys, by name
	ed       ed25519.PublicKey
	ed448    ed448.PublicKey
	x        *ecdh.PrivateKey
	dsa      *dsa.PrivateKey
	dh       *dh.Group
	dhX, dhY *big.Int
	mlkem    *mlkem.DecapsulationKey768
	mlkem1k  *mlkem.DecapsulationKey1024
	mldsaPQ  map[string]sign.PublicKey // rt-mldsa65 and rt-mldsa87, with their schemes
	mldsa    *mldsa44.PublicKey
	slh      *slhdsa.PublicKey
}

// octets unwraps a DER OCTET STRING (CKA_EC_POINT).
func octets(b []byte) ([]byte, error) {
	var o []byte
	if _, err := asn1.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("CKA_EC_POINT %x: %w", b, err)
	}
	return o, nil
}

// rtSetup makes the parent's token keys when missing and reads them into Go.
func rtSetup(r *run) *goKeys {
	t := r.t
	p, q, g := e2e.DSAParams(t, "params_2048_256.pem")
	group, err := dh.GroupByName("ffdhe2048")
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string][][]byte{}
	for _, k := range rtKeys(p, q, g, group) {
		if r.find(ck.CKO_PRIVATE_KEY, k.label) == 0 {
			lab := attr{ck.CKA_LABEL, []byte(k.label)}
			rv, _ := r.c.call(opGenPair, r.s, plain(k.gen), append(k.pub, lab), append(k.priv, lab))
			if rv != rvOK {
				t.Fatalf("%s: C_GenerateKeyPair(%s) = %s", r.name, mechName(k.gen), rvName(rv))
			}
		}
		pub, priv := r.find(ck.CKO_PUBLIC_KEY, k.label), r.find(ck.CKO_PRIVATE_KEY, k.label)
		vals[k.label+".pub"] = r.attrs(pub, k.readPub...)
		vals[k.label] = r.attrs(priv, k.readPri...)
	}
	gk := &goKeys{dh: group}
	bi := func(b []byte) *big.Int { return new(big.Int).SetBytes(b) }
	v := vals["rt-rsa"]
	gk.rsa = &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: bi(v[0]), E: int(bi(v[1]).Int64())}, D: bi(v[2]),
		Primes: []*big.Int{bi(v[3]), bi(v[4])}}
	gk.rsa.Precompute()
	if err := gk.rsa.Validate(); err != nil {
		t.Fatalf("rt-rsa as Go reads it: %v", err)
	}
	must := func(what string, err error) {
		if err != nil {
			t.Fatalf("%s as Go reads it: %v", what, err)
		}
	}
	pt, err := octets(vals["rt-ec.pub"][0])
	must("rt-ec", err)
	gk.ecPoint = pt
	x, y := elliptic.Unmarshal(elliptic.P256(), pt) //nolint:staticcheck // the point as the token exports it
	if x == nil {
		t.Fatalf("rt-ec: CKA_EC_POINT %x", pt)
	}
	gk.ec = &ecdsa.PrivateKey{PublicKey: ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}, D: bi(vals["rt-ec"][0])}
	gk.curves = map[string]*ecdsa.PrivateKey{}
	for _, c := range otherCurves {
		pt, err := octets(vals["rt-"+c.name+".pub"][0])
		must("rt-"+c.name, err)
		k, err := ecdsa.ParseUncompressedPublicKey(c.curve, pt)
		must("rt-"+c.name, err)
		gk.curves[c.name] = &ecdsa.PrivateKey{PublicKey: *k, D: bi(vals["rt-"+c.name][0])}
	}
	edPub, err := octets(vals["rt-ed.pub"][0])
	must("rt-ed", err)
	gk.ed = edPub
	if seed := vals["rt-ed"][0]; len(seed) != ed25519.SeedSize ||
		!bytes.Equal(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), edPub) {
		t.Fatalf("rt-ed: the private value is not the public key's")
	}
	ed448Pub, err := octets(vals["rt-ed448.pub"][0])
	must("rt-ed448", err)
	gk.ed448 = ed448Pub
	gk.x, err = ecdh.X25519().NewPrivateKey(vals["rt-x"][0])
	must("rt-x", err)
	xPub, err := octets(vals["rt-x.pub"][0])
	if err != nil {
		xPub = vals["rt-x.pub"][0]
	}
	if !bytes.Equal(gk.x.PublicKey().Bytes(), xPub) {
		t.Fatalf("rt-x: the private value is not the public key's")
	}
	gk.dsa = &dsa.PrivateKey{PublicKey: dsa.PublicKey{Parameters: dsa.Parameters{P: p, Q: q, G: g}, Y: bi(vals["rt-dsa.pub"][0])},
		X: bi(vals["rt-dsa"][0])}
	gk.dhY, gk.dhX = bi(vals["rt-dh.pub"][0]), bi(vals["rt-dh"][0])
	if new(big.Int).Exp(group.G, gk.dhX, group.P).Cmp(gk.dhY) != 0 {
		t.Fatalf("rt-dh: g^x is not y")
	}
	gk.mlkem, err = mlkem.NewDecapsulationKey768(vals["rt-mlkem"][0])
	must("rt-mlkem", err)
	if !bytes.Equal(gk.mlkem.EncapsulationKey().Bytes(), vals["rt-mlkem.pub"][0]) {
		t.Fatalf("rt-mlkem: the seed is not the public key's")
	}
	gk.mlkem1k, err = mlkem.NewDecapsulationKey1024(vals["rt-mlkem1024"][0])
	must("rt-mlkem1024", err)
	if !bytes.Equal(gk.mlkem1k.EncapsulationKey().Bytes(), vals["rt-mlkem1024.pub"][0]) {
		t.Fatalf("rt-mlkem1024: the seed is not the public key's")
	}
	gk.mldsaPQ = map[string]sign.PublicKey{}
	for l, sch := range mldsaSchemes {
		pk, err := sch.UnmarshalBinaryPublicKey(vals[l+".pub"][0])
		must(l, err)
		gk.mldsaPQ[l] = pk
	}
	gk.mldsa = new(mldsa44.PublicKey)
	must("rt-mldsa", gk.mldsa.UnmarshalBinary(vals["rt-mldsa.pub"][0]))
	gk.slh = &slhdsa.PublicKey{ID: slhdsa.SHA2_128f}
	must("rt-slh", gk.slh.UnmarshalBinary(vals["rt-slh.pub"][0]))
	return gk
}

// run is the table run over one connection: a process's (or thread's)
// session, its handles, and the transcript it leaves.
type run struct {
	t     testing.TB
	c     *rpc
	name  string
	slot  uint64
	s     uint64
	h     map[string]uint64
	g     *goKeys
	lines []string
	ivn   byte
	tag   string // the variant being run ("/ctx" ...), after the mechanism's name
}

// variant runs f as the variant tag of a mechanism's round trip: the
// transcript and the errors name the mechanism with the tag.
func (r *run) variant(tag string, f func()) {
	r.tag = tag
	defer func() { r.tag = "" }()
	f()
}

// errorf reports a failed check of this run.
func (r *run) errorf(m uint64, op, format string, a ...any) {
	r.t.Helper()
	r.t.Errorf("%s: %s%s %s: %s", r.name, mechName(m), r.tag, op, fmt.Sprintf(format, a...))
}

// rec appends a transcript line.
func (r *run) rec(m uint64, op string, rv uint64, detail string) {
	r.lines = append(r.lines, strings.TrimSpace(fmt.Sprintf("%s%s %s %s %s", mechName(m), r.tag, op, rvName(rv), detail)))
}

// want records a call that must succeed, and reports it when it did not.
func (r *run) want(m uint64, op string, rv uint64, detail string) bool {
	r.t.Helper()
	r.rec(m, op, rv, detail)
	if rv != rvOK {
		r.errorf(m, op, "%s", rvName(rv))
		return false
	}
	return true
}

// find returns the object of class cls labelled label, or 0.
func (r *run) find(cls uint64, label string) uint64 {
	rv, out := r.c.call(opFind, r.s, tmpl{{ck.CKA_CLASS, ulv(cls)}, {ck.CKA_LABEL, []byte(label)}})
	if rv != rvOK || len(out) != 1 || len(out[0]) < 8 {
		return 0
	}
	return binary.LittleEndian.Uint64(out[0])
}

// attrs reads attributes of an object; fails the test when it cannot.
func (r *run) attrs(h uint64, types ...uint64) [][]byte {
	r.t.Helper()
	if len(types) == 0 {
		return nil
	}
	var t tmpl
	for _, ty := range types {
		t = append(t, attr{ty, nil})
	}
	rv, out := r.c.call(opGetAttr, r.s, h, t)
	if rv != rvOK || len(out) != len(types) {
		r.t.Fatalf("%s: C_GetAttributeValue(%d) = %s", r.name, h, rvName(rv))
	}
	return out
}

// value reads a key's CKA_VALUE (nil when it cannot).
func (r *run) value(h uint64) []byte {
	rv, out := r.c.call(opGetAttr, r.s, h, tmpl{{ck.CKA_VALUE, nil}})
	if rv != rvOK || len(out) != 1 {
		return nil
	}
	return out[0]
}

// secretKeys are the session secret keys each run makes, by name: value
// and key type.
var secretKeys = []struct {
	name string
	kt   uint64
	val  []byte
}{
	{"aes16", ck.CKK_AES, rtAES16}, {"aes32", ck.CKK_AES, rtAES32}, {"des", ck.CKK_DES, rtDES8},
	{"des2", ck.CKK_DES2, rtDES16}, {"des3", ck.CKK_DES3, rtDES24}, {"gen", ck.CKK_GENERIC_SECRET, rtGen32},
	{"target", ck.CKK_AES, rtTarget},
}

// newRun opens a session on the connection, logs in (CKR_OK, or
// CKR_USER_ALREADY_LOGGED_IN for a second thread of a process), finds the
// token keys and makes the secret keys.
func newRun(t testing.TB, c *rpc, g *goKeys) *run {
	t.Helper()
	r := &run{t: t, c: c, name: c.name, h: map[string]uint64{}, g: g}
	rv, out := c.call(opSlots)
	if rv != rvOK || len(out) != 1 || len(out[0]) < 8 {
		t.Fatalf("%s: C_GetSlotList = %s", c.name, rvName(rv))
	}
	r.slot = binary.LittleEndian.Uint64(out[0])
	rv, out = c.call(opOpen, r.slot)
	if rv != rvOK {
		t.Fatalf("%s: C_OpenSession = %s", c.name, rvName(rv))
	}
	r.s = u64of(out[0])
	if rv, _ := c.call(opLogin, r.s, ck.CKU_USER, userPIN); rv != rvOK && rv != uint64(ck.CKR_USER_ALREADY_LOGGED_IN) {
		t.Fatalf("%s: C_Login = %s", c.name, rvName(rv))
	}
	yes, no := boolv(true), boolv(false)
	for _, k := range secretKeys {
		t := tmpl{{ck.CKA_CLASS, ulv(ck.CKO_SECRET_KEY)}, {ck.CKA_KEY_TYPE, ulv(k.kt)}, {ck.CKA_VALUE, k.val},
			{ck.CKA_TOKEN, no}, {ck.CKA_SENSITIVE, no}, {ck.CKA_EXTRACTABLE, yes},
			{ck.CKA_ENCRYPT, yes}, {ck.CKA_DECRYPT, yes}, {ck.CKA_SIGN, yes}, {ck.CKA_VERIFY, yes},
			{ck.CKA_WRAP, yes}, {ck.CKA_UNWRAP, yes}, {ck.CKA_DERIVE, yes}}
		if k.kt == ck.CKK_GENERIC_SECRET {
			t = append(t[:6], attr{ck.CKA_SIGN, yes}, attr{ck.CKA_VERIFY, yes}, attr{ck.CKA_DERIVE, yes})
		}
		rv, out := c.call(opCreate, r.s, t)
		if rv != rvOK {
			r.t.Fatalf("%s: C_CreateObject(%s) = %s", c.name, k.name, rvName(rv))
		}
		r.h[k.name] = u64of(out[0])
	}
	if g != nil {
		r.findKeys()
	}
	return r
}

// findKeys finds the token key pairs.
func (r *run) findKeys() {
	labels := []string{"rt-rsa", "rt-ec", "rt-ed", "rt-ed448", "rt-x", "rt-dsa", "rt-dh", "rt-mlkem", "rt-mlkem1024",
		"rt-mldsa", "rt-mldsa65", "rt-mldsa87", "rt-slh"}
	for _, c := range otherCurves {
		labels = append(labels, "rt-"+c.name)
	}
	for _, l := range labels {
		r.h[l] = r.find(ck.CKO_PRIVATE_KEY, l)
		r.h[l+".pub"] = r.find(ck.CKO_PUBLIC_KEY, l)
		if r.h[l] == 0 || r.h[l+".pub"] == 0 {
			r.t.Fatalf("%s: token key %s not found", r.name, l)
		}
	}
}

// info lists what the module says of itself and its mechanisms: the three
// interfaces' C_GetInfo and mechanism lists, and every mechanism's info.
func (r *run) info() (mechs []uint64, flags map[uint64]uint64) {
	flags = map[uint64]uint64{}
	for _, ifc := range []int{if32, if30, if240} {
		rv, out := r.c.call(opGetInfo, ifc)
		r.lines = append(r.lines, fmt.Sprintf("C_GetInfo(%d) %s %x", ifc, rvName(rv), out))
		rv, out = r.c.call(opMechList, ifc, r.slot)
		var names []string
		if rv == rvOK && len(out) == 1 {
			for b := out[0]; len(b) >= 8; b = b[8:] {
				m := binary.LittleEndian.Uint64(b)
				names = append(names, mechName(m))
				if ifc == if32 {
					mechs = append(mechs, m)
				}
			}
		}
		r.lines = append(r.lines, fmt.Sprintf("C_GetMechanismList(%d) %s %d %s", ifc, rvName(rv), len(names), strings.Join(names, " ")))
	}
	for _, m := range mechs {
		rv, out := r.c.call(opMechInfo, r.slot, m)
		if rv != rvOK || len(out) != 1 || len(out[0]) != 24 {
			r.errorf(m, "C_GetMechanismInfo", "%s", rvName(rv))
			continue
		}
		lo, hi, f := binary.LittleEndian.Uint64(out[0]), binary.LittleEndian.Uint64(out[0][8:]), binary.LittleEndian.Uint64(out[0][16:])
		flags[m] = f
		r.lines = append(r.lines, fmt.Sprintf("%s info %d %d %#x", mechName(m), lo, hi, f))
	}
	return mechs, flags
}

// slowMechs are the mechanisms whose round trip takes seconds at random
// (a 1024-bit safe prime's search: 0.3–8.5 s on 2 loaded cores): the
// first forked child runs them (checked in Go), the other runs skip them.
var slowMechs = map[uint64]bool{ck.CKM_DH_PKCS_PARAMETER_GEN: true}

// table runs the round trip of every listed mechanism, each operation its
// flags claim (but slowMechs when skipSlow is set); a mechanism or an
// operation with no round trip fails.
func (r *run) table(mechs []uint64, flags map[uint64]uint64, skipSlow bool) {
	for _, m := range mechs {
		if skipSlow && slowMechs[m] {
			continue
		}
		c := caseOf(m)
		f := flags[m]
		if c == nil {
			r.errorf(m, "table", "no round trip for this mechanism (flags %#x): add it to caseOf", f)
			continue
		}
		for _, of := range opFlags {
			if f&of.flag != 0 && c.ops&of.flag == 0 {
				r.errorf(m, "table", "claims CKF_%s, which its round trip does not cover", of.name)
			}
		}
		c.run(r, m, f)
	}
}

// mcase is one mechanism's round trip: the operations it covers and the
// code, given the mechanism's flags (it runs the operations they claim).
type mcase struct {
	ops uint64
	run func(r *run, m uint64, flags uint64)
}

// caseOf is the table: the round trip of each mechanism.
func caseOf(m uint64) *mcase {
	if h, ok := digestHash[m]; ok {
		return &mcase{ck.CKF_DIGEST, func(r *run, m, _ uint64) { r.digest(m, h) }}
	}
	if h, ok := hmacHash[m]; ok {
		return sig(func(r *run) sigCase { return r.hmacCase(h, 0) })
	}
	if h, ok := hmacGeneralHash[m]; ok {
		return sig(func(r *run) sigCase { return r.hmacCase(h, 10) })
	}
	if h, ok := rsaPKCSHash[m]; ok {
		return sig(func(r *run) sigCase { return r.rsaPKCSCase(h, true) })
	}
	if h, ok := rsaPSSHash[m]; ok {
		return sig(func(r *run) sigCase { return r.rsaPSSCase(h, true) })
	}
	if h, ok := ecdsaHash[m]; ok {
		return sig(func(r *run) sigCase { return r.ecdsaCase(h, true) })
	}
	if h, ok := dsaHash[m]; ok {
		return sig(func(r *run) sigCase { return r.dsaCase(h, true) })
	}
	if h, ok := slhHash[m]; ok {
		return sig(func(r *run) sigCase {
			return r.slhCase(func() (*slhdsa.PreHash, error) { return slhdsa.NewPreHashWithHash(h) })
		})
	}
	if x, ok := slhXOF[m]; ok {
		return sig(func(r *run) sigCase {
			return r.slhCase(func() (*slhdsa.PreHash, error) { return slhdsa.NewPreHashWithXof(x) })
		})
	}
	switch m {
	case ck.CKM_RSA_PKCS:
		return &mcase{fSig | fCipher | fWrap, func(r *run, m, f uint64) {
			r.sigRoundTrip(m, f, r.rsaPKCSCase(crypto.SHA256, false))
			r.cipherRoundTrip(m, r.rsaCipher(false))
			r.wrapRoundTrip(m, r.rsaWrap(false))
		}}
	case ck.CKM_RSA_X_509:
		return &mcase{fSig | fCipher, func(r *run, m, f uint64) {
			r.sigRoundTrip(m, f, r.rsaRawCase())
			r.cipherRoundTrip(m, r.rsaRawCipher())
		}}
	case ck.CKM_RSA_PKCS_OAEP:
		return &mcase{fCipher | fWrap, func(r *run, m, _ uint64) {
			r.cipherRoundTrip(m, r.rsaCipher(true))
			r.wrapRoundTrip(m, r.rsaWrap(true))
			r.variant("/sha1-no-label", func() { r.cipherRoundTrip(m, r.oaepSHA1()) })
		}}
	case ck.CKM_RSA_PKCS_PSS:
		return sig(func(r *run) sigCase { return r.rsaPSSCase(crypto.SHA256, false) })
	case ck.CKM_ECDSA:
		return &mcase{fSig, func(r *run, m, f uint64) {
			r.sigRoundTrip(m, f, r.ecdsaCase(crypto.SHA256, false))
			for _, c := range otherCurves {
				r.variant("/"+c.name, func() {
					r.sigRoundTrip(m, f, r.ecdsaKeyCase("rt-"+c.name, &r.g.curves[c.name].PublicKey, crypto.SHA256, false))
				})
			}
		}}
	case ck.CKM_DSA:
		return sig(func(r *run) sigCase { return r.dsaCase(crypto.SHA256, false) })
	case ck.CKM_EDDSA:
		return &mcase{fSig, func(r *run, m, f uint64) {
			r.sigRoundTrip(m, f, r.eddsaCase())
			for _, v := range []struct {
				tag string
				ph  bool
				ctx []byte
			}{{"/ed25519ctx", false, []byte("fork")}, {"/ed25519ph", true, nil}, {"/ed25519ph-ctx", true, []byte("fork")}} {
				r.variant(v.tag, func() { r.sigRoundTrip(m, f, r.eddsaParamCase(v.ph, v.ctx)) })
			}
			r.variant("/ed448", func() { r.sigRoundTrip(m, f, r.ed448Case()) })
		}}
	case ck.CKM_ML_DSA:
		return &mcase{fSig, func(r *run, m, f uint64) {
			ctx := []byte("fork context")
			r.sigRoundTrip(m, f, r.mldsaCase(signContext(ck.CKH_HEDGE_PREFERRED, ctx), ctx))
			r.variant("/no-param", func() { r.sigRoundTrip(m, f, r.mldsaCase(nil, nil)) })
			r.variant("/deterministic", func() {
				r.sigRoundTrip(m, f, r.mldsaCase(signContext(ck.CKH_DETERMINISTIC_REQUIRED, nil), nil))
			})
			for _, l := range []string{"rt-mldsa65", "rt-mldsa87"} {
				r.variant("/"+strings.TrimPrefix(l, "rt-mldsa"), func() { r.sigRoundTrip(m, f, r.mldsaSchemeCase(l, ctx)) })
			}
		}}
	case ck.CKM_SLH_DSA:
		return &mcase{fSig, func(r *run, m, f uint64) {
			r.sigRoundTrip(m, f, r.slhCase(nil))
			r.variant("/deterministic-ctx", func() {
				c := r.slhCtxCase(ck.CKH_DETERMINISTIC_REQUIRED, []byte("fork context"))
				r.sigRoundTrip(m, f, c)
			})
		}}
	case ck.CKM_AES_CMAC:
		return sig(func(r *run) sigCase { return r.cmacCase("aes32", 0) })
	case ck.CKM_AES_CMAC_GENERAL:
		return sig(func(r *run) sigCase { return r.cmacCase("aes32", 10) })
	case ck.CKM_DES3_CMAC:
		return sig(func(r *run) sigCase { return r.cmacCase("des3", 0) })
	case ck.CKM_DES3_CMAC_GENERAL:
		return sig(func(r *run) sigCase { return r.cmacCase("des3", 5) })
	case ck.CKM_AES_MAC:
		return sig(func(r *run) sigCase { return r.cbcMACCase(0) })
	case ck.CKM_AES_MAC_GENERAL:
		return sig(func(r *run) sigCase { return r.cbcMACCase(12) })
	case ck.CKM_AES_ECB, ck.CKM_AES_CBC, ck.CKM_AES_CBC_PAD, ck.CKM_DES_ECB, ck.CKM_DES_CBC, ck.CKM_DES_CBC_PAD,
		ck.CKM_DES3_ECB, ck.CKM_DES3_CBC, ck.CKM_DES3_CBC_PAD:
		return &mcase{fCipher | fWrap, func(r *run, m, _ uint64) {
			c := r.blockCipher(m)
			r.cipherRoundTrip(m, c)
			r.wrapRoundTrip(m, wrapCase{key: c.key, unkey: c.key, param: c.param,
				want: func(v []byte) []byte { return c.want(nil, v) }})
		}}
	case ck.CKM_AES_CTR:
		return &mcase{fCipher, func(r *run, m, _ uint64) { r.cipherRoundTrip(m, r.ctrCipher()) }}
	case ck.CKM_AES_GCM:
		return &mcase{fCipher | fMsgEnc, func(r *run, m, f uint64) {
			r.cipherRoundTrip(m, r.gcmCipher())
			r.variant("/2.40-params-tag96", func() { r.cipherRoundTrip(m, r.gcm240Cipher()) })
			r.gcmMessage(m, f)
		}}
	case ck.CKM_AES_KEY_WRAP, ck.CKM_AES_KEY_WRAP_PAD, ck.CKM_AES_KEY_WRAP_KWP:
		return &mcase{fWrap, func(r *run, m, _ uint64) { r.wrapRoundTrip(m, r.kwCase(m)) }}
	case ck.CKM_ML_KEM:
		return &mcase{fKEM, func(r *run, m, _ uint64) {
			dk := r.g.mlkem
			r.kem(m, "rt-mlkem", dk.Decapsulate, dk.EncapsulationKey().Encapsulate)
			dk1 := r.g.mlkem1k
			r.variant("/1024", func() { r.kem(m, "rt-mlkem1024", dk1.Decapsulate, dk1.EncapsulationKey().Encapsulate) })
		}}
	case ck.CKM_ECDH1_DERIVE, ck.CKM_ECDH1_COFACTOR_DERIVE:
		return &mcase{ck.CKF_DERIVE, func(r *run, m, _ uint64) {
			r.ecdh(m, "rt-ec")
			r.variant("/sha256-kdf", func() { r.ecdhKDF(m) })
			for _, c := range otherCurves {
				r.variant("/"+c.name, func() { r.ecdhCurve(m, "rt-"+c.name, &r.g.curves[c.name].PublicKey) })
			}
			if m == ck.CKM_ECDH1_DERIVE { // the cofactor form is for the Weierstrass curves
				r.ecdh(m, "rt-x")
			}
		}}
	case ck.CKM_DH_PKCS_DERIVE:
		return &mcase{ck.CKF_DERIVE, func(r *run, m, _ uint64) { r.dhDerive(m, "derive", r.h["rt-dh"], r.g.dhY) }}
	case ck.CKM_HKDF_DERIVE, ck.CKM_HKDF_DATA:
		return &mcase{ck.CKF_DERIVE, func(r *run, m, _ uint64) {
			r.hkdf(m, "derive", r.h["gen"], rtGen32)
			r.variant("/extract-salt-null", func() { r.hkdfVariant(m, true, false) })
			r.variant("/expand", func() { r.hkdfVariant(m, false, true) })
		}}
	case ck.CKM_AES_ECB_ENCRYPT_DATA, ck.CKM_AES_CBC_ENCRYPT_DATA, ck.CKM_DES_ECB_ENCRYPT_DATA,
		ck.CKM_DES_CBC_ENCRYPT_DATA, ck.CKM_DES3_ECB_ENCRYPT_DATA, ck.CKM_DES3_CBC_ENCRYPT_DATA:
		return &mcase{ck.CKF_DERIVE, func(r *run, m, _ uint64) { r.encryptData(m) }}
	case ck.CKM_AES_KEY_GEN, ck.CKM_DES_KEY_GEN, ck.CKM_DES2_KEY_GEN, ck.CKM_DES3_KEY_GEN,
		ck.CKM_GENERIC_SECRET_KEY_GEN, ck.CKM_HKDF_KEY_GEN:
		return &mcase{ck.CKF_GENERATE, func(r *run, m, _ uint64) { r.keyGen(m) }}
	case ck.CKM_DSA_PARAMETER_GEN, ck.CKM_DH_PKCS_PARAMETER_GEN:
		return &mcase{ck.CKF_GENERATE, func(r *run, m, _ uint64) { r.paramGen(m) }}
	case ck.CKM_RSA_PKCS_KEY_PAIR_GEN, ck.CKM_EC_KEY_PAIR_GEN, ck.CKM_EC_EDWARDS_KEY_PAIR_GEN,
		ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN, ck.CKM_DSA_KEY_PAIR_GEN, ck.CKM_DH_PKCS_KEY_PAIR_GEN,
		ck.CKM_ML_KEM_KEY_PAIR_GEN, ck.CKM_ML_DSA_KEY_PAIR_GEN, ck.CKM_SLH_DSA_KEY_PAIR_GEN:
		return &mcase{ck.CKF_GENERATE_KEY_PAIR, func(r *run, m, _ uint64) { r.pairGen(m) }}
	}
	return nil
}

// sig is the case of a signature or MAC mechanism.
func sig(c func(r *run) sigCase) *mcase {
	return &mcase{fSig, func(r *run, m, f uint64) { r.sigRoundTrip(m, f, c(r)) }}
}

// ---- signatures and MACs ----

// sigCase is a signature (or MAC) round trip: the keys, the parameter,
// the data C_Sign gets, whether it takes several parts, and Go's check.
type sigCase struct {
	priv, pub string
	param     *pb
	data      []byte
	parts     bool
	verify    func(data, sig []byte) error
}

// mech is the CK_MECHANISM of type m with the case's parameter.
func (c sigCase) mech(m uint64) mech {
	if c.param == nil {
		return plain(m)
	}
	return c.param.mech(m)
}

// sign is C_SignInit and C_Sign.
func (r *run) sign(m mech, key uint64, data []byte) (uint64, []byte) {
	return r.crypt(kSign, m, key, data)
}

// verify is C_VerifyInit and C_Verify.
func (r *run) verify(m mech, key uint64, data, sig []byte) uint64 {
	if rv, _ := r.c.call(opInit, kVerify, r.s, m, key); rv != rvOK {
		return rv
	}
	rv, _ := r.c.call(opOneShot, kVerify, r.s, data, sig)
	return rv
}

// sigRoundTrip signs twice (the transcript keeps a deterministic
// signature's fingerprint, or "random"), checks the signature in Go, has
// the token verify it and refuse it over other data, signs and verifies in
// two parts when the mechanism takes parts, and through the message-based
// functions when its flags claim them.
func (r *run) sigRoundTrip(m, flags uint64, c sigCase) {
	mm := c.mech(m)
	priv, pub := r.h[c.priv], r.h[c.pub]
	rv, s1 := r.sign(mm, priv, c.data)
	if !r.want(m, "sign", rv, "") {
		return
	}
	if err := c.verify(c.data, s1); err != nil {
		r.errorf(m, "sign", "Go does not verify the signature: %v", err)
	}
	_, s2 := r.sign(mm, priv, c.data)
	kind := "random"
	if bytes.Equal(s1, s2) {
		kind = "deterministic " + short(s1)
	}
	r.rec(m, "sign-again", rvOK, kind)
	r.want(m, "verify", r.verify(mm, pub, c.data, s1), "")
	other := bytes.Clone(c.data)
	other[0] ^= 1
	rv = r.verify(mm, pub, other, s1)
	r.rec(m, "verify-other", rv, "")
	if rv != rvSignatureInvalid {
		r.errorf(m, "verify-other", "%s, want CKR_SIGNATURE_INVALID", rvName(rv))
	}
	if c.parts {
		k := len(c.data) / 3
		if rv, _ := r.c.call(opInit, kSign, r.s, mm, priv); r.want(m, "sign-init", rv, "") {
			r.c.call(opUpdate, kSign, r.s, c.data[:k], 0)
			r.c.call(opUpdate, kSign, r.s, c.data[k:], 0)
			rv, out := r.c.call(opFinal, kSign, r.s, 0)
			if r.want(m, "sign-parts", rv, "") {
				if err := c.verify(c.data, out[0]); err != nil {
					r.errorf(m, "sign-parts", "Go does not verify the signature: %v", err)
				}
			}
		}
		if rv, _ := r.c.call(opInit, kVerify, r.s, mm, pub); r.want(m, "verify-init", rv, "") {
			r.c.call(opUpdate, kVerify, r.s, c.data[:k], 0)
			r.c.call(opUpdate, kVerify, r.s, c.data[k:], 0)
			rv, _ := r.c.call(opFinal, kVerify, r.s, s1)
			r.want(m, "verify-parts", rv, "")
		}
	}
	if flags&ck.CKF_MESSAGE_SIGN != 0 {
		if rv, _ := r.c.call(opInit, kMsgSign, r.s, mm, priv); r.want(m, "message-sign-init", rv, "") {
			rv, out := r.c.call(opMsg, kMsgSign, r.s, mech{}, []byte(nil), c.data, 0)
			if r.want(m, "sign-message", rv, "") {
				if err := c.verify(c.data, out[0]); err != nil {
					r.errorf(m, "sign-message", "Go does not verify the signature: %v", err)
				}
			}
			rv, _ = r.c.call(opMsgFinal, kMsgSign, r.s)
			r.want(m, "message-sign-final", rv, "")
		}
	}
	if flags&ck.CKF_MESSAGE_VERIFY != 0 {
		if rv, _ := r.c.call(opInit, kMsgVerify, r.s, mm, pub); r.want(m, "message-verify-init", rv, "") {
			rv, _ := r.c.call(opMsg, kMsgVerify, r.s, mech{}, []byte(nil), c.data, s1)
			r.want(m, "verify-message", rv, "")
			rv, _ = r.c.call(opMsg, kMsgVerify, r.s, mech{}, []byte(nil), other, s1)
			r.rec(m, "verify-message-other", rv, "")
			if rv != rvSignatureInvalid {
				r.errorf(m, "verify-message-other", "%s, want CKR_SIGNATURE_INVALID", rvName(rv))
			}
			rv, _ = r.c.call(opMsgFinal, kMsgVerify, r.s)
			r.want(m, "message-verify-final", rv, "")
		}
	}
}

// equalMAC is a MAC check: the token's MAC is want.
func equalMAC(want []byte) func(_, sig []byte) error {
	return func(_, sig []byte) error {
		if !bytes.Equal(sig, want) {
			return fmt.Errorf("MAC %x, Go says %x", sig, want)
		}
		return nil
	}
}

// general is CK_MAC_GENERAL_PARAMS (n > 0), or no parameter.
func general(n int) *pb {
	if n == 0 {
		return nil
	}
	return new(pb).ul(uint64(n))
}

// hmacCase is HMAC with h on the generic secret "gen", the whole MAC or
// (n > 0, the _GENERAL form) its first n bytes, against crypto/hmac.
func (r *run) hmacCase(h crypto.Hash, n int) sigCase {
	mac := hmac.New(h.New, rtGen32)
	mac.Write(rtMsg)
	want := mac.Sum(nil)
	if n > 0 {
		want = want[:n]
	}
	return sigCase{priv: "gen", pub: "gen", param: general(n), data: rtMsg, parts: true, verify: equalMAC(want)}
}

// cmacCase is CMAC on the AES-256 or the DES3 key, whole or (n > 0) its
// first n bytes, against cmac.
func (r *run) cmacCase(key string, n int) sigCase {
	var b cipher.Block
	if key == "des3" {
		b, _ = des.NewTripleDESCipher(rtDES24)
	} else {
		b, _ = aes.NewCipher(rtAES32)
	}
	want := cmac(b, rtMsg)
	if n > 0 {
		want = want[:n]
	} else if b.BlockSize() == 16 {
		want = want[:16]
	}
	return sigCase{priv: key, pub: key, param: general(n), data: rtMsg, parts: true, verify: equalMAC(want)}
}

// cbcMACCase is AES-MAC: CBC-MAC over the data padded with zeros, half a
// block or (n > 0) n bytes.
func (r *run) cbcMACCase(n int) sigCase {
	b, _ := aes.NewCipher(rtAES32)
	data := append(bytes.Clone(rtMsg), make([]byte, (16-len(rtMsg)%16)%16)...)
	x := make([]byte, 16)
	cipher.NewCBCEncrypter(b, make([]byte, 16)).CryptBlocks(data, data)
	copy(x, data[len(data)-16:])
	want := x[:8]
	if n > 0 {
		want = x[:n]
	}
	return sigCase{priv: "aes32", pub: "aes32", param: general(n), data: rtMsg, parts: true, verify: equalMAC(want)}
}

// cmac is RFC 4493's CMAC over any 64- or 128-bit block cipher (NIST SP
// 800-38B), written here from the RFC.
func cmac(b cipher.Block, msg []byte) []byte {
	bs := b.BlockSize()
	rb := byte(0x87)
	if bs == 8 {
		rb = 0x1b
	}
	dbl := func(in []byte) []byte {
		out := make([]byte, bs)
		for i := range bs {
			out[i] = in[i] << 1
			if i+1 < bs {
				out[i] |= in[i+1] >> 7
			}
		}
		if in[0]&0x80 != 0 {
			out[bs-1] ^= rb
		}
		return out
	}
	l := make([]byte, bs)
	b.Encrypt(l, l)
	k1 := dbl(l)
	k2 := dbl(k1)
	n := (len(msg) + bs - 1) / bs
	last := make([]byte, bs)
	if n > 0 && len(msg)%bs == 0 {
		copy(last, msg[(n-1)*bs:])
		subtle(last, k1)
	} else {
		if n == 0 {
			n = 1
		}
		rest := msg[(n-1)*bs:]
		copy(last, rest)
		last[len(rest)] = 0x80
		subtle(last, k2)
	}
	x := make([]byte, bs)
	for i := 0; i < n-1; i++ {
		subtle(x, msg[i*bs:(i+1)*bs])
		b.Encrypt(x, x)
	}
	subtle(x, last)
	b.Encrypt(x, x)
	return x
}

// subtle xors b into a.
func subtle(a, b []byte) {
	for i := range a {
		a[i] ^= b[i]
	}
}

// rsaPKCSCase: CKM_RSA_PKCS signs a DigestInfo the caller made; the
// hashed mechanisms the message.
func (r *run) rsaPKCSCase(h crypto.Hash, hashed bool) sigCase {
	pub := &r.g.rsa.PublicKey
	if hashed {
		return sigCase{priv: "rt-rsa", pub: "rt-rsa.pub", data: rtMsg, parts: true, verify: func(d, s []byte) error {
			return rsa.VerifyPKCS1v15(pub, h, digestOf(h, d), s)
		}}
	}
	prefix, _ := hex.DecodeString("3031300d060960864801650304020105000420") // SHA-256's DigestInfo
	return sigCase{priv: "rt-rsa", pub: "rt-rsa.pub", data: append(prefix, digestOf(h, rtMsg)...), verify: func(d, s []byte) error {
		return rsa.VerifyPKCS1v15(pub, 0, d, s)
	}}
}

// rsaPSSCase is PSS with h, MGF1 with h and a salt of h's size, over the
// message (hashed) or its digest (CKM_RSA_PKCS_PSS).
func (r *run) rsaPSSCase(h crypto.Hash, hashed bool) sigCase {
	pub := &r.g.rsa.PublicKey
	opts := &rsa.PSSOptions{SaltLength: h.Size(), Hash: h}
	c := hashedOr("rt-rsa", h, hashed, func(digest, sig []byte) error { return rsa.VerifyPSS(pub, h, digest, sig, opts) })
	c.param = new(pb).ul(hashMech[h]).ul(mgf1[h]).ul(uint64(h.Size()))
	return c
}

// rsaRawCase: CKM_RSA_X_509 signs a modulus-sized block: s^e mod n.
func (r *run) rsaRawCase() sigCase {
	pub := &r.g.rsa.PublicKey
	data := make([]byte, pub.Size())
	copy(data[1:], bytes.Repeat(rtMsg, 6))
	return sigCase{priv: "rt-rsa", pub: "rt-rsa.pub", data: data, verify: func(d, s []byte) error {
		e := new(big.Int).Exp(new(big.Int).SetBytes(s), big.NewInt(int64(pub.E)), pub.N)
		if e.Cmp(new(big.Int).SetBytes(d)) != 0 {
			return errors.New("s^e mod n is not the data")
		}
		return nil
	}}
}

// rs splits r‖s.
func rs(sig []byte) (*big.Int, *big.Int) {
	n := len(sig) / 2
	return new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
}

// ecdsaCase is ECDSA on the P-256 token key, over the message hashed with
// h (hashed) or its digest (CKM_ECDSA), checked by crypto/ecdsa.
func (r *run) ecdsaCase(h crypto.Hash, hashed bool) sigCase {
	return r.ecdsaKeyCase("rt-ec", &r.g.ec.PublicKey, h, hashed)
}

// ecdsaKeyCase is ecdsaCase with the token key key, whose public key is pub.
func (r *run) ecdsaKeyCase(key string, pub *ecdsa.PublicKey, h crypto.Hash, hashed bool) sigCase {
	n := (pub.Curve.Params().N.BitLen() + 7) / 8
	return hashedOr(key, h, hashed, func(digest, sig []byte) error {
		if len(sig) != 2*n {
			return fmt.Errorf("a %s signature of %d bytes", pub.Curve.Params().Name, len(sig))
		}
		if a, b := rs(sig); !ecdsa.Verify(pub, digest, a, b) {
			return errors.New("crypto/ecdsa refuses it")
		}
		return nil
	})
}

// dsaCase is DSA on the token key, the digest cut to q's size as FIPS
// 186-4 says, checked by crypto/dsa.
func (r *run) dsaCase(h crypto.Hash, hashed bool) sigCase {
	pub := &r.g.dsa.PublicKey
	qn := (pub.Q.BitLen() + 7) / 8
	return hashedOr("rt-dsa", h, hashed, func(digest, sig []byte) error {
		if len(sig) != 2*qn {
			return fmt.Errorf("a signature of %d bytes", len(sig))
		}
		if len(digest) > qn {
			digest = digest[:qn]
		}
		if a, b := rs(sig); !dsa.Verify(pub, digest, a, b) {
			return errors.New("crypto/dsa refuses it")
		}
		return nil
	})
}

// hashedOr is the case of a key's signature over the message (hashed: the
// mechanism hashes it with h) or over its digest (the raw mechanism), both
// checked over the digest.
func hashedOr(key string, h crypto.Hash, hashed bool, check func(digest, sig []byte) error) sigCase {
	if hashed {
		return sigCase{priv: key, pub: key + ".pub", data: rtMsg, parts: true, verify: func(d, s []byte) error {
			return check(digestOf(h, d), s)
		}}
	}
	return sigCase{priv: key, pub: key + ".pub", data: digestOf(h, rtMsg), verify: check}
}

// eddsaCase is Ed25519 without a parameter, checked by crypto/ed25519.
func (r *run) eddsaCase() sigCase {
	return sigCase{priv: "rt-ed", pub: "rt-ed.pub", data: rtMsg, parts: true, verify: func(d, s []byte) error {
		if !ed25519.Verify(r.g.ed, d, s) {
			return errors.New("crypto/ed25519 refuses it")
		}
		return nil
	}}
}

// eddsaParamCase is Ed25519ph (ph) or Ed25519ctx, with CK_EDDSA_PARAMS.
func (r *run) eddsaParamCase(ph bool, ctx []byte) sigCase {
	p := new(pb).bbool(ph, true).ul(uint64(len(ctx))).ptr(ctx)
	return sigCase{priv: "rt-ed", pub: "rt-ed.pub", param: p, data: rtMsg, parts: true, verify: func(d, s []byte) error {
		opts := &ed25519.Options{Context: string(ctx)}
		if ph {
			opts.Hash, d = crypto.SHA512, digestOf(crypto.SHA512, d)
		}
		return ed25519.VerifyWithOptions(r.g.ed, d, s, opts)
	}}
}

// ed448Case is Ed448 (RFC 8032, an empty context), checked by circl.
func (r *run) ed448Case() sigCase {
	return sigCase{priv: "rt-ed448", pub: "rt-ed448.pub", data: rtMsg, parts: true, verify: func(d, s []byte) error {
		if !ed448.Verify(r.g.ed448, d, s, "") {
			return errors.New("circl's Ed448 refuses it")
		}
		return nil
	}}
}

// signContext is CK_SIGN_ADDITIONAL_CONTEXT.
func signContext(hedge uint64, ctx []byte) *pb {
	return new(pb).ul(hedge).ptr(ctx).ul(uint64(len(ctx)))
}

// mldsaCase signs with the parameter p (nil: none) over the context ctx.
func (r *run) mldsaCase(p *pb, ctx []byte) sigCase {
	return sigCase{priv: "rt-mldsa", pub: "rt-mldsa.pub", param: p, data: rtMsg, parts: true,
		verify: func(d, s []byte) error {
			if !mldsa44.Verify(r.g.mldsa, d, ctx, s) {
				return errors.New("circl's ML-DSA-44 refuses it")
			}
			return nil
		}}
}

// mldsaSchemes are the circl schemes of the other ML-DSA token keys.
var mldsaSchemes = map[string]sign.Scheme{"rt-mldsa65": mldsa65.Scheme(), "rt-mldsa87": mldsa87.Scheme()}

// mldsaSchemeCase is ML-DSA on the key l (ML-DSA-65 or -87) with a
// context, checked by circl's scheme.
func (r *run) mldsaSchemeCase(l string, ctx []byte) sigCase {
	sch, pk := mldsaSchemes[l], r.g.mldsaPQ[l]
	return sigCase{priv: l, pub: l + ".pub", param: signContext(ck.CKH_HEDGE_PREFERRED, ctx), data: rtMsg, parts: true,
		verify: func(d, s []byte) error {
			if !sch.Verify(pk, d, s, &sign.SignatureOpts{Context: string(ctx)}) {
				return fmt.Errorf("circl's %s refuses it", sch.Name())
			}
			return nil
		}}
}

// slhCtxCase is pure SLH-DSA with CK_SIGN_ADDITIONAL_CONTEXT.
func (r *run) slhCtxCase(hedge uint64, ctx []byte) sigCase {
	return sigCase{priv: "rt-slh", pub: "rt-slh.pub", param: signContext(hedge, ctx), data: rtMsg, parts: true,
		verify: func(d, s []byte) error {
			if !slhdsa.Verify(r.g.slh, slhdsa.NewMessage(d), s, ctx) {
				return errors.New("circl's SLH-DSA refuses it")
			}
			return nil
		}}
}

// slhCase: pure SLH-DSA (ph nil) or HashSLH-DSA with the pre-hash ph.
func (r *run) slhCase(ph func() (*slhdsa.PreHash, error)) sigCase {
	return sigCase{priv: "rt-slh", pub: "rt-slh.pub", data: rtMsg, parts: true, verify: func(d, s []byte) error {
		msg := slhdsa.NewMessage(d)
		if ph != nil {
			h, err := ph()
			if err != nil {
				return err
			}
			h.Write(d)
			if msg, err = h.BuildMessage(); err != nil {
				return err
			}
		}
		if !slhdsa.Verify(r.g.slh, msg, s, nil) {
			return errors.New("circl's SLH-DSA refuses it")
		}
		return nil
	}}
}

// digest is a digest in one part and in two, against Go's.
func (r *run) digest(m uint64, h crypto.Hash) {
	want := digestOf(h, rtMsg)
	if rv, _ := r.c.call(opInit, kDigest, r.s, plain(m), 0); r.want(m, "digest-init", rv, "") {
		rv, out := r.c.call(opOneShot, kDigest, r.s, rtMsg, 0)
		if r.want(m, "digest", rv, short(want)) && !bytes.Equal(out[0], want) {
			r.errorf(m, "digest", "%x, Go says %x", out[0], want)
		}
	}
	if rv, _ := r.c.call(opInit, kDigest, r.s, plain(m), 0); r.want(m, "digest-init", rv, "") {
		r.c.call(opUpdate, kDigest, r.s, rtMsg[:7], 0)
		r.c.call(opUpdate, kDigest, r.s, rtMsg[7:], 0)
		rv, out := r.c.call(opFinal, kDigest, r.s, 0)
		if r.want(m, "digest-parts", rv, "") && !bytes.Equal(out[0], want) {
			r.errorf(m, "digest-parts", "%x, Go says %x", out[0], want)
		}
	}
}

// ---- ciphers ----

// cipherCase is an encryption round trip: the key, a fresh parameter for
// each use (and what Go needs of it: the IV), the plaintext, and Go's
// side: the expected ciphertext (want, deterministic ciphers) or Go's
// decryption of the token's and encryption for the token (randomized).
type cipherCase struct {
	key       string
	dekey     string // the decryption key, when not key
	param     func() (mech, []byte)
	pt        []byte
	want      func(iv, pt []byte) []byte
	goDecrypt func(ct []byte) ([]byte, error)
	goEncrypt func(pt []byte) []byte
	parts     bool
}

// crypt is C_{En,De}cryptInit and C_{En,De}crypt (or C_SignInit and
// C_Sign).
func (r *run) crypt(kind int, m mech, key uint64, in []byte) (uint64, []byte) {
	if rv, _ := r.c.call(opInit, kind, r.s, m, key); rv != rvOK {
		return rv, nil
	}
	rv, out := r.c.call(opOneShot, kind, r.s, in, 0)
	if rv != rvOK {
		return rv, nil
	}
	return rv, out[0]
}

// cryptParts is the same in two parts and a final one.
func (r *run) cryptParts(kind int, m mech, key uint64, in []byte) (uint64, []byte) {
	if rv, _ := r.c.call(opInit, kind, r.s, m, key); rv != rvOK {
		return rv, nil
	}
	var all []byte
	k := len(in) / 3
	for _, part := range [][]byte{in[:k], in[k:]} {
		rv, out := r.c.call(opUpdate, kind, r.s, part, 0)
		if rv != rvOK {
			return rv, nil
		}
		all = append(all, out[0]...)
	}
	rv, out := r.c.call(opFinal, kind, r.s, 0)
	if rv != rvOK {
		return rv, nil
	}
	return rv, append(all, out[0]...)
}

// cipherRoundTrip encrypts (Go checks the ciphertext or decrypts it),
// decrypts Go's ciphertext, and does both in parts when the case takes
// parts.
func (r *run) cipherRoundTrip(m uint64, c cipherCase) {
	key := r.h[c.key]
	mm, iv := c.param()
	rv, ct := r.crypt(kEncrypt, mm, key, c.pt)
	if rv == rvOK && c.want != nil {
		want := c.want(iv, c.pt)
		r.rec(m, "encrypt", rv, short(ct))
		if !bytes.Equal(ct, want) {
			r.errorf(m, "encrypt", "%x, Go says %x", ct, want)
		}
	} else if r.want(m, "encrypt", rv, "random") {
		if pt, err := c.goDecrypt(ct); err != nil || !bytes.Equal(pt, c.pt) {
			r.errorf(m, "encrypt", "Go decrypts %x (%v)", pt, err)
		}
	}
	if rv != rvOK {
		r.errorf(m, "encrypt", "%s", rvName(rv))
	}
	mm, iv = c.param()
	var in []byte
	if c.want != nil {
		in = c.want(iv, c.pt)
	} else {
		in = c.goEncrypt(c.pt)
	}
	dekey := key
	if c.dekey != "" {
		dekey = r.h[c.dekey]
	}
	rv, pt := r.crypt(kDecrypt, mm, dekey, in)
	if r.want(m, "decrypt", rv, "") && !bytes.Equal(pt, c.pt) {
		r.errorf(m, "decrypt", "%x, want %x", pt, c.pt)
	}
	if !c.parts {
		return
	}
	mm, iv = c.param()
	want := c.want(iv, c.pt)
	rv, ct = r.cryptParts(kEncrypt, mm, key, c.pt)
	if r.want(m, "encrypt-parts", rv, "") && !bytes.Equal(ct, want) {
		r.errorf(m, "encrypt-parts", "%x, Go says %x", ct, want)
	}
	mm, iv = c.param()
	rv, pt = r.cryptParts(kDecrypt, mm, key, c.want(iv, c.pt))
	if r.want(m, "decrypt-parts", rv, "") && !bytes.Equal(pt, c.pt) {
		r.errorf(m, "decrypt-parts", "%x, want %x", pt, c.pt)
	}
}

// blockCipher is AES or DES in ECB, CBC or CBC with PKCS#7 padding.
func (r *run) blockCipher(m uint64) cipherCase {
	key, val, ivs := "aes32", rtAES32, rtIV16
	var newBlock func([]byte) (cipher.Block, error) = aes.NewCipher
	switch m {
	case ck.CKM_DES_ECB, ck.CKM_DES_CBC, ck.CKM_DES_CBC_PAD:
		key, val, ivs, newBlock = "des", rtDES8, rtIV8, des.NewCipher
	case ck.CKM_DES3_ECB, ck.CKM_DES3_CBC, ck.CKM_DES3_CBC_PAD:
		key, val, ivs, newBlock = "des3", rtDES24, rtIV8, des.NewTripleDESCipher
	}
	b, _ := newBlock(val)
	ecb := m == ck.CKM_AES_ECB || m == ck.CKM_DES_ECB || m == ck.CKM_DES3_ECB
	pad := m == ck.CKM_AES_CBC_PAD || m == ck.CKM_DES_CBC_PAD || m == ck.CKM_DES3_CBC_PAD
	param := func() (mech, []byte) {
		if ecb {
			return plain(m), nil
		}
		return mech{typ: m, param: ivs}, ivs
	}
	want := func(_, pt []byte) []byte {
		bs := b.BlockSize()
		in := bytes.Clone(pt)
		if pad {
			n := bs - len(in)%bs
			in = append(in, bytes.Repeat([]byte{byte(n)}, n)...)
		}
		out := make([]byte, len(in))
		if ecb {
			for i := 0; i < len(in); i += bs {
				b.Encrypt(out[i:], in[i:i+bs])
			}
		} else {
			cipher.NewCBCEncrypter(b, ivs).CryptBlocks(out, in)
		}
		return out
	}
	return cipherCase{key: key, param: param, pt: rtMsg, want: want, parts: true}
}

// ctrCipher is AES-CTR with a 32-bit counter (CK_AES_CTR_PARAMS).
func (r *run) ctrCipher() cipherCase {
	b, _ := aes.NewCipher(rtAES32)
	cb := append(bytes.Repeat([]byte{0x42}, 12), 0, 0, 0, 1)
	return cipherCase{key: "aes32", pt: rtMsg[:45], parts: true,
		param: func() (mech, []byte) { return new(pb).ul(32).raw(cb).mech(ck.CKM_AES_CTR), cb },
		want: func(_, pt []byte) []byte {
			out := make([]byte, len(pt))
			cipher.NewCTR(b, cb).XORKeyStream(out, pt)
			return out
		}}
}

// gcmCipher: CK_GCM_PARAMS with a new IV at each use (the token refuses a
// repeated caller IV on a key).
func (r *run) gcmCipher() cipherCase {
	b, _ := aes.NewCipher(rtAES32)
	g, _ := cipher.NewGCM(b)
	aad := []byte("fork aad")
	return cipherCase{key: "aes32", pt: rtMsg, parts: true,
		param: func() (mech, []byte) {
			r.ivn++
			iv := append(bytes.Repeat([]byte{0x17}, 11), r.ivn)
			return new(pb).ptr(iv).ul(12).ul(96).ptr(aad).ul(uint64(len(aad))).ul(128).mech(ck.CKM_AES_GCM), iv
		},
		want: func(iv, pt []byte) []byte { return g.Seal(nil, iv, pt, aad) }}
}

// gcm240Cipher: the 2.40 CK_GCM_PARAMS (no ulIvBits) and a 96-bit tag.
func (r *run) gcm240Cipher() cipherCase {
	b, _ := aes.NewCipher(rtAES32)
	g, _ := cipher.NewGCMWithTagSize(b, 12)
	aad := []byte("fork aad 2.40")
	return cipherCase{key: "aes32", pt: rtMsg, parts: true,
		param: func() (mech, []byte) {
			r.ivn++
			iv := append(bytes.Repeat([]byte{0x27}, 11), r.ivn)
			return new(pb).ptr(iv).ul(12).ptr(aad).ul(uint64(len(aad))).ul(96).mech(ck.CKM_AES_GCM), iv
		},
		want: func(iv, pt []byte) []byte { return g.Seal(nil, iv, pt, aad) }}
}

// gcmMessage is the 3.0 message-based AES-GCM: the token makes the IV
// (CKG_GENERATE_RANDOM) and writes it and the tag back; Go opens it, and
// the token opens Go's.
func (r *run) gcmMessage(m, flags uint64) {
	b, _ := aes.NewCipher(rtAES32)
	g, _ := cipher.NewGCM(b)
	aad := []byte("message aad")
	key := r.h["aes32"]
	if flags&ck.CKF_MESSAGE_ENCRYPT != 0 {
		if rv, _ := r.c.call(opInit, kMsgEncrypt, r.s, plain(m), key); r.want(m, "message-encrypt-init", rv, "") {
			p := new(pb).ptr(make([]byte, 12)).ul(12).ul(0).ul(ck.CKG_GENERATE_RANDOM).ptr(make([]byte, 16)).ul(128)
			rv, out := r.c.call(opMsg, kMsgEncrypt, r.s, p.mech(0), aad, rtMsg, len(rtMsg))
			if r.want(m, "encrypt-message", rv, "random") && len(out) == 3 {
				iv, tag := out[1], out[2]
				if pt, err := g.Open(nil, iv, append(bytes.Clone(out[0]), tag...), aad); err != nil || !bytes.Equal(pt, rtMsg) {
					r.errorf(m, "encrypt-message", "Go opens %x (%v)", pt, err)
				}
			}
			rv, _ = r.c.call(opMsgFinal, kMsgEncrypt, r.s)
			r.want(m, "message-encrypt-final", rv, "")
		}
	}
	if flags&ck.CKF_MESSAGE_DECRYPT != 0 {
		if rv, _ := r.c.call(opInit, kMsgDecrypt, r.s, plain(m), key); r.want(m, "message-decrypt-init", rv, "") {
			iv := seq(12, 0x33)
			sealed := g.Seal(nil, iv, rtMsg, aad)
			ct, tag := sealed[:len(rtMsg)], sealed[len(rtMsg):]
			p := new(pb).ptr(iv).ul(12).ul(0).ul(ck.CKG_NO_GENERATE).ptr(tag).ul(128)
			rv, out := r.c.call(opMsg, kMsgDecrypt, r.s, p.mech(0), aad, ct, len(ct))
			if r.want(m, "decrypt-message", rv, "") && !bytes.Equal(out[0], rtMsg) {
				r.errorf(m, "decrypt-message", "%x, want %x", out[0], rtMsg)
			}
			rv, _ = r.c.call(opMsgFinal, kMsgDecrypt, r.s)
			r.want(m, "message-decrypt-final", rv, "")
		}
	}
}

// oaepParam is CK_RSA_PKCS_OAEP_PARAMS (SHA-256, a label).
func oaepParam() *pb {
	return new(pb).ul(ck.CKM_SHA256).ul(ck.CKG_MGF1_SHA256).ul(ck.CKZ_DATA_SPECIFIED).ptr([]byte("fork")).ul(4)
}

// rsaCipher is RSA PKCS#1 v1.5 or OAEP encryption.
func (r *run) rsaCipher(oaep bool) cipherCase {
	k := r.g.rsa
	m := plain(ck.CKM_RSA_PKCS)
	if oaep {
		m = oaepParam().mech(ck.CKM_RSA_PKCS_OAEP)
	}
	c := cipherCase{key: "rt-rsa.pub", dekey: "rt-rsa", pt: rtMsg, param: func() (mech, []byte) { return m, nil }}
	c.goDecrypt = func(ct []byte) ([]byte, error) {
		if oaep {
			return rsa.DecryptOAEP(sha256.New(), nil, k, ct, []byte("fork"))
		}
		return rsa.DecryptPKCS1v15(nil, k, ct)
	}
	c.goEncrypt = func(pt []byte) []byte {
		var ct []byte
		if oaep {
			ct, _ = rsa.EncryptOAEP(sha256.New(), rand.Reader, &k.PublicKey, pt, []byte("fork"))
		} else {
			ct, _ = rsa.EncryptPKCS1v15(rand.Reader, &k.PublicKey, pt)
		}
		return ct
	}
	return c
}

// oaepSHA1 is OAEP with SHA-1 and MGF1-SHA-1 and no label.
func (r *run) oaepSHA1() cipherCase {
	k := r.g.rsa
	m := new(pb).ul(ck.CKM_SHA_1).ul(ck.CKG_MGF1_SHA1).ul(ck.CKZ_DATA_SPECIFIED).ptr(nil).ul(0).mech(ck.CKM_RSA_PKCS_OAEP)
	return cipherCase{key: "rt-rsa.pub", dekey: "rt-rsa", pt: rtMsg, param: func() (mech, []byte) { return m, nil },
		goDecrypt: func(ct []byte) ([]byte, error) { return rsa.DecryptOAEP(sha1.New(), nil, k, ct, nil) },
		goEncrypt: func(pt []byte) []byte {
			ct, _ := rsa.EncryptOAEP(sha1.New(), rand.Reader, &k.PublicKey, pt, nil)
			return ct
		}}
}

// rsaRawCipher is CKM_RSA_X_509: m^e mod n, deterministic.
func (r *run) rsaRawCipher() cipherCase {
	pub := &r.g.rsa.PublicKey
	pt := make([]byte, pub.Size())
	copy(pt[1:], bytes.Repeat(rtMsg, 6))
	return cipherCase{key: "rt-rsa.pub", dekey: "rt-rsa", pt: pt, param: func() (mech, []byte) { return plain(ck.CKM_RSA_X_509), nil },
		want: func(_, pt []byte) []byte {
			return new(big.Int).Exp(new(big.Int).SetBytes(pt), big.NewInt(int64(pub.E)), pub.N).FillBytes(make([]byte, pub.Size()))
		}}
}

// ---- wrapping ----

// wrapCase is a wrap round trip of the AES-128 key "target": the wrapping
// and unwrapping keys, the parameter, and Go's side: the expected blob
// (deterministic wraps), or Go's unwrap of the token's blob and a blob of
// Go's for the token to unwrap.
type wrapCase struct {
	key, unkey string
	param      func() (mech, []byte)
	want       func(v []byte) []byte
	goUnwrap   func(blob []byte) ([]byte, error)
	goWrap     func(v []byte) []byte
}

// aesProbe is what proves an unwrapped AES key's value: its AES-ECB
// encryption of a zero block, by the token, against Go's.
func (r *run) aesProbe(m uint64, op string, h uint64, val []byte) {
	rv, ct := r.crypt(kEncrypt, plain(ck.CKM_AES_ECB), h, make([]byte, 16))
	b, _ := aes.NewCipher(val)
	want := make([]byte, 16)
	b.Encrypt(want, want)
	if r.want(m, op+"-probe", rv, "") && !bytes.Equal(ct, want) {
		r.errorf(m, op, "the new key encrypts to %x, a key of the wrapped value to %x", ct, want)
	}
}

// wrapRoundTrip wraps "target" (Go checks or unwraps the blob), then
// unwraps Go's blob (or the token's, checked) into an AES key that must
// encrypt as the target's value does.
func (r *run) wrapRoundTrip(m uint64, c wrapCase) {
	mm, _ := c.param()
	rv, out := r.c.call(opWrap, r.s, mm, r.h[c.key], r.h["target"], 0)
	var blob []byte
	if rv == rvOK {
		blob = out[0]
	}
	if c.want != nil {
		want := c.want(rtTarget)
		if r.want(m, "wrap", rv, short(blob)) && !bytes.Equal(blob, want) {
			r.errorf(m, "wrap", "%x, Go says %x", blob, want)
		}
	} else if r.want(m, "wrap", rv, "random") {
		if v, err := c.goUnwrap(blob); err != nil || !bytes.Equal(v, rtTarget) {
			r.errorf(m, "wrap", "Go unwraps %x (%v), want %x", v, err, rtTarget)
		}
	}
	in := blob
	switch {
	case c.want != nil:
		in = c.want(rtTarget)
	case c.goWrap != nil:
		in = c.goWrap(rtTarget)
	}
	mm, _ = c.param()
	yes := boolv(true)
	t := tmpl{{ck.CKA_CLASS, ulv(ck.CKO_SECRET_KEY)}, {ck.CKA_KEY_TYPE, ulv(ck.CKK_AES)}, {ck.CKA_TOKEN, boolv(false)},
		{ck.CKA_ENCRYPT, yes}}
	rv, out = r.c.call(opUnwrap, r.s, mm, r.h[c.unkey], in, t)
	if r.want(m, "unwrap", rv, "") {
		r.aesProbe(m, "unwrap", u64of(out[0]), rtTarget)
		r.c.call(opDestroy, r.s, u64of(out[0]))
	}
}

// rsaWrap is wrapping with RSA PKCS#1 v1.5 or OAEP: Go decrypts the
// token's blob and encrypts one for it.
func (r *run) rsaWrap(oaep bool) wrapCase {
	c := r.rsaCipher(oaep)
	return wrapCase{key: "rt-rsa.pub", unkey: "rt-rsa", param: c.param, goUnwrap: c.goDecrypt, goWrap: c.goEncrypt}
}

// kwCase: RFC 3394 (CKM_AES_KEY_WRAP, checked against the RFC's wrap of
// forkall_test.go) or RFC 5649 (_PAD and _KWP: Go unwraps the token's blob
// and gives it back to unwrap).
func (r *run) kwCase(m uint64) wrapCase {
	b, _ := aes.NewCipher(rtAES32)
	c := wrapCase{key: "aes32", unkey: "aes32", param: func() (mech, []byte) { return plain(m), nil }}
	if m == ck.CKM_AES_KEY_WRAP {
		c.want = func(v []byte) []byte { return aesKeyWrap(b, v) }
		return c
	}
	c.goUnwrap = func(blob []byte) ([]byte, error) { return kwpUnwrap(b, blob) }
	return c
}

// kwpUnwrap is RFC 5649's unwrap (§4.2), written here from the RFC.
func kwpUnwrap(b cipher.Block, c []byte) ([]byte, error) {
	if len(c)%8 != 0 || len(c) < 16 {
		return nil, fmt.Errorf("a blob of %d bytes", len(c))
	}
	n := len(c)/8 - 1
	a := bytes.Clone(c[:8])
	p := bytes.Clone(c[8:])
	var blk [16]byte
	if n == 1 {
		b.Decrypt(blk[:], c)
		a, p = blk[:8], blk[8:]
	} else {
		for j := 5; j >= 0; j-- {
			for i := n - 1; i >= 0; i-- {
				t := binary.BigEndian.Uint64(a) ^ uint64(n*j+i+1)
				binary.BigEndian.PutUint64(blk[:8], t)
				copy(blk[8:], p[8*i:])
				b.Decrypt(blk[:], blk[:])
				copy(a, blk[:8])
				copy(p[8*i:], blk[8:])
			}
		}
	}
	if !bytes.Equal(a[:4], []byte{0xa6, 0x59, 0x59, 0xa6}) {
		return nil, fmt.Errorf("integrity check value %x", a)
	}
	mli := int(binary.BigEndian.Uint32(a[4:]))
	if mli > len(p) || mli <= len(p)-8 {
		return nil, fmt.Errorf("message length %d of %d", mli, len(p))
	}
	return p[:mli], nil
}

// ---- key encapsulation ----

// kem: the token encapsulates to its ML-KEM key key and Go decapsulates
// (decap); Go encapsulates (encap) and the token decapsulates; the secrets
// must agree.
func (r *run) kem(m uint64, key string, decap func(ct []byte) ([]byte, error), encap func() ([]byte, []byte)) {
	t := tmpl{{ck.CKA_CLASS, ulv(ck.CKO_SECRET_KEY)}, {ck.CKA_KEY_TYPE, ulv(ck.CKK_GENERIC_SECRET)},
		{ck.CKA_TOKEN, boolv(false)}, {ck.CKA_SENSITIVE, boolv(false)}, {ck.CKA_EXTRACTABLE, boolv(true)}}
	rv, out := r.c.call(opEncap, r.s, plain(m), r.h[key+".pub"], t, 0)
	if r.want(m, "encapsulate", rv, "random") && len(out) == 2 {
		got := r.value(u64of(out[1]))
		want, err := decap(out[0])
		if err != nil || !bytes.Equal(got, want) {
			r.errorf(m, "encapsulate", "secret %x, Go decapsulates %x (%v)", got, want, err)
		}
	}
	want, ct := encap()
	rv, out = r.c.call(opDecap, r.s, plain(m), r.h[key], t, ct)
	if r.want(m, "decapsulate", rv, "") {
		if got := r.value(u64of(out[0])); !bytes.Equal(got, want) {
			r.errorf(m, "decapsulate", "secret %x, Go encapsulated %x", got, want)
		}
	}
}

// ---- derivation ----

// genericOut is the template of a derived generic secret of n bytes that
// Go may read.
func genericOut(n int) tmpl {
	return tmpl{{ck.CKA_CLASS, ulv(ck.CKO_SECRET_KEY)}, {ck.CKA_KEY_TYPE, ulv(ck.CKK_GENERIC_SECRET)},
		{ck.CKA_TOKEN, boolv(false)}, {ck.CKA_SENSITIVE, boolv(false)}, {ck.CKA_EXTRACTABLE, boolv(true)},
		{ck.CKA_VALUE_LEN, ulv(uint64(n))}}
}

// derive is C_DeriveKey and the new key's value, compared with Go's.
func (r *run) derive(m uint64, op string, mm mech, base uint64, t tmpl, want []byte) {
	detail := short(want)
	if strings.HasPrefix(op, "generate") {
		detail = "random" // the new key's
	}
	rv, out := r.c.call(opDerive, r.s, mm, base, t)
	if !r.want(m, op, rv, detail) {
		return
	}
	h := u64of(out[0])
	if got := r.value(h); !bytes.Equal(got, want) {
		r.errorf(m, op, "value %x, Go says %x", got, want)
	}
	r.c.call(opDestroy, r.s, h)
}

// ecdh derives with a token key (CKD_NULL) and a fixed Go peer: the shared
// secret is Go's.
func (r *run) ecdh(m uint64, key string) {
	mine := r.g.x.PublicKey()
	if key == "rt-ec" {
		k, _ := r.g.ec.ECDH()
		mine = k.PublicKey()
	}
	r.ecdhWith(m, "derive-"+key, m, r.h[key], mine)
}

// ecdhWith derives with dm from the private key base, whose public key Go
// has as mine, and a fixed peer of Go's on its curve.
func (r *run) ecdhWith(m uint64, op string, dm, base uint64, mine *ecdh.PublicKey) {
	n := 32 // X25519's scalar
	if mine.Curve() != ecdh.X25519() {
		n = (len(mine.Bytes()) - 1) / 2 // a NIST curve's: the size of a coordinate
	}
	peer, err := mine.Curve().NewPrivateKey(seq(n, 0x01))
	if err != nil {
		r.t.Fatalf("%s: Go's ECDH peer: %v", r.name, err)
	}
	z, err := peer.ECDH(mine)
	if err != nil {
		r.t.Fatalf("%s: Go's ECDH: %v", r.name, err)
	}
	pd := peer.PublicKey().Bytes()
	p := new(pb).ul(ck.CKD_NULL).ul(0).ptr(nil).ul(uint64(len(pd))).ptr(pd)
	r.derive(m, op, p.mech(dm), base, genericOut(len(z)), z)
}

// ecdhKDF derives with rt-ec, a Go peer and CKD_SHA256_KDF over shared
// data: ANSI X9.63's KDF, SHA-256(Z ‖ 00000001 ‖ shared data), computed in Go.
func (r *run) ecdhKDF(m uint64) {
	mine, _ := r.g.ec.ECDH()
	peer, _ := ecdh.P256().NewPrivateKey(seq(32, 0x03))
	z, _ := peer.ECDH(mine.PublicKey())
	shared := []byte("fork shared info")
	want := digestOf(crypto.SHA256, append(append(z, 0, 0, 0, 1), shared...))
	pd := peer.PublicKey().Bytes()
	p := new(pb).ul(ck.CKD_SHA256_KDF).ul(uint64(len(shared))).ptr(shared).ul(uint64(len(pd))).ptr(pd)
	r.derive(m, "derive", p.mech(m), r.h["rt-ec"], genericOut(len(want)), want)
}

// ecdhCurve derives with the token key key on a NIST curve, whose public
// key is pub, and a fixed Go peer: crypto/ecdh's answer, or for P-224
// (which crypto/ecdh lacks) crypto/elliptic's scalar multiplication.
func (r *run) ecdhCurve(m uint64, key string, pub *ecdsa.PublicKey) {
	if k, err := pub.ECDH(); err == nil {
		r.ecdhWith(m, "derive", m, r.h[key], k)
		return
	}
	c := pub.Curve
	size := (c.Params().BitSize + 7) / 8
	d := seq(size, 0x01)
	px, py := c.ScalarBaseMult(d)
	zx, _ := c.ScalarMult(pub.X, pub.Y, d)
	pd := elliptic.Marshal(c, px, py) //nolint:staticcheck // P-224 has no crypto/ecdh
	p := new(pb).ul(ck.CKD_NULL).ul(0).ptr(nil).ul(uint64(len(pd))).ptr(pd)
	z := zx.FillBytes(make([]byte, size))
	r.derive(m, "derive", p.mech(m), r.h[key], genericOut(len(z)), z)
}

// dhDerive derives from the private key base, whose public value is y,
// with a Go peer on the token key's group.
func (r *run) dhDerive(m uint64, op string, base uint64, y *big.Int) {
	g := r.g.dh
	x := new(big.Int).SetBytes(seq(32, 0x05))
	z := new(big.Int).Exp(y, x, g.P).FillBytes(make([]byte, (g.P.BitLen()+7)/8))
	peer := new(big.Int).Exp(g.G, x, g.P).Bytes()
	r.derive(m, op, mech{typ: ck.CKM_DH_PKCS_DERIVE, param: peer}, base, genericOut(len(z)), z)
}

// hkdf: Extract and Expand with SHA-256, a salt and an info, into a key
// (CKM_HKDF_DERIVE) or a data object (CKM_HKDF_DATA).
func (r *run) hkdf(m uint64, op string, base uint64, ikm []byte) {
	salt, info := []byte("fork salt"), []byte("fork info")
	want, _ := hkdf.Key(sha256.New, ikm, salt, string(info), 42)
	p := new(pb).bbool(true, false).bbool(true, true).ul(ck.CKM_SHA256).ul(ck.CKF_HKDF_SALT_DATA).
		ptr(salt).ul(uint64(len(salt))).ul(0).ptr(info).ul(uint64(len(info)))
	t := genericOut(42)
	if m == ck.CKM_HKDF_DATA {
		t = tmpl{{ck.CKA_CLASS, ulv(ck.CKO_DATA)}, {ck.CKA_TOKEN, boolv(false)}, {ck.CKA_VALUE_LEN, ulv(42)}}
	}
	mt := m
	if m == ck.CKM_HKDF_KEY_GEN { // the generated key's proof
		mt = ck.CKM_HKDF_DERIVE
	}
	r.derive(m, op, p.mech(mt), base, t, want)
}

// hkdfVariant is HKDF's Extract alone with CKF_HKDF_SALT_NULL (the PRK),
// or Expand alone (the base key is the PRK).
func (r *run) hkdfVariant(m uint64, extract, expand bool) {
	info := []byte("fork info")
	n := 32
	var want []byte
	var p *pb
	if extract {
		want, _ = hkdf.Extract(sha256.New, rtGen32, nil)
		p = new(pb).bbool(true, false).bbool(false, true).ul(ck.CKM_SHA256).ul(ck.CKF_HKDF_SALT_NULL).
			ptr(nil).ul(0).ul(0).ptr(nil).ul(0)
	} else {
		n = 50
		want, _ = hkdf.Expand(sha256.New, rtGen32, string(info), n)
		p = new(pb).bbool(false, false).bbool(true, true).ul(ck.CKM_SHA256).ul(0).
			ptr(nil).ul(0).ul(0).ptr(info).ul(uint64(len(info)))
	}
	t := genericOut(n)
	if m == ck.CKM_HKDF_DATA {
		t = tmpl{{ck.CKA_CLASS, ulv(ck.CKO_DATA)}, {ck.CKA_TOKEN, boolv(false)}, {ck.CKA_VALUE_LEN, ulv(uint64(n))}}
	}
	r.derive(m, "derive", p.mech(m), r.h["gen"], t, want)
}

// encryptData: CKM_{AES,DES,DES3}_{ECB,CBC}_ENCRYPT_DATA, the data
// encrypted under the base key.
func (r *run) encryptData(m uint64) {
	data := seq(32, 0x90)
	var key string
	var b cipher.Block
	var ivs []byte
	switch m {
	case ck.CKM_AES_ECB_ENCRYPT_DATA, ck.CKM_AES_CBC_ENCRYPT_DATA:
		key, ivs = "aes32", rtIV16
		b, _ = aes.NewCipher(rtAES32)
	case ck.CKM_DES_ECB_ENCRYPT_DATA, ck.CKM_DES_CBC_ENCRYPT_DATA:
		key, ivs = "des", rtIV8
		b, _ = des.NewCipher(rtDES8)
		data = data[:24]
	default:
		key, ivs = "des3", rtIV8
		b, _ = des.NewTripleDESCipher(rtDES24)
		data = data[:24]
	}
	want := make([]byte, len(data))
	var p *pb
	switch m {
	case ck.CKM_AES_CBC_ENCRYPT_DATA, ck.CKM_DES_CBC_ENCRYPT_DATA, ck.CKM_DES3_CBC_ENCRYPT_DATA:
		cipher.NewCBCEncrypter(b, ivs).CryptBlocks(want, data)
		p = new(pb).raw(ivs).ptr(data).ul(uint64(len(data)))
	default:
		for i := 0; i < len(data); i += b.BlockSize() {
			b.Encrypt(want[i:], data[i:])
		}
		p = new(pb).ptr(data).ul(uint64(len(data)))
	}
	r.derive(m, "derive", p.mech(m), r.h[key], genericOut(len(want)), want)
}

// ---- generation ----

// keyGen generates a secret key Go may read, then proves its value: the
// token's encryption (AES, DES), MAC (generic) or HKDF (CKK_HKDF) with it
// against Go's with the value read.
func (r *run) keyGen(m uint64) {
	kt := map[uint64]uint64{ck.CKM_AES_KEY_GEN: ck.CKK_AES, ck.CKM_DES_KEY_GEN: ck.CKK_DES, ck.CKM_DES2_KEY_GEN: ck.CKK_DES2,
		ck.CKM_DES3_KEY_GEN: ck.CKK_DES3, ck.CKM_GENERIC_SECRET_KEY_GEN: ck.CKK_GENERIC_SECRET, ck.CKM_HKDF_KEY_GEN: ck.CKK_HKDF}[m]
	yes := boolv(true)
	t := tmpl{{ck.CKA_CLASS, ulv(ck.CKO_SECRET_KEY)}, {ck.CKA_TOKEN, boolv(false)}, {ck.CKA_SENSITIVE, boolv(false)},
		{ck.CKA_EXTRACTABLE, yes}}
	switch kt {
	case ck.CKK_AES:
		t = append(t, attr{ck.CKA_VALUE_LEN, ulv(16)}, attr{ck.CKA_ENCRYPT, yes})
	case ck.CKK_GENERIC_SECRET, ck.CKK_HKDF:
		t = append(t, attr{ck.CKA_VALUE_LEN, ulv(32)}, attr{ck.CKA_SIGN, yes}, attr{ck.CKA_DERIVE, yes})
	default:
		t = append(t, attr{ck.CKA_ENCRYPT, yes})
	}
	rv, out := r.c.call(opGenKey, r.s, plain(m), t)
	if !r.want(m, "generate", rv, "random") {
		return
	}
	h := u64of(out[0])
	defer r.c.call(opDestroy, r.s, h)
	v := r.value(h)
	switch kt {
	case ck.CKK_AES:
		r.aesProbe(m, "generate", h, v)
	case ck.CKK_DES, ck.CKK_DES2, ck.CKK_DES3:
		if !bytes.Equal(oddParity(bytes.Clone(v)), v) {
			r.errorf(m, "generate", "a DES key without odd parity: %x", v)
		}
		full := v
		if kt == ck.CKK_DES2 {
			full = append(bytes.Clone(v), v[:8]...)
		}
		mech := uint64(ck.CKM_DES3_ECB)
		b, err := des.NewTripleDESCipher(full)
		if kt == ck.CKK_DES {
			mech = ck.CKM_DES_ECB
			b, err = des.NewCipher(v)
		}
		if err != nil {
			r.errorf(m, "generate", "Go takes no DES key %x: %v", v, err)
			return
		}
		want := make([]byte, 8)
		b.Encrypt(want, want)
		rv, ct := r.crypt(kEncrypt, plain(mech), h, make([]byte, 8))
		if r.want(m, "generate-probe", rv, "") && !bytes.Equal(ct, want) {
			r.errorf(m, "generate", "the key encrypts to %x, its value to %x", ct, want)
		}
	case ck.CKK_GENERIC_SECRET:
		mac := hmac.New(sha256.New, v)
		mac.Write(rtMsg)
		rv, s := r.sign(plain(ck.CKM_SHA256_HMAC), h, rtMsg)
		if r.want(m, "generate-probe", rv, "") && !bytes.Equal(s, mac.Sum(nil)) {
			r.errorf(m, "generate", "the key's HMAC %x, its value's %x", s, mac.Sum(nil))
		}
	case ck.CKK_HKDF:
		r.hkdf(m, "generate-hkdf", h, v)
	}
}

// paramGen makes DSA (L = 1024) or DH (1024-bit) domain parameters and
// checks them in Go: p and q prime, q divides p-1, g of order q (DSA); p a
// safe prime and g of order q = (p-1)/2 or p-1 (DH).
func (r *run) paramGen(m uint64) {
	t := tmpl{{ck.CKA_TOKEN, boolv(false)}, {ck.CKA_PRIME_BITS, ulv(1024)}}
	rv, out := r.c.call(opGenKey, r.s, plain(m), t)
	if !r.want(m, "generate", rv, "random") {
		return
	}
	h := u64of(out[0])
	defer r.c.call(opDestroy, r.s, h)
	one := big.NewInt(1)
	bi := func(b []byte) *big.Int { return new(big.Int).SetBytes(b) }
	if m == ck.CKM_DSA_PARAMETER_GEN {
		v := r.attrs(h, ck.CKA_PRIME, ck.CKA_SUBPRIME, ck.CKA_BASE)
		p, q, g := bi(v[0]), bi(v[1]), bi(v[2])
		pm1 := new(big.Int).Sub(p, one)
		if p.BitLen() != 1024 || q.BitLen() != 160 || !p.ProbablyPrime(20) || !q.ProbablyPrime(20) ||
			new(big.Int).Mod(pm1, q).Sign() != 0 || g.Cmp(one) <= 0 || new(big.Int).Exp(g, q, p).Cmp(one) != 0 {
			r.errorf(m, "generate", "not DSA parameters: p %d bits, q %d bits", p.BitLen(), q.BitLen())
		}
		return
	}
	v := r.attrs(h, ck.CKA_PRIME, ck.CKA_BASE)
	p, g := bi(v[0]), bi(v[1])
	q := new(big.Int).Rsh(p, 1)
	if p.BitLen() != 1024 || !p.ProbablyPrime(20) || !q.ProbablyPrime(20) || g.Cmp(one) <= 0 ||
		g.Cmp(new(big.Int).Sub(p, one)) >= 0 {
		r.errorf(m, "generate", "not a safe-prime DH group: p %d bits", p.BitLen())
	}
}

// pairGen generates a session key pair and proves it in Go: a signature
// the public key verifies, an agreement that gives Go's secret, or an
// encapsulation Go's would match.
func (r *run) pairGen(m uint64) {
	yes := boolv(true)
	var pub, priv tmpl
	for _, k := range rtKeys(r.g.dsa.P, r.g.dsa.Q, r.g.dsa.G, r.g.dh) {
		if k.gen == m && pub == nil { // the first key of the mechanism's
			pub, priv = append(tmpl{}, k.pub...), append(tmpl{}, k.priv...)
		}
	}
	for _, t := range []*tmpl{&pub, &priv} {
		for i := range *t {
			if (*t)[i].typ == ck.CKA_TOKEN {
				(*t)[i].val = boolv(false)
			}
		}
	}
	if m == ck.CKM_RSA_PKCS_KEY_PAIR_GEN {
		pub = append(pub, attr{ck.CKA_VERIFY, yes})
	}
	rv, out := r.c.call(opGenPair, r.s, plain(m), pub, priv)
	if !r.want(m, "generate", rv, "random") {
		return
	}
	hpub, hpriv := u64of(out[0]), u64of(out[1])
	defer r.c.call(opDestroy, r.s, hpub)
	defer r.c.call(opDestroy, r.s, hpriv)
	// proves has the new key sign with sm and checks the signature as the
	// table checks the token key's, with the new public key in its place.
	proves := func(sm uint64, set func(g *goKeys), mk func(r *run) sigCase) {
		g := *r.g
		set(&g)
		r2 := *r
		r2.g = &g
		c := mk(&r2)
		rv, s := r.sign(c.mech(sm), hpriv, c.data)
		if r.want(m, "generate-sign", rv, "") {
			if err := c.verify(c.data, s); err != nil {
				r.errorf(m, "generate", "the new key's signature: %v", err)
			}
		}
	}
	failed := func(err error) bool {
		if err != nil {
			r.errorf(m, "generate", "the new public key: %v", err)
		}
		return err != nil
	}
	bi := func(b []byte) *big.Int { return new(big.Int).SetBytes(b) }
	switch m {
	case ck.CKM_RSA_PKCS_KEY_PAIR_GEN:
		v := r.attrs(hpub, ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT)
		k := rsa.PublicKey{N: bi(v[0]), E: int(bi(v[1]).Int64())}
		if k.N.BitLen() != 2048 {
			r.errorf(m, "generate", "a modulus of %d bits", k.N.BitLen())
		}
		proves(ck.CKM_SHA256_RSA_PKCS, func(g *goKeys) { g.rsa = &rsa.PrivateKey{PublicKey: k} },
			func(r *run) sigCase { return r.rsaPKCSCase(crypto.SHA256, true) })
	case ck.CKM_EC_KEY_PAIR_GEN:
		pt, err := octets(r.attrs(hpub, ck.CKA_EC_POINT)[0])
		if failed(err) {
			return
		}
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pt)
		if failed(err) {
			return
		}
		proves(ck.CKM_ECDSA_SHA256, func(g *goKeys) { g.ec = &ecdsa.PrivateKey{PublicKey: *k} },
			func(r *run) sigCase { return r.ecdsaCase(crypto.SHA256, true) })
	case ck.CKM_EC_EDWARDS_KEY_PAIR_GEN:
		k, err := octets(r.attrs(hpub, ck.CKA_EC_POINT)[0])
		if failed(err) {
			return
		}
		proves(ck.CKM_EDDSA, func(g *goKeys) { g.ed = k }, (*run).eddsaCase)
	case ck.CKM_DSA_KEY_PAIR_GEN:
		k := dsa.PublicKey{Parameters: r.g.dsa.Parameters, Y: bi(r.attrs(hpub, ck.CKA_VALUE)[0])}
		proves(ck.CKM_DSA_SHA256, func(g *goKeys) { g.dsa = &dsa.PrivateKey{PublicKey: k} },
			func(r *run) sigCase { return r.dsaCase(crypto.SHA256, true) })
	case ck.CKM_ML_DSA_KEY_PAIR_GEN:
		var k mldsa44.PublicKey
		if failed(k.UnmarshalBinary(r.attrs(hpub, ck.CKA_VALUE)[0])) {
			return
		}
		proves(ck.CKM_ML_DSA, func(g *goKeys) { g.mldsa = &k }, func(r *run) sigCase { return r.mldsaCase(nil, nil) })
	case ck.CKM_SLH_DSA_KEY_PAIR_GEN:
		k := slhdsa.PublicKey{ID: slhdsa.SHA2_128f}
		if failed(k.UnmarshalBinary(r.attrs(hpub, ck.CKA_VALUE)[0])) {
			return
		}
		proves(ck.CKM_SLH_DSA, func(g *goKeys) { g.slh = &k }, func(r *run) sigCase { return r.slhCase(nil) })
	case ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN:
		raw := r.attrs(hpub, ck.CKA_EC_POINT)[0]
		if o, err := octets(raw); err == nil {
			raw = o
		}
		k, err := ecdh.X25519().NewPublicKey(raw)
		if failed(err) {
			return
		}
		r.ecdhWith(m, "generate-derive", ck.CKM_ECDH1_DERIVE, hpriv, k)
	case ck.CKM_DH_PKCS_KEY_PAIR_GEN:
		r.dhDerive(m, "generate-derive", hpriv, bi(r.attrs(hpub, ck.CKA_VALUE)[0]))
	case ck.CKM_ML_KEM_KEY_PAIR_GEN:
		ek, err := mlkem.NewEncapsulationKey768(r.attrs(hpub, ck.CKA_VALUE)[0])
		if failed(err) {
			return
		}
		want, ct := ek.Encapsulate()
		t := genericOut(32)[:5]
		rv, out := r.c.call(opDecap, r.s, plain(ck.CKM_ML_KEM), hpriv, t, ct)
		if r.want(m, "generate-decapsulate", rv, "") {
			if got := r.value(u64of(out[0])); !bytes.Equal(got, want) {
				r.errorf(m, "generate", "the new key decapsulates %x, Go encapsulated %x", got, want)
			}
		}
	}
}
