package rsapad

import (
	"crypto"
	_ "crypto/sha1"   // links crypto.SHA1
	_ "crypto/sha256" // links crypto.SHA224, crypto.SHA256
	_ "crypto/sha3"   // links crypto.SHA3_224 ... crypto.SHA3_512
	_ "crypto/sha512" // links crypto.SHA384, crypto.SHA512
	"crypto/subtle"
	"fmt"

	"github.com/modexp-token/modexp-token/token/ck"
)

// supported reports whether h is a hash the package handles.
func supported(h crypto.Hash) bool {
	switch h {
	case crypto.SHA1, crypto.SHA224, crypto.SHA256, crypto.SHA384, crypto.SHA512,
		crypto.SHA3_224, crypto.SHA3_256, crypto.SHA3_384, crypto.SHA3_512:
		return true
	}
	return false
}

// checkHashes returns an error wrapping ErrHashUnsupported unless every
// hash in hs is supported.
func checkHashes(hs ...crypto.Hash) error {
	for _, h := range hs {
		if !supported(h) {
			return fmt.Errorf("rsapad: hash %v: %w", h, ErrHashUnsupported)
		}
	}
	return nil
}

// MechanismHash returns the hash of a PKCS#11 digest mechanism, as found in
// the hashAlg field of CK_RSA_PKCS_PSS_PARAMS and CK_RSA_PKCS_OAEP_PARAMS:
// ck.CKM_SHA_1, ck.CKM_SHA224, ck.CKM_SHA256, ck.CKM_SHA384, ck.CKM_SHA512,
// and ck.CKM_SHA3_224 to ck.CKM_SHA3_512. Any other value gives an error wrapping ErrHashUnsupported.
func MechanismHash(mech uint64) (crypto.Hash, error) {
	switch mech {
	case ck.CKM_SHA_1:
		return crypto.SHA1, nil
	case ck.CKM_SHA224:
		return crypto.SHA224, nil
	case ck.CKM_SHA256:
		return crypto.SHA256, nil
	case ck.CKM_SHA384:
		return crypto.SHA384, nil
	case ck.CKM_SHA512:
		return crypto.SHA512, nil
	case ck.CKM_SHA3_224:
		return crypto.SHA3_224, nil
	case ck.CKM_SHA3_256:
		return crypto.SHA3_256, nil
	case ck.CKM_SHA3_384:
		return crypto.SHA3_384, nil
	case ck.CKM_SHA3_512:
		return crypto.SHA3_512, nil
	}
	return 0, fmt.Errorf("rsapad: hash mechanism 0x%X: %w", mech, ErrHashUnsupported)
}

// MGFHash returns the hash of a PKCS#11 MGF1 identifier, the mgf field of
// CK_RSA_PKCS_PSS_PARAMS and CK_RSA_PKCS_OAEP_PARAMS: ck.CKG_MGF1_SHA1,
// ck.CKG_MGF1_SHA224, ck.CKG_MGF1_SHA256, ck.CKG_MGF1_SHA384,
// ck.CKG_MGF1_SHA512, ck.CKG_MGF1_SHA3_224 to ck.CKG_MGF1_SHA3_512. Any
// other value gives an error wrapping
// ErrHashUnsupported.
func MGFHash(mgf uint64) (crypto.Hash, error) {
	switch mgf {
	case ck.CKG_MGF1_SHA1:
		return crypto.SHA1, nil
	case ck.CKG_MGF1_SHA224:
		return crypto.SHA224, nil
	case ck.CKG_MGF1_SHA256:
		return crypto.SHA256, nil
	case ck.CKG_MGF1_SHA384:
		return crypto.SHA384, nil
	case ck.CKG_MGF1_SHA512:
		return crypto.SHA512, nil
	case ck.CKG_MGF1_SHA3_224:
		return crypto.SHA3_224, nil
	case ck.CKG_MGF1_SHA3_256:
		return crypto.SHA3_256, nil
	case ck.CKG_MGF1_SHA3_384:
		return crypto.SHA3_384, nil
	case ck.CKG_MGF1_SHA3_512:
		return crypto.SHA3_512, nil
	}
	return 0, fmt.Errorf("rsapad: MGF 0x%X: %w", mgf, ErrHashUnsupported)
}

// mgf1XOR XORs out with MGF1(seed, len(out)) computed with hash h
// (RFC 8017 B.2.1). h must be supported.
func mgf1XOR(out []byte, h crypto.Hash, seed []byte) {
	d := h.New()
	var counter [4]byte
	var sum []byte
	for done := 0; done < len(out); {
		d.Reset()
		d.Write(seed)
		d.Write(counter[:])
		sum = d.Sum(sum[:0])
		done += subtle.XORBytes(out[done:], out[done:], sum)
		for i := 3; i >= 0; i-- {
			counter[i]++
			if counter[i] != 0 {
				break
			}
		}
	}
}
