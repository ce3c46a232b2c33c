package ck

import "testing"

// TestV32Names checks that the 3.2 values are named and that the older
// names around them (CKM_EDDSA, CKM_TLS10_MAC_CLIENT) survive.
func TestV32Names(t *testing.T) {
	cases := []struct {
		prefix string
		v      uint64
		want   string
	}{
		{"CKK_", CKK_ML_KEM, "CKK_ML_KEM"},
		{"CKK_", CKK_ML_DSA, "CKK_ML_DSA"},
		{"CKK_", CKK_SLH_DSA, "CKK_SLH_DSA"},
		{"CKK_", CKK_EC_MONTGOMERY, "CKK_EC_MONTGOMERY"},
		{"CKK_", CKK_EC_EDWARDS, "CKK_EC_EDWARDS"},
		{"CKM_", CKM_ML_KEM, "CKM_ML_KEM"},
		{"CKM_", CKM_ML_KEM_KEY_PAIR_GEN, "CKM_ML_KEM_KEY_PAIR_GEN"},
		{"CKM_", CKM_ML_DSA, "CKM_ML_DSA"},
		{"CKM_", CKM_HASH_ML_DSA_SHAKE256, "CKM_HASH_ML_DSA_SHAKE256"},
		{"CKM_", CKM_SLH_DSA_KEY_PAIR_GEN, "CKM_SLH_DSA_KEY_PAIR_GEN"},
		{"CKM_", CKM_HASH_SLH_DSA_SHA3_512, "CKM_HASH_SLH_DSA_SHA3_512"},
		{"CKM_", CKM_EC_MONTGOMERY_KEY_PAIR_GEN, "CKM_EC_MONTGOMERY_KEY_PAIR_GEN"},
		{"CKM_", CKM_EDDSA, "CKM_EDDSA"},
		{"CKM_", CKM_TLS10_MAC_CLIENT, "CKM_TLS10_MAC_CLIENT"},
		{"CKA_", CKA_PARAMETER_SET, "CKA_PARAMETER_SET"},
		{"CKA_", CKA_SEED, "CKA_SEED"},
		{"CKA_", CKA_ENCAPSULATE, "CKA_ENCAPSULATE"},
		{"CKA_", CKA_DECAPSULATE, "CKA_DECAPSULATE"},
		{"CKO_", CKO_VALIDATION, "CKO_VALIDATION"},
		{"CKO_", CKO_TRUST, "CKO_TRUST"},
		{"CKR_", uint64(CKR_PARAMETER_SET_NOT_SUPPORTED), "CKR_PARAMETER_SET_NOT_SUPPORTED"},
		{"CKR_", uint64(CKR_TOKEN_NOT_INITIALIZED), "CKR_TOKEN_NOT_INITIALIZED"},
	}
	for _, c := range cases {
		if got := Name(c.prefix, c.v); got != c.want {
			t.Errorf("Name(%q, %#x) = %s, want %s", c.prefix, c.v, got, c.want)
		}
	}
}
