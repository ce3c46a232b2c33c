// Package rsapad holds the RSA message encodings the token's mechanisms need,
// as pure functions over byte strings: EMSA-PKCS1-v1_5 and EMSA-PSS for
// signatures, RSAES-PKCS1-v1_5 (block type 2) and RSAES-OAEP for encryption,
// all as specified by RFC 8017, with MGF1 as the mask generation function.
//
// The package knows no key and does no arithmetic. The raw RSA operation
// (m^d mod n, s^e mod n) lives in engine/alg/rsa; the token glues the two:
//
//	sign:    em, _ := EncodePKCS1v15Sign(t, k);  sig := Private(em)
//	verify:  em := Public(sig);                  err := VerifyPKCS1v15Sign(t, em)
//	encrypt: em, _ := EncodeOAEP(msg, label, k, h, mgf, rand); ct := Public(em)
//	decrypt: em := Private(ct);                  msg, err := DecodeOAEP(em, label, k, h, mgf)
//
// It must never log, print, or keep state: every function is safe for
// concurrent use, does not retain or modify its arguments, and returns
// freshly allocated slices.
//
// # Sizes
//
// k is the byte length of the modulus, (modBits+7)/8. Encoders for
// PKCS#1 v1.5 and OAEP return exactly k bytes; decoders take exactly k bytes
// (the modulus-length output of the raw operation).
//
// EMSA-PSS works on emBits = modBits−1 bits, so its encoded message is
// emLen = (emBits+7)/8 bytes, which is k−1 when modBits ≡ 1 (mod 8).
// [EncodePSS] returns emLen bytes (a big-endian integer the raw operation
// accepts as is, or left-pads to k); [VerifyPSS] accepts either emLen bytes
// or the k = emLen+1 bytes of the raw operation, whose first byte must then
// be zero.
//
// # Hashes
//
// Supported hashes, for DigestInfo, PSS, OAEP and MGF1 alike: crypto.SHA1,
// crypto.SHA224, crypto.SHA256, crypto.SHA384, crypto.SHA512 and
// crypto.SHA3_224 to crypto.SHA3_512 (the package links their
// implementations). [DigestInfo] also takes crypto.MD5 (CKM_MD5_RSA_PKCS,
// for old signatures; the caller hashes), and nothing else does. The MGF1
// hash is independent of the message hash, as PKCS#11 allows.
// [MechanismHash] and [MGFHash] map the PKCS#11 constants of
// CK_RSA_PKCS_PSS_PARAMS and CK_RSA_PKCS_OAEP_PARAMS (hashAlg, mgf) to a
// crypto.Hash.
//
// # Errors
//
// Every error returned wraps exactly one of the sentinels below (test with
// errors.Is), except a failure of the caller's random source, which is
// returned wrapped as is (CKR_FUNCTION_FAILED or CKR_GENERAL_ERROR).
// Decryption failures are ErrDecryption itself, never wrapped. The
// suggested CK_RV mapping for the token:
//
//	ErrHashUnsupported  CKR_MECHANISM_PARAM_INVALID
//	ErrInvalidParameter CKR_MECHANISM_PARAM_INVALID (negative salt length, nil rand…)
//	ErrDigestLength     CKR_DATA_LEN_RANGE (digest length ≠ hash size)
//	ErrMessageTooLong   CKR_DATA_LEN_RANGE for raw CKM_RSA_PKCS data;
//	                    CKR_KEY_SIZE_RANGE when t is a DigestInfo the token built
//	ErrKeyTooSmall      CKR_KEY_SIZE_RANGE (modulus too small for hash and salt,
//	                    whatever the message)
//	ErrVerification     CKR_SIGNATURE_INVALID
//	ErrDecryption       CKR_ENCRYPTED_DATA_INVALID
//
// # Side channels
//
// Encoders and signature checks work on public data (or data about to become
// public) and are not constant-time, except that comparisons use
// crypto/subtle. [DecodeOAEP] handles secret data: it examines every byte
// of the padding the same way whatever its value, and returns one error
// value, [ErrDecryption] itself (unwrapped), for every padding failure.
// What it leaks is only the final outcome: whether the padding was valid,
// and, when it was, the length of the message (the length of the returned
// slice). The length of em and the parameters (k, hash) are public. For
// PKCS#1 v1.5 validity itself is a padding oracle (Bleichenbacher): the
// token's CKM_RSA_PKCS decryption therefore uses
// [DecodePKCS1v15EncryptImplicit] (implicit rejection, implicit.go), which
// checks the padding in constant time too but reports no failure at all
// and leaks neither validity nor, through its length, the kind of message
// returned. (The explicit-rejection decoder its tests compare against is
// in the test files.)
package rsapad

import "errors"

// Sentinel errors. Errors from this package wrap exactly one of them (or
// the random source's error); decryption failures are ErrDecryption itself.
var (
	// ErrHashUnsupported: the hash (or MGF1 hash, or PKCS#11 hash or MGF
	// constant) is not one of those the package supports.
	ErrHashUnsupported = errors.New("rsapad: hash not supported")
	// ErrInvalidParameter: a parameter is out of its domain independently
	// of the key: a negative salt length, a nil random source.
	ErrInvalidParameter = errors.New("rsapad: invalid parameter")
	// ErrDigestLength: a message digest's length is not the size of its hash.
	ErrDigestLength = errors.New("rsapad: digest length does not match hash")
	// ErrMessageTooLong: the message (or DigestInfo) does not fit the
	// modulus with the encoding's overhead.
	ErrMessageTooLong = errors.New("rsapad: message too long for modulus")
	// ErrKeyTooSmall: the modulus is too small for the encoding with these
	// parameters (hash, salt length) even for an empty message.
	ErrKeyTooSmall = errors.New("rsapad: modulus too small for encoding parameters")
	// ErrVerification: a signature's encoded message is not the expected
	// encoding.
	ErrVerification = errors.New("rsapad: verification error")
	// ErrDecryption: an encrypted message's padding is invalid. Returned
	// unwrapped, for every failure of a decryption decoder's padding check.
	ErrDecryption = errors.New("rsapad: decryption error")
)
