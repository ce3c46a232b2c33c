package mech

// Small helpers of the mechanisms: lengths, padding, constant-time
// comparison, the error codes of unwrapping and derivation.

import (
	"context"
	"crypto/subtle"
	"fmt"
	"slices"

	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// leftPad returns b left-padded with zeros to k bytes (len(b) ≤ k).
func leftPad(b []byte, k int) []byte {
	if len(b) == k {
		return b
	}
	out := make([]byte, k)
	copy(out[k-len(b):], b)
	return out
}

func dataLen(what string, n, max int) error {
	if n > max {
		return ck.Errorf(ck.CKR_DATA_LEN_RANGE, "%s: %d bytes, at most %d", what, n, max)
	}
	return nil
}

// withCode replaces the CKR code of a data-range error (the public
// operation's CKR_DATA_INVALID becomes code).
func withCode(err error, from, to ck.Error) error {
	if ck.RV(err) == uint64(from) {
		return fmt.Errorf("%w: %w", to, err)
	}
	return err
}

// EqualCT compares in constant time.
func EqualCT(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }

// unwrapErr turns a decryption's error into an unwrap's: a ciphertext of
// the wrong length is CKR_WRAPPED_KEY_LEN_RANGE, one that does not decrypt
// CKR_WRAPPED_KEY_INVALID.
func unwrapErr(err error) error {
	switch ck.RV(err) {
	case uint64(ck.CKR_ENCRYPTED_DATA_LEN_RANGE):
		return fmt.Errorf("%w: %w", ck.CKR_WRAPPED_KEY_LEN_RANGE, err)
	case uint64(ck.CKR_ENCRYPTED_DATA_INVALID):
		return fmt.Errorf("%w: %w", ck.CKR_WRAPPED_KEY_INVALID, err)
	}
	return err
}

// DataDeriver is a derivation whose output is a data object (CKO_DATA)
// rather than a key: CKM_HKDF_DATA.
type DataDeriver interface{ DerivesData() bool }

// derivedDataLen is the byte length of a derived data object: the
// template's CKA_VALUE_LEN (1 to 1024 bytes, at most natural when natural
// is not 0), else natural (CKR_TEMPLATE_INCOMPLETE when natural is 0).
func derivedDataLen(tmpl attr.Map, natural int) (int, error) {
	v, ok := tmpl[ck.CKA_VALUE_LEN]
	if !ok {
		if natural == 0 {
			return 0, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_VALUE_LEN missing (the mechanism's output has no natural length)")
		}
		return natural, nil
	}
	l, ok := ck.ParseULong(v)
	if !ok || l == 0 || l > maxDerivedLen {
		return 0, Invalid(ck.CKA_VALUE_LEN, "want 1 to 1024 bytes")
	}
	if natural != 0 && int(l) > natural {
		return 0, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%d bytes asked of a %d-byte secret", l, natural)
	}
	return int(l), nil
}

// DerivedKeyLen is the byte length of the secret key tmpl describes:
// CKA_VALUE_LEN when given, else the key type's own length, taken from
// natural (the mechanism's raw output length; 0 for an output of any
// length, as a KDF's). The answers:
//
//   - CKK_GENERIC_SECRET (and CKK_HKDF, the HMAC key types): any length of 1 byte
//     or more; without CKA_VALUE_LEN, natural (CKR_TEMPLATE_INCOMPLETE
//     when natural is 0).
//   - CKK_AES: 16, 24 or 32 bytes (else CKR_ATTRIBUTE_VALUE_INVALID);
//     without CKA_VALUE_LEN the longest of these that natural allows (32
//     when natural is 0).
//   - CKK_DES, CKK_DES2, CKK_DES3: 8, 16, 24 bytes (a CKA_VALUE_LEN
//     stating another is CKR_TEMPLATE_INCONSISTENT).
//   - A length above natural (when natural is not 0) is
//     CKR_TEMPLATE_INCONSISTENT; other key types are
//     CKR_TEMPLATE_INCONSISTENT.
func DerivedKeyLen(tmpl attr.Map, natural int) (int, error) {
	kt, _ := tmpl.ULong(ck.CKA_KEY_TYPE)
	n, given := 0, false
	if v, ok := tmpl[ck.CKA_VALUE_LEN]; ok {
		l, ok := ck.ParseULong(v)
		if !ok || l == 0 || l > maxDerivedLen {
			return 0, Invalid(ck.CKA_VALUE_LEN, "want 1 to 1024 bytes")
		}
		n, given = int(l), true
	}
	switch {
	case kt == ck.CKK_AES:
		if !given {
			n = 32
			for natural != 0 && n > natural && n > 16 {
				n -= 8
			}
		}
		if n != 16 && n != 24 && n != 32 {
			return 0, Invalid(ck.CKA_VALUE_LEN, "an AES key has 16, 24 or 32 bytes")
		}
	case DESKeyLen[kt] != 0:
		if given && n != DESKeyLen[kt] {
			return 0, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "a %s key has %d bytes", ck.Name("CKK_", kt), DESKeyLen[kt])
		}
		n = DESKeyLen[kt]
	case kt == ck.CKK_GENERIC_SECRET || kt == ck.CKK_HKDF || slices.Contains(hmacKeyTypes, kt):
		if !given {
			if natural == 0 {
				return 0, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_VALUE_LEN missing (the mechanism's output has no natural length)")
			}
			n = natural
		}
	default:
		return 0, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "cannot derive a key of type %s", ck.Name("CKK_", kt))
	}
	if natural != 0 && n > natural {
		return 0, ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "%d-byte key asked of a %d-byte secret", n, natural)
	}
	return n, nil
}

// maxDerivedLen bounds CKA_VALUE_LEN of a derived key (bytes).
const maxDerivedLen = 1024

// bg is the context of engine operations: PKCS#11 calls have no deadline.
var bg = context.Background()

// GCMIVWindow is how many caller IVs the token remembers per AES key
// object (token/gcmiv.go): a repeat within the window is refused.
const GCMIVWindow = 4096
