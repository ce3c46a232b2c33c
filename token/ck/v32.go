package ck

// PKCS#11 3.2 values, from the OASIS PKCS #11 Specification Version 3.2
// (base specification and its pkcs11t.h), with the two 3.0 values of the
// Montgomery curves (X25519, X448) that p11-kit's 2.40 header lacks. The
// C layer declares the same values in cgo/pkcs11_3.h.
//
// The post-quantum families: CKK_ML_KEM (FIPS 203), CKK_ML_DSA (FIPS 204),
// CKK_SLH_DSA (FIPS 205), their parameter sets in CKA_PARAMETER_SET (the
// CKP_ values, numbered within each family), CKA_SEED, and the hedge
// variants of CK_SIGN_ADDITIONAL_CONTEXT (the CKH_ values below, distinct
// from the hardware-feature types of the same prefix).

// PKCS#11 3.0 values of the Montgomery curves.
const (
	CKK_EC_MONTGOMERY              = 0x41
	CKM_EC_MONTGOMERY_KEY_PAIR_GEN = 0x1056
)

// PKCS#11 3.2 values.
const (
	CK_SP800_108_KEY_HANDLE = 0x5

	CKA_HSS_LEVELS                        = 0x617
	CKA_HSS_LMS_TYPE                      = 0x618
	CKA_HSS_LMOTS_TYPE                    = 0x619
	CKA_HSS_LMS_TYPES                     = 0x61a
	CKA_HSS_LMOTS_TYPES                   = 0x61b
	CKA_HSS_KEYS_REMAINING                = 0x61c
	CKA_PARAMETER_SET                     = 0x61d
	CKA_OBJECT_VALIDATION_FLAGS           = 0x61e
	CKA_VALIDATION_TYPE                   = 0x61f
	CKA_VALIDATION_VERSION                = 0x620
	CKA_VALIDATION_LEVEL                  = 0x621
	CKA_VALIDATION_MODULE_ID              = 0x622
	CKA_VALIDATION_FLAG                   = 0x623
	CKA_VALIDATION_AUTHORITY_TYPE         = 0x624
	CKA_VALIDATION_COUNTRY                = 0x625
	CKA_VALIDATION_CERTIFICATE_IDENTIFIER = 0x626
	CKA_VALIDATION_CERTIFICATE_URI        = 0x627
	CKA_VALIDATION_VENDOR_URI             = 0x628
	CKA_VALIDATION_PROFILE                = 0x629
	CKA_ENCAPSULATE_TEMPLATE              = 0x62a
	CKA_DECAPSULATE_TEMPLATE              = 0x62b
	CKA_TRUST_SERVER_AUTH                 = 0x62c
	CKA_TRUST_CLIENT_AUTH                 = 0x62d
	CKA_TRUST_CODE_SIGNING                = 0x62e
	CKA_TRUST_EMAIL_PROTECTION            = 0x62f
	CKA_TRUST_IPSEC_IKE                   = 0x630
	CKA_TRUST_TIME_STAMPING               = 0x631
	CKA_TRUST_OCSP_SIGNING                = 0x632
	CKA_ENCAPSULATE                       = 0x633
	CKA_DECAPSULATE                       = 0x634
	CKA_HASH_OF_CERTIFICATE               = 0x635
	CKA_PUBLIC_CRC64_VALUE                = 0x636
	CKA_SEED                              = 0x637

	CKF_ASYNC_SESSION           = 0x8
	CKF_SEED_RANDOM_REQUIRED    = 0x2000000
	CKF_ASYNC_SESSION_SUPPORTED = 0x4000000
	CKF_ENCAPSULATE             = 0x10000000
	CKF_DECAPSULATE             = 0x20000000

	CKG_GENERATE_COUNTER_XOR = 0x4

	CKH_HEDGE_PREFERRED        = 0x0
	CKH_HEDGE_REQUIRED         = 0x1
	CKH_DETERMINISTIC_REQUIRED = 0x2

	CKK_HSS     = 0x46
	CKK_XMSS    = 0x47
	CKK_XMSSMT  = 0x48
	CKK_ML_KEM  = 0x49
	CKK_ML_DSA  = 0x4a
	CKK_SLH_DSA = 0x4b

	CKM_ML_KEM_KEY_PAIR_GEN                 = 0xf
	CKM_ML_KEM                              = 0x17
	CKM_ML_DSA_KEY_PAIR_GEN                 = 0x1c
	CKM_ML_DSA                              = 0x1d
	CKM_HASH_ML_DSA                         = 0x1f
	CKM_HASH_ML_DSA_SHA224                  = 0x23
	CKM_HASH_ML_DSA_SHA256                  = 0x24
	CKM_HASH_ML_DSA_SHA384                  = 0x25
	CKM_HASH_ML_DSA_SHA512                  = 0x26
	CKM_HASH_ML_DSA_SHA3_224                = 0x27
	CKM_HASH_ML_DSA_SHA3_256                = 0x28
	CKM_HASH_ML_DSA_SHA3_384                = 0x29
	CKM_HASH_ML_DSA_SHA3_512                = 0x2a
	CKM_HASH_ML_DSA_SHAKE128                = 0x2b
	CKM_HASH_ML_DSA_SHAKE256                = 0x2c
	CKM_SLH_DSA_KEY_PAIR_GEN                = 0x2d
	CKM_SLH_DSA                             = 0x2e
	CKM_HASH_SLH_DSA                        = 0x34
	CKM_HASH_SLH_DSA_SHA224                 = 0x36
	CKM_HASH_SLH_DSA_SHA256                 = 0x37
	CKM_HASH_SLH_DSA_SHA384                 = 0x38
	CKM_HASH_SLH_DSA_SHA512                 = 0x39
	CKM_HASH_SLH_DSA_SHA3_224               = 0x3a
	CKM_HASH_SLH_DSA_SHA3_256               = 0x3b
	CKM_HASH_SLH_DSA_SHA3_384               = 0x3c
	CKM_HASH_SLH_DSA_SHA3_512               = 0x3d
	CKM_HASH_SLH_DSA_SHAKE128               = 0x3e
	CKM_HASH_SLH_DSA_SHAKE256               = 0x3f
	CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE    = 0x56
	CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE_DH = 0x57
	CKM_AES_KEY_WRAP_PKCS7                  = 0x210c
	CKM_IKE2_PRF_PLUS_DERIVE                = 0x402e
	CKM_IKE_PRF_DERIVE                      = 0x402f
	CKM_IKE1_PRF_DERIVE                     = 0x4030
	CKM_IKE1_EXTENDED_DERIVE                = 0x4031
	CKM_HSS_KEY_PAIR_GEN                    = 0x4032
	CKM_HSS                                 = 0x4033
	CKM_XMSS_KEY_PAIR_GEN                   = 0x4034
	CKM_XMSSMT_KEY_PAIR_GEN                 = 0x4035
	CKM_XMSS                                = 0x4036
	CKM_XMSSMT                              = 0x4037
	CKM_ECDH_X_AES_KEY_WRAP                 = 0x4038
	CKM_ECDH_COF_AES_KEY_WRAP               = 0x4039
	CKM_PUB_KEY_FROM_PRIV_KEY               = 0x403a

	CKO_VALIDATION = 0xa
	CKO_TRUST      = 0xb

	CKP_ML_DSA_44          = 0x1
	CKP_ML_KEM_512         = 0x1
	CKP_SLH_DSA_SHA2_128S  = 0x1
	CKP_ML_DSA_65          = 0x2
	CKP_ML_KEM_768         = 0x2
	CKP_SLH_DSA_SHAKE_128S = 0x2
	CKP_ML_DSA_87          = 0x3
	CKP_ML_KEM_1024        = 0x3
	CKP_SLH_DSA_SHA2_128F  = 0x3
	CKP_SLH_DSA_SHAKE_128F = 0x4
	CKP_COMPLETE_PROVIDER  = 0x5
	CKP_SLH_DSA_SHA2_192S  = 0x5
	CKP_HKDF_TLS_TOKEN     = 0x6
	CKP_SLH_DSA_SHAKE_192S = 0x6
	CKP_SLH_DSA_SHA2_192F  = 0x7
	CKP_SLH_DSA_SHAKE_192F = 0x8
	CKP_SLH_DSA_SHA2_256S  = 0x9
	CKP_SLH_DSA_SHAKE_256S = 0xa
	CKP_SLH_DSA_SHA2_256F  = 0xb
	CKP_SLH_DSA_SHAKE_256F = 0xc

	CKS_LAST_VALIDATION_OK = 0x1

	CKT_TRUST_UNKNOWN           = 0x0
	CKT_TRUSTED                 = 0x1
	CKT_TRUST_ANCHOR            = 0x2
	CKT_NOT_TRUSTED             = 0x3
	CKT_TRUST_MUST_VERIFY_TRUST = 0x4

	CKV_AUTHORITY_TYPE_UNSPECIFIED     = 0x0
	CKV_TYPE_UNSPECIFIED               = 0x0
	CKV_AUTHORITY_TYPE_NIST_CMVP       = 0x1
	CKV_TYPE_SOFTWARE                  = 0x1
	CKV_AUTHORITY_TYPE_COMMON_CRITERIA = 0x2
	CKV_TYPE_HARDWARE                  = 0x2
	CKV_TYPE_FIRMWARE                  = 0x3
	CKV_TYPE_HYBRID                    = 0x4

	// 3.2 return values.
	CKR_KEY_EXHAUSTED               Error = 0x203
	CKR_PENDING                     Error = 0x204
	CKR_SESSION_ASYNC_NOT_SUPPORTED Error = 0x205
	CKR_SEED_RANDOM_REQUIRED        Error = 0x206
	CKR_OPERATION_NOT_VALIDATED     Error = 0x207
	CKR_TOKEN_NOT_INITIALIZED       Error = 0x208
	CKR_PARAMETER_SET_NOT_SUPPORTED Error = 0x209
)

func init() {
	for v, n := range map[uint64]string{
		uint64(CKA_HSS_LEVELS):                        "CKA_HSS_LEVELS",
		uint64(CKA_HSS_LMS_TYPE):                      "CKA_HSS_LMS_TYPE",
		uint64(CKA_HSS_LMOTS_TYPE):                    "CKA_HSS_LMOTS_TYPE",
		uint64(CKA_HSS_LMS_TYPES):                     "CKA_HSS_LMS_TYPES",
		uint64(CKA_HSS_LMOTS_TYPES):                   "CKA_HSS_LMOTS_TYPES",
		uint64(CKA_HSS_KEYS_REMAINING):                "CKA_HSS_KEYS_REMAINING",
		uint64(CKA_PARAMETER_SET):                     "CKA_PARAMETER_SET",
		uint64(CKA_OBJECT_VALIDATION_FLAGS):           "CKA_OBJECT_VALIDATION_FLAGS",
		uint64(CKA_VALIDATION_TYPE):                   "CKA_VALIDATION_TYPE",
		uint64(CKA_VALIDATION_VERSION):                "CKA_VALIDATION_VERSION",
		uint64(CKA_VALIDATION_LEVEL):                  "CKA_VALIDATION_LEVEL",
		uint64(CKA_VALIDATION_MODULE_ID):              "CKA_VALIDATION_MODULE_ID",
		uint64(CKA_VALIDATION_FLAG):                   "CKA_VALIDATION_FLAG",
		uint64(CKA_VALIDATION_AUTHORITY_TYPE):         "CKA_VALIDATION_AUTHORITY_TYPE",
		uint64(CKA_VALIDATION_COUNTRY):                "CKA_VALIDATION_COUNTRY",
		uint64(CKA_VALIDATION_CERTIFICATE_IDENTIFIER): "CKA_VALIDATION_CERTIFICATE_IDENTIFIER",
		uint64(CKA_VALIDATION_CERTIFICATE_URI):        "CKA_VALIDATION_CERTIFICATE_URI",
		uint64(CKA_VALIDATION_VENDOR_URI):             "CKA_VALIDATION_VENDOR_URI",
		uint64(CKA_VALIDATION_PROFILE):                "CKA_VALIDATION_PROFILE",
		uint64(CKA_ENCAPSULATE_TEMPLATE):              "CKA_ENCAPSULATE_TEMPLATE",
		uint64(CKA_DECAPSULATE_TEMPLATE):              "CKA_DECAPSULATE_TEMPLATE",
		uint64(CKA_TRUST_SERVER_AUTH):                 "CKA_TRUST_SERVER_AUTH",
		uint64(CKA_TRUST_CLIENT_AUTH):                 "CKA_TRUST_CLIENT_AUTH",
		uint64(CKA_TRUST_CODE_SIGNING):                "CKA_TRUST_CODE_SIGNING",
		uint64(CKA_TRUST_EMAIL_PROTECTION):            "CKA_TRUST_EMAIL_PROTECTION",
		uint64(CKA_TRUST_IPSEC_IKE):                   "CKA_TRUST_IPSEC_IKE",
		uint64(CKA_TRUST_TIME_STAMPING):               "CKA_TRUST_TIME_STAMPING",
		uint64(CKA_TRUST_OCSP_SIGNING):                "CKA_TRUST_OCSP_SIGNING",
		uint64(CKA_ENCAPSULATE):                       "CKA_ENCAPSULATE",
		uint64(CKA_DECAPSULATE):                       "CKA_DECAPSULATE",
		uint64(CKA_HASH_OF_CERTIFICATE):               "CKA_HASH_OF_CERTIFICATE",
		uint64(CKA_PUBLIC_CRC64_VALUE):                "CKA_PUBLIC_CRC64_VALUE",
		uint64(CKA_SEED):                              "CKA_SEED",
	} {
		names["CKA_"][v] = n
	}
	for v, n := range map[uint64]string{
		uint64(CKK_EC_MONTGOMERY): "CKK_EC_MONTGOMERY",
		uint64(CKK_HSS):           "CKK_HSS",
		uint64(CKK_XMSS):          "CKK_XMSS",
		uint64(CKK_XMSSMT):        "CKK_XMSSMT",
		uint64(CKK_ML_KEM):        "CKK_ML_KEM",
		uint64(CKK_ML_DSA):        "CKK_ML_DSA",
		uint64(CKK_SLH_DSA):       "CKK_SLH_DSA",
	} {
		names["CKK_"][v] = n
	}
	for v, n := range map[uint64]string{
		uint64(CKM_ML_KEM_KEY_PAIR_GEN):                 "CKM_ML_KEM_KEY_PAIR_GEN",
		uint64(CKM_ML_KEM):                              "CKM_ML_KEM",
		uint64(CKM_ML_DSA_KEY_PAIR_GEN):                 "CKM_ML_DSA_KEY_PAIR_GEN",
		uint64(CKM_ML_DSA):                              "CKM_ML_DSA",
		uint64(CKM_HASH_ML_DSA):                         "CKM_HASH_ML_DSA",
		uint64(CKM_HASH_ML_DSA_SHA224):                  "CKM_HASH_ML_DSA_SHA224",
		uint64(CKM_HASH_ML_DSA_SHA256):                  "CKM_HASH_ML_DSA_SHA256",
		uint64(CKM_HASH_ML_DSA_SHA384):                  "CKM_HASH_ML_DSA_SHA384",
		uint64(CKM_HASH_ML_DSA_SHA512):                  "CKM_HASH_ML_DSA_SHA512",
		uint64(CKM_HASH_ML_DSA_SHA3_224):                "CKM_HASH_ML_DSA_SHA3_224",
		uint64(CKM_HASH_ML_DSA_SHA3_256):                "CKM_HASH_ML_DSA_SHA3_256",
		uint64(CKM_HASH_ML_DSA_SHA3_384):                "CKM_HASH_ML_DSA_SHA3_384",
		uint64(CKM_HASH_ML_DSA_SHA3_512):                "CKM_HASH_ML_DSA_SHA3_512",
		uint64(CKM_HASH_ML_DSA_SHAKE128):                "CKM_HASH_ML_DSA_SHAKE128",
		uint64(CKM_HASH_ML_DSA_SHAKE256):                "CKM_HASH_ML_DSA_SHAKE256",
		uint64(CKM_SLH_DSA_KEY_PAIR_GEN):                "CKM_SLH_DSA_KEY_PAIR_GEN",
		uint64(CKM_SLH_DSA):                             "CKM_SLH_DSA",
		uint64(CKM_HASH_SLH_DSA):                        "CKM_HASH_SLH_DSA",
		uint64(CKM_HASH_SLH_DSA_SHA224):                 "CKM_HASH_SLH_DSA_SHA224",
		uint64(CKM_HASH_SLH_DSA_SHA256):                 "CKM_HASH_SLH_DSA_SHA256",
		uint64(CKM_HASH_SLH_DSA_SHA384):                 "CKM_HASH_SLH_DSA_SHA384",
		uint64(CKM_HASH_SLH_DSA_SHA512):                 "CKM_HASH_SLH_DSA_SHA512",
		uint64(CKM_HASH_SLH_DSA_SHA3_224):               "CKM_HASH_SLH_DSA_SHA3_224",
		uint64(CKM_HASH_SLH_DSA_SHA3_256):               "CKM_HASH_SLH_DSA_SHA3_256",
		uint64(CKM_HASH_SLH_DSA_SHA3_384):               "CKM_HASH_SLH_DSA_SHA3_384",
		uint64(CKM_HASH_SLH_DSA_SHA3_512):               "CKM_HASH_SLH_DSA_SHA3_512",
		uint64(CKM_HASH_SLH_DSA_SHAKE128):               "CKM_HASH_SLH_DSA_SHAKE128",
		uint64(CKM_HASH_SLH_DSA_SHAKE256):               "CKM_HASH_SLH_DSA_SHAKE256",
		uint64(CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE):    "CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE",
		uint64(CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE_DH): "CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE_DH",
		uint64(CKM_EC_MONTGOMERY_KEY_PAIR_GEN):          "CKM_EC_MONTGOMERY_KEY_PAIR_GEN",
		uint64(CKM_AES_KEY_WRAP_PKCS7):                  "CKM_AES_KEY_WRAP_PKCS7",
		uint64(CKM_IKE2_PRF_PLUS_DERIVE):                "CKM_IKE2_PRF_PLUS_DERIVE",
		uint64(CKM_IKE_PRF_DERIVE):                      "CKM_IKE_PRF_DERIVE",
		uint64(CKM_IKE1_PRF_DERIVE):                     "CKM_IKE1_PRF_DERIVE",
		uint64(CKM_IKE1_EXTENDED_DERIVE):                "CKM_IKE1_EXTENDED_DERIVE",
		uint64(CKM_HSS_KEY_PAIR_GEN):                    "CKM_HSS_KEY_PAIR_GEN",
		uint64(CKM_HSS):                                 "CKM_HSS",
		uint64(CKM_XMSS_KEY_PAIR_GEN):                   "CKM_XMSS_KEY_PAIR_GEN",
		uint64(CKM_XMSSMT_KEY_PAIR_GEN):                 "CKM_XMSSMT_KEY_PAIR_GEN",
		uint64(CKM_XMSS):                                "CKM_XMSS",
		uint64(CKM_XMSSMT):                              "CKM_XMSSMT",
		uint64(CKM_ECDH_X_AES_KEY_WRAP):                 "CKM_ECDH_X_AES_KEY_WRAP",
		uint64(CKM_ECDH_COF_AES_KEY_WRAP):               "CKM_ECDH_COF_AES_KEY_WRAP",
		uint64(CKM_PUB_KEY_FROM_PRIV_KEY):               "CKM_PUB_KEY_FROM_PRIV_KEY",
	} {
		names["CKM_"][v] = n
	}
	for v, n := range map[uint64]string{
		uint64(CKO_VALIDATION): "CKO_VALIDATION",
		uint64(CKO_TRUST):      "CKO_TRUST",
	} {
		names["CKO_"][v] = n
	}
	for v, n := range map[uint64]string{
		uint64(CKR_KEY_EXHAUSTED):               "CKR_KEY_EXHAUSTED",
		uint64(CKR_PENDING):                     "CKR_PENDING",
		uint64(CKR_SESSION_ASYNC_NOT_SUPPORTED): "CKR_SESSION_ASYNC_NOT_SUPPORTED",
		uint64(CKR_SEED_RANDOM_REQUIRED):        "CKR_SEED_RANDOM_REQUIRED",
		uint64(CKR_OPERATION_NOT_VALIDATED):     "CKR_OPERATION_NOT_VALIDATED",
		uint64(CKR_TOKEN_NOT_INITIALIZED):       "CKR_TOKEN_NOT_INITIALIZED",
		uint64(CKR_PARAMETER_SET_NOT_SUPPORTED): "CKR_PARAMETER_SET_NOT_SUPPORTED",
	} {
		names["CKR_"][v] = n
	}
}

// mechanisms32 are the mechanisms PKCS#11 3.2 introduced.
var mechanisms32 = map[uint64]bool{
	CKM_ML_KEM_KEY_PAIR_GEN:                 true,
	CKM_ML_KEM:                              true,
	CKM_ML_DSA_KEY_PAIR_GEN:                 true,
	CKM_ML_DSA:                              true,
	CKM_HASH_ML_DSA:                         true,
	CKM_HASH_ML_DSA_SHA224:                  true,
	CKM_HASH_ML_DSA_SHA256:                  true,
	CKM_HASH_ML_DSA_SHA384:                  true,
	CKM_HASH_ML_DSA_SHA512:                  true,
	CKM_HASH_ML_DSA_SHA3_224:                true,
	CKM_HASH_ML_DSA_SHA3_256:                true,
	CKM_HASH_ML_DSA_SHA3_384:                true,
	CKM_HASH_ML_DSA_SHA3_512:                true,
	CKM_HASH_ML_DSA_SHAKE128:                true,
	CKM_HASH_ML_DSA_SHAKE256:                true,
	CKM_SLH_DSA_KEY_PAIR_GEN:                true,
	CKM_SLH_DSA:                             true,
	CKM_HASH_SLH_DSA:                        true,
	CKM_HASH_SLH_DSA_SHA224:                 true,
	CKM_HASH_SLH_DSA_SHA256:                 true,
	CKM_HASH_SLH_DSA_SHA384:                 true,
	CKM_HASH_SLH_DSA_SHA512:                 true,
	CKM_HASH_SLH_DSA_SHA3_224:               true,
	CKM_HASH_SLH_DSA_SHA3_256:               true,
	CKM_HASH_SLH_DSA_SHA3_384:               true,
	CKM_HASH_SLH_DSA_SHA3_512:               true,
	CKM_HASH_SLH_DSA_SHAKE128:               true,
	CKM_HASH_SLH_DSA_SHAKE256:               true,
	CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE:    true,
	CKM_TLS12_EXTENDED_MASTER_KEY_DERIVE_DH: true,
	CKM_AES_KEY_WRAP_PKCS7:                  true,
	CKM_IKE2_PRF_PLUS_DERIVE:                true,
	CKM_IKE_PRF_DERIVE:                      true,
	CKM_IKE1_PRF_DERIVE:                     true,
	CKM_IKE1_EXTENDED_DERIVE:                true,
	CKM_HSS_KEY_PAIR_GEN:                    true,
	CKM_HSS:                                 true,
	CKM_XMSS_KEY_PAIR_GEN:                   true,
	CKM_XMSSMT_KEY_PAIR_GEN:                 true,
	CKM_XMSS:                                true,
	CKM_XMSSMT:                              true,
	CKM_ECDH_X_AES_KEY_WRAP:                 true,
	CKM_ECDH_COF_AES_KEY_WRAP:               true,
	CKM_PUB_KEY_FROM_PRIV_KEY:               true,
}

// Mechanism32 reports whether mech is a mechanism PKCS#11 3.2 introduced
// (CKM_ML_KEM, CKM_ML_DSA...): a caller of an older interface, whose
// headers do not name it, is not shown it (cgo's C_GetMechanismList).
func Mechanism32(mech uint64) bool { return mechanisms32[mech] }
