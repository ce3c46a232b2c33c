package main

// The kinds of key the CLI generates and imports, one table (keyKinds).
//
// To add a kind (a post-quantum type, say): add a keyKind with its names,
// its --type argument, the mechanism and templates generate asks for, and
// how 'keys list' describes it; if its private keys come in PKCS#8, add
// its algorithm OID to pkcs8Parsers (keyimport.go), and its
// SubjectPublicKeyInfo to publicKeyInfo (the default key ID). The tests
// (keykinds_test.go) run every entry of the table.

import (
	"crypto/rand"
	"encoding/asn1"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// keyKind is one kind of key --type names.
type keyKind struct {
	name    string   // canonical, lower case: "rsa", "ec", "ed25519", "aes", ...
	aliases []string // other spellings (pkcs11-tool's), matched case-insensitively
	sets    []string // for a kind named by its parameter sets (ml-dsa-65): the --type names; the set is the argument
	arg     string   // what follows "name:" ("BITS", "CURVE", ...; "" = nothing)
	def     string   // the argument when none is given ("" = required, unless arg is "")
	help    string   // one line for --help
	keyType uint64   // CKK_
	secret  bool     // a secret key (C_GenerateKey), else a key pair
	// parse checks the argument and returns its canonical form. nil: no
	// argument is taken.
	parse func(arg string) (string, error)
	// plan returns the mechanism and the kind's own attributes (key
	// type, sizes, usage) for the given canonical argument. For a pair
	// pub and priv; for a secret key priv only. It may use the session
	// (DSA and DH domain parameters are generated on the token).
	plan func(s *session, arg string) (mech token.Mechanism, pub, priv []token.Attribute, err error)
	// describe names a stored key of this kind as --type spells it
	// ("rsa:2048", "ec:P-256"), from the attributes in listAttrs.
	describe func(a map[uint64][]byte) string
}

// listAttrs are the attributes 'keys list' reads to describe a key.
var listAttrs = []uint64{ck.CKA_MODULUS, ck.CKA_EC_PARAMS, ck.CKA_PRIME, ck.CKA_VALUE_LEN}

// keyKinds is every kind of key the CLI knows, in the order --help lists
// them.
var keyKinds = []*keyKind{
	{
		name: "rsa", arg: "BITS", def: "2048", help: "RSA key pair of BITS bits (rsa:2048)",
		keyType: ck.CKK_RSA,
		parse:   bitsArg(1024, 16384, nil),
		plan: func(_ *session, arg string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
			bits, _ := strconv.Atoi(arg)
			return token.Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN},
				[]token.Attribute{ulong(ck.CKA_MODULUS_BITS, uint64(bits)), attr(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}),
					boolAttr(ck.CKA_VERIFY, true), boolAttr(ck.CKA_ENCRYPT, true)},
				[]token.Attribute{boolAttr(ck.CKA_SIGN, true), boolAttr(ck.CKA_DECRYPT, true)}, nil
		},
		describe: func(a map[uint64][]byte) string {
			return "rsa:" + strconv.Itoa(new(big.Int).SetBytes(a[ck.CKA_MODULUS]).BitLen())
		},
	},
	{
		name: "ec", aliases: []string{"ecdsa"}, arg: "CURVE", def: "P-256",
		help:    "ECDSA key pair on CURVE: " + strings.Join(ec.Names(), ", ") + " (or an alias: prime256v1, secp384r1, ...)",
		keyType: ck.CKK_EC,
		parse: func(arg string) (string, error) {
			c, err := ec.CurveByName(arg)
			if err != nil {
				return "", fmt.Errorf("unknown curve %q (want one of %s, or edwards25519 for Ed25519)", arg, strings.Join(ec.Names(), ", "))
			}
			return c.Name(), nil
		},
		plan: func(_ *session, arg string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
			c, err := ec.CurveByName(arg)
			if err != nil {
				return token.Mechanism{}, nil, nil, err
			}
			return token.Mechanism{Type: ck.CKM_EC_KEY_PAIR_GEN},
				[]token.Attribute{attr(ck.CKA_EC_PARAMS, c.OID()), boolAttr(ck.CKA_VERIFY, true)},
				[]token.Attribute{boolAttr(ck.CKA_SIGN, true)}, nil
		},
		describe: func(a map[uint64][]byte) string { return "ec:" + curveName(a[ck.CKA_EC_PARAMS]) },
	},
	{
		name: "ed25519", aliases: []string{"eddsa", "ec:edwards25519", "ec:ed25519"},
		help: "Ed25519 key pair (pkcs11-tool: EC:edwards25519)", keyType: ck.CKK_EC_EDWARDS,
		plan: func(_ *session, _ string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
			return token.Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
				[]token.Attribute{attr(ck.CKA_EC_PARAMS, ed25519Params), boolAttr(ck.CKA_VERIFY, true)},
				[]token.Attribute{boolAttr(ck.CKA_SIGN, true)}, nil
		},
		describe: func(a map[uint64][]byte) string { return pqDescribe(ck.CKK_EC_EDWARDS, a) }, // Ed25519 or Ed448
	},
	{
		name: "dsa", arg: "BITS", def: "2048", help: "DSA key pair with a BITS-bit prime (1024, 2048, 3072), its domain parameters made on the token",
		keyType: ck.CKK_DSA,
		parse:   bitsArg(1024, 3072, []int{1024, 2048, 3072}),
		plan: func(s *session, arg string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
			bits, _ := strconv.Atoi(arg)
			p, err := s.domainParams(ck.CKM_DSA_PARAMETER_GEN, ck.CKK_DSA, bits, ck.CKA_PRIME, ck.CKA_SUBPRIME, ck.CKA_BASE)
			if err != nil {
				return token.Mechanism{}, nil, nil, err
			}
			return token.Mechanism{Type: ck.CKM_DSA_KEY_PAIR_GEN},
				append(p, boolAttr(ck.CKA_VERIFY, true)), []token.Attribute{boolAttr(ck.CKA_SIGN, true)}, nil
		},
		describe: primeBits("dsa"),
	},
	{
		name: "dh", arg: "GROUP", def: "ffdhe2048",
		help:    "Diffie-Hellman key pair (derive) in an RFC 7919 group (" + strings.Join(dh.GroupNames(), ", ") + "), or with a BITS-bit safe prime made on the token (slow)",
		keyType: ck.CKK_DH,
		parse: func(arg string) (string, error) {
			if g, err := dh.GroupByName(arg); err == nil {
				return g.Name, nil
			}
			if bits, err := strconv.Atoi(arg); err == nil && bits >= dh.MinBits && bits <= dh.MaxBits {
				return arg, nil
			}
			return "", fmt.Errorf("want a group (%s) or a prime size in bits (%d to %d)", strings.Join(dh.GroupNames(), ", "), dh.MinBits, dh.MaxBits)
		},
		plan: func(s *session, arg string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
			var p []token.Attribute
			if g, err := dh.GroupByName(arg); err == nil {
				p = []token.Attribute{attr(ck.CKA_PRIME, g.P.Bytes()), attr(ck.CKA_BASE, g.G.Bytes())}
			} else {
				bits, _ := strconv.Atoi(arg)
				if p, err = s.domainParams(ck.CKM_DH_PKCS_PARAMETER_GEN, ck.CKK_DH, bits, ck.CKA_PRIME, ck.CKA_BASE); err != nil {
					return token.Mechanism{}, nil, nil, err
				}
			}
			return token.Mechanism{Type: ck.CKM_DH_PKCS_KEY_PAIR_GEN}, p, []token.Attribute{boolAttr(ck.CKA_DERIVE, true)}, nil
		},
		describe: primeBits("dh"),
	},
	{
		name: "aes", arg: "SIZE", def: "256", help: "AES key of SIZE bits (128, 192, 256) or bytes as pkcs11-tool counts (16, 24, 32)",
		keyType: ck.CKK_AES, secret: true,
		parse: func(arg string) (string, error) {
			n, err := strconv.Atoi(arg)
			switch {
			case err != nil:
			case n == 16 || n == 24 || n == 32:
				return strconv.Itoa(8 * n), nil
			case n == 128 || n == 192 || n == 256:
				return arg, nil
			}
			return "", fmt.Errorf("want 128, 192 or 256 bits (or 16, 24 or 32 bytes)")
		},
		plan: func(_ *session, arg string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
			bits, _ := strconv.Atoi(arg)
			return token.Mechanism{Type: ck.CKM_AES_KEY_GEN}, nil,
				append([]token.Attribute{ulong(ck.CKA_VALUE_LEN, uint64(bits/8))}, cipherUsage...), nil
		},
		describe: func(a map[uint64][]byte) string { return "aes:" + strconv.Itoa(8*int(secretLen(a))) },
	},
	{
		name: "generic", aliases: []string{"hmac", "generic-secret", "generic_secret"}, arg: "BYTES", def: "32",
		help:    "generic secret (HMAC, derivation) of BYTES bytes, as pkcs11-tool's GENERIC:BYTES",
		keyType: ck.CKK_GENERIC_SECRET, secret: true,
		parse: func(arg string) (string, error) {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 || n > 64<<10 {
				return "", fmt.Errorf("want a length in bytes, 1 to %d", 64<<10)
			}
			return arg, nil
		},
		plan: func(_ *session, arg string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
			n, _ := strconv.Atoi(arg)
			return token.Mechanism{Type: ck.CKM_GENERIC_SECRET_KEY_GEN}, nil,
				[]token.Attribute{ulong(ck.CKA_VALUE_LEN, uint64(n)), boolAttr(ck.CKA_SIGN, true), boolAttr(ck.CKA_VERIFY, true),
					boolAttr(ck.CKA_DERIVE, true)}, nil
		},
		describe: func(a map[uint64][]byte) string { return "generic:" + strconv.Itoa(int(secretLen(a))) },
	},
	{
		name: "des3", aliases: []string{"3des", "tdes"}, help: "triple-DES key (three 56-bit keys)",
		keyType: ck.CKK_DES3, secret: true,
		plan: func(_ *session, _ string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
			return token.Mechanism{Type: ck.CKM_DES3_KEY_GEN}, nil, cipherUsage, nil
		},
		describe: func(map[uint64][]byte) string { return "des3" },
	},
}

// cipherUsage is the usage of a generated or imported cipher key.
var cipherUsage = []token.Attribute{boolAttr(ck.CKA_ENCRYPT, true), boolAttr(ck.CKA_DECRYPT, true),
	boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true)}

// ed25519Params is CKA_EC_PARAMS of an Ed25519 key: the OID id-Ed25519
// (RFC 8410), the form PKCS#11 3.1 prefers.
var ed25519Params = []byte{0x06, 0x03, 0x2b, 0x65, 0x70}

// bitsArg checks a key size in bits in [lo, hi], one of only if given.
func bitsArg(lo, hi int, only []int) func(string) (string, error) {
	return func(arg string) (string, error) {
		n, err := strconv.Atoi(arg)
		if err != nil || n < lo || n > hi || (only != nil && !slices.Contains(only, n)) {
			if only != nil {
				return "", fmt.Errorf("want a size in bits: %s", strings.Trim(fmt.Sprint(only), "[]"))
			}
			return "", fmt.Errorf("want a size in bits, %d to %d", lo, hi)
		}
		return strconv.Itoa(n), nil
	}
}

// primeBits describes a DSA or DH key by its prime's size.
func primeBits(name string) func(map[uint64][]byte) string {
	return func(a map[uint64][]byte) string {
		return name + ":" + strconv.Itoa(new(big.Int).SetBytes(a[ck.CKA_PRIME]).BitLen())
	}
}

func secretLen(a map[uint64][]byte) uint64 {
	n, _ := ck.ParseULong(a[ck.CKA_VALUE_LEN])
	return n
}

// kindByType returns the kind of a CKK_ value, nil if the CLI has none.
func kindByType(kt uint64) *keyKind {
	for _, k := range keyKinds {
		if k.keyType == kt {
			return k
		}
	}
	return nil
}

// keySpec is a parsed --type: the kind and its canonical argument.
type keySpec struct {
	kind     *keyKind
	arg      string
	explicit bool // the argument was given, not the default
}

func (s keySpec) String() string {
	if len(s.kind.sets) > 0 {
		return s.arg
	}
	if s.kind.parse == nil {
		return s.kind.name
	}
	return s.kind.name + ":" + s.arg
}

// parseKeyType reads a --type value, in this tool's spelling (rsa:2048,
// ec:P-256, ed25519, aes:256) or pkcs11-tool's (RSA:2048, EC:prime256v1,
// EC:secp384r1, EC:edwards25519, AES:32, GENERIC:64, DES3), case-insensitively.
func parseKeyType(spec string) (keySpec, error) {
	lower := strings.ToLower(spec)
	name, arg, hasArg := strings.Cut(lower, ":")
	for _, k := range keyKinds {
		if slices.Contains(k.sets, lower) {
			return keySpec{kind: k, arg: lower, explicit: true}, nil
		}
		for _, a := range k.aliases {
			if strings.Contains(a, ":") && lower == a { // an alias with its argument ("ec:edwards25519")
				return keySpec{kind: k}, nil
			}
		}
	}
	for _, k := range keyKinds {
		if name != k.name && !slices.Contains(k.aliases, name) {
			continue
		}
		if len(k.sets) > 0 {
			if hasArg {
				return keySpec{}, usageErrorf("--type %s: want one of %s", spec, strings.Join(k.sets, ", "))
			}
			return keySpec{kind: k, arg: k.def}, nil
		}
		if k.parse == nil {
			if hasArg && arg != "" && !(k.keyType == ck.CKK_DES3 && arg == "24") {
				return keySpec{}, usageErrorf("--type %s: %s takes no size", spec, k.name)
			}
			return keySpec{kind: k}, nil
		}
		explicit := hasArg && arg != ""
		if !explicit {
			arg = k.def
		} else {
			_, arg, _ = strings.Cut(spec, ":") // curve names keep their case for the error
		}
		canon, err := k.parse(arg)
		if err != nil {
			return keySpec{}, withCode(exitUsage, fmt.Errorf("--type %s: %w", spec, err))
		}
		return keySpec{kind: k, arg: canon, explicit: explicit}, nil
	}
	return keySpec{}, usageErrorf("--type %q: want one of %s", spec, keyTypeList())
}

// keyTypeList lists the --type forms ("rsa:BITS, ec:CURVE, ed25519, ...").
func keyTypeList() string {
	var out []string
	for _, k := range keyKinds {
		switch {
		case len(k.sets) > 0:
			out = append(out, k.sets...)
		case k.arg != "":
			out = append(out, k.name+":"+k.arg)
		default:
			out = append(out, k.name)
		}
	}
	return strings.Join(out, ", ")
}

// keyTypeHelp is the --type part of 'keys generate --help'.
func keyTypeHelp() string {
	var b strings.Builder
	for _, k := range keyKinds {
		form := k.name
		if k.arg != "" {
			form += ":" + k.arg
		}
		fmt.Fprintf(&b, "  %-16s %s", form, k.help)
		if k.def != "" {
			fmt.Fprintf(&b, " (default %s)", k.def)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// domainParams generates domain parameters of the given prime size on the
// token (a session object, destroyed after) and returns the attributes
// named by want, to put in a key pair template.
func (s *session) domainParams(mech, keyType uint64, bits int, want ...uint64) ([]token.Attribute, error) {
	tmpl := []token.Attribute{ulong(ck.CKA_CLASS, ck.CKO_DOMAIN_PARAMETERS), ulong(ck.CKA_KEY_TYPE, keyType),
		ulong(ck.CKA_PRIME_BITS, uint64(bits)), boolAttr(ck.CKA_TOKEN, false)}
	h, err := s.mod.GenerateKey(s.h, &token.Mechanism{Type: mech}, tmpl)
	if err != nil {
		return nil, fmt.Errorf("generate %d-bit %s domain parameters: %w", bits, ck.Name("CKK_", keyType), err)
	}
	defer func() { _ = s.mod.DestroyObject(s.h, h) }()
	a, err := s.attrs(h, want...)
	if err != nil {
		return nil, err
	}
	out := make([]token.Attribute, 0, len(want))
	for _, t := range want {
		out = append(out, attr(t, a[t]))
	}
	return out, nil
}

// randomID is the ID of a new secret key, which has no public key to
// derive one from: 8 random bytes.
func randomID() ([]byte, error) {
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("random key ID: %w", err)
	}
	return id, nil
}

// curveName names the curve of a CKA_EC_PARAMS value.
func curveName(params []byte) string {
	if c, err := ec.CurveByOID(params); err == nil {
		return c.Name()
	}
	return "unknown"
}

// oidOf decodes a DER OBJECT IDENTIFIER.
func oidOf(der []byte) asn1.ObjectIdentifier {
	var oid asn1.ObjectIdentifier
	if _, err := asn1.Unmarshal(der, &oid); err != nil {
		return nil
	}
	return oid
}
