package main

import (
	"slices"
	"strings"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// The post-quantum signatures and Ed448 in the table of key kinds
// (keykinds.go): ML-DSA and SLH-DSA by parameter set (--type ml-dsa-65,
// slh-dsa-sha2-128s, ...), Ed448.
func init() {
	pq := func(name, def string, kt, mech uint64, sets map[string]uint64, help string) *keyKind {
		names := make([]string, 0, len(sets))
		for n := range sets {
			names = append(names, n)
		}
		slices.Sort(names)
		return &keyKind{
			name: name, sets: names, def: def, keyType: kt, help: help + ": " + strings.Join(names, ", "),
			plan: func(_ *session, arg string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
				return token.Mechanism{Type: mech}, []token.Attribute{ulong(ck.CKA_PARAMETER_SET, sets[arg]), boolAttr(ck.CKA_VERIFY, true)},
					[]token.Attribute{boolAttr(ck.CKA_SIGN, true)}, nil
			},
			describe: func(a map[uint64][]byte) string { return pqDescribe(kt, a) },
		}
	}
	listAttrs = append(listAttrs, ck.CKA_PARAMETER_SET)
	keyKinds = append(keyKinds,
		pq("ml-dsa", "ml-dsa-65", ck.CKK_ML_DSA, ck.CKM_ML_DSA_KEY_PAIR_GEN, mldsaSetNames, "ML-DSA (FIPS 204) key pair"),
		pq("slh-dsa", "slh-dsa-sha2-128s", ck.CKK_SLH_DSA, ck.CKM_SLH_DSA_KEY_PAIR_GEN, slhdsaSetNames, "SLH-DSA (FIPS 205) key pair"),
		&keyKind{
			name: "ed448", aliases: []string{"ec:edwards448", "ec:ed448"}, help: "Ed448 key pair (pkcs11-tool: EC:edwards448)",
			keyType: ck.CKK_EC_EDWARDS,
			plan: func(_ *session, _ string) (token.Mechanism, []token.Attribute, []token.Attribute, error) {
				return token.Mechanism{Type: ck.CKM_EC_EDWARDS_KEY_PAIR_GEN},
					[]token.Attribute{attr(ck.CKA_EC_PARAMS, ed448Params), boolAttr(ck.CKA_VERIFY, true)},
					[]token.Attribute{boolAttr(ck.CKA_SIGN, true)}, nil
			},
			describe: func(a map[uint64][]byte) string { return pqDescribe(ck.CKK_EC_EDWARDS, a) },
		})
}

// ed448Params is CKA_EC_PARAMS of Ed448 (the OID id-Ed448).
var ed448Params = []byte{0x06, 0x03, 0x2b, 0x65, 0x71}

// The parameter sets by their --type (and 'keys list') names.
var (
	mldsaSetNames  = map[string]uint64{"ml-dsa-44": ck.CKP_ML_DSA_44, "ml-dsa-65": ck.CKP_ML_DSA_65, "ml-dsa-87": ck.CKP_ML_DSA_87}
	slhdsaSetNames = map[string]uint64{
		"slh-dsa-sha2-128s": ck.CKP_SLH_DSA_SHA2_128S, "slh-dsa-sha2-128f": ck.CKP_SLH_DSA_SHA2_128F,
		"slh-dsa-sha2-192s": ck.CKP_SLH_DSA_SHA2_192S, "slh-dsa-sha2-192f": ck.CKP_SLH_DSA_SHA2_192F,
		"slh-dsa-sha2-256s": ck.CKP_SLH_DSA_SHA2_256S, "slh-dsa-sha2-256f": ck.CKP_SLH_DSA_SHA2_256F,
		"slh-dsa-shake-128s": ck.CKP_SLH_DSA_SHAKE_128S, "slh-dsa-shake-128f": ck.CKP_SLH_DSA_SHAKE_128F,
		"slh-dsa-shake-192s": ck.CKP_SLH_DSA_SHAKE_192S, "slh-dsa-shake-192f": ck.CKP_SLH_DSA_SHAKE_192F,
		"slh-dsa-shake-256s": ck.CKP_SLH_DSA_SHAKE_256S, "slh-dsa-shake-256f": ck.CKP_SLH_DSA_SHAKE_256F,
	}
)

// pqDescribe names a key of a post-quantum type or an Edwards key as
// 'keys list' shows it ("" if kt is none of them).
func pqDescribe(kt uint64, a map[uint64][]byte) string {
	set, _ := ck.ParseULong(a[ck.CKA_PARAMETER_SET])
	names := map[uint64]map[string]uint64{ck.CKK_ML_DSA: mldsaSetNames, ck.CKK_SLH_DSA: slhdsaSetNames}[kt]
	for name, v := range names {
		if v == set {
			return name
		}
	}
	if kt == ck.CKK_EC_EDWARDS {
		if string(a[ck.CKA_EC_PARAMS]) == string(ed448Params) || string(a[ck.CKA_EC_PARAMS]) == "\x13\x0aedwards448" {
			return "ed448"
		}
		return "ed25519"
	}
	return ""
}
