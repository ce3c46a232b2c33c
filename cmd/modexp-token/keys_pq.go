package main

// ML-KEM (key encapsulation) and X25519/X448 (key agreement) in the table
// of key kinds (keykinds.go): --type ml-kem-512, ml-kem-768, ml-kem-1024,
// x25519, x448.

import (
	"slices"
	"strings"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

func init() {
	sets := make([]string, 0, len(mlkemSetNames))
	for n := range mlkemSetNames {
		sets = append(sets, n)
	}
	slices.Sort(sets)
	montgomery := func(name string, params []byte, alias string) *keyKind {
		return &keyKind{
			name: name, aliases: []string{alias}, keyType: ck.CKK_EC_MONTGOMERY,
			help: strings.ToUpper(name[:1]) + name[1:] + " key pair (key agreement, CKM_ECDH1_DERIVE)",
			plan: func(_ *session, _ string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
				return token.Mechanism{Type: ck.CKM_EC_MONTGOMERY_KEY_PAIR_GEN},
					[]token.Attribute{attr(ck.CKA_EC_PARAMS, params)},
					[]token.Attribute{boolAttr(ck.CKA_DERIVE, true)}, nil
			},
			describe: func(a map[uint64][]byte) string { return kemDescribe(ck.CKK_EC_MONTGOMERY, a) },
		}
	}
	keyKinds = append(keyKinds,
		&keyKind{
			name: "ml-kem", sets: sets, def: "ml-kem-768", keyType: ck.CKK_ML_KEM,
			help: "ML-KEM (FIPS 203) key pair: " + strings.Join(sets, ", "),
			plan: func(_ *session, arg string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
				return token.Mechanism{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN},
					[]token.Attribute{ulong(ck.CKA_PARAMETER_SET, mlkemSetNames[arg]), boolAttr(ck.CKA_ENCAPSULATE, true)},
					[]token.Attribute{boolAttr(ck.CKA_DECAPSULATE, true)}, nil
			},
			describe: func(a map[uint64][]byte) string { return kemDescribe(ck.CKK_ML_KEM, a) },
		},
		montgomery("x25519", x25519Params, "ec:curve25519"),
		montgomery("x448", x448Params, "ec:curve448"),
	)
}

// CKA_EC_PARAMS of X25519 and X448 (the OIDs id-X25519, id-X448).
var (
	x25519Params = []byte{0x06, 0x03, 0x2b, 0x65, 0x6e}
	x448Params   = []byte{0x06, 0x03, 0x2b, 0x65, 0x6f}
)

// mlkemSetNames are ML-KEM's parameter sets by their --type names.
var mlkemSetNames = map[string]uint64{"ml-kem-512": ck.CKP_ML_KEM_512, "ml-kem-768": ck.CKP_ML_KEM_768, "ml-kem-1024": ck.CKP_ML_KEM_1024}

// kemDescribe is the type column of 'keys list' for ML-KEM and Montgomery
// keys: the parameter set or the curve.
func kemDescribe(kt uint64, a map[uint64][]byte) string {
	if kt == ck.CKK_ML_KEM {
		set, _ := ck.ParseULong(a[ck.CKA_PARAMETER_SET])
		for name, v := range mlkemSetNames {
			if v == set {
				return name
			}
		}
		return "ml-kem:unknown"
	}
	switch string(a[ck.CKA_EC_PARAMS]) {
	case string(x25519Params), "\x13\x0acurve25519":
		return "x25519"
	case string(x448Params), "\x13\x08curve448":
		return "x448"
	}
	return "montgomery:unknown"
}
