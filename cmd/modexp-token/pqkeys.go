package main

import (
	"slices"
	"strings"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// pqKeyType is a --type of 'keys generate' beyond rsa: and ec: (the
// post-quantum signatures and Ed448): its generation mechanism and the
// public template's attribute that names the parameter set or curve.
type pqKeyType struct {
	mech uint64
	attr token.Attribute
}

// ed448Params is CKA_EC_PARAMS of Ed448 (the OID id-Ed448).
var ed448Params = []byte{0x06, 0x03, 0x2b, 0x65, 0x71}

// pqKeyTypes are the --type names: ml-dsa-44/65/87, the twelve SLH-DSA
// sets (slh-dsa-sha2-128s ...), ed448.
var pqKeyTypes = func() map[string]pqKeyType {
	m := map[string]pqKeyType{"ed448": {ck.CKM_EC_EDWARDS_KEY_PAIR_GEN, attr(ck.CKA_EC_PARAMS, ed448Params)}}
	for name, set := range mldsaSetNames {
		m[name] = pqKeyType{ck.CKM_ML_DSA_KEY_PAIR_GEN, ulong(ck.CKA_PARAMETER_SET, set)}
	}
	for name, set := range slhdsaSetNames {
		m[name] = pqKeyType{ck.CKM_SLH_DSA_KEY_PAIR_GEN, ulong(ck.CKA_PARAMETER_SET, set)}
	}
	return m
}()

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

// pqTypeNames lists the --type names, sorted, for help and errors.
func pqTypeNames() string {
	var names []string
	for n := range pqKeyTypes {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

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
