// Package dsa is DSA (FIPS 186-4) for the token, over any engine: the
// engine computes the one secret exponentiation of a signature, g^k mod p;
// everything else is done here, once, for every engine: domain parameter
// checks, nonces, the mod-q arithmetic, range checks, and the verification
// of every signature before it is released.
//
// # Sizes
//
// The (L, N) pairs of FIPS 186-4 §4.2: (1024, 160), (2048, 224),
// (2048, 256), (3072, 256). [CheckParameters] refuses any other pair, and
// [GenerateParameters] makes only these.
//
// # Signing
//
// [Key.Sign] takes a message hash (the caller hashes) and returns r‖s,
// each half N/8 bytes: the PKCS#11 CKM_DSA format. The hash is truncated
// to its leftmost N bits (FIPS 186-4 §4.6), so any length is accepted.
//
//   - Nonce: RFC 6979's HMAC-DRBG (HMAC-SHA-256) seeded with x and the
//     hash, hedged with N/8 fresh random bytes as the additional data k' of
//     §3.6. With no additional data the nonces are exactly RFC 6979's
//     (the signatures of its appendix A.2.1 and A.2.2 with SHA-256 are
//     reproduced by the tests).
//   - g^k mod p comes from the engine with the exponent blinded: the
//     engine sees k + m·q for a fresh 64-bit m (g has order q, so the
//     result is the same), always (N+64) bits rounded up to whole limbs
//     plus one limb, whatever k is. The result must be below p
//     (engine.ErrDevice otherwise); r is its residue mod q.
//   - s = k⁻¹·(z + x·r) mod q is computed with x and k blinded by a fresh
//     random b in [1, q−1]: s = (k·b)⁻¹·(b·z + (b·x)·r), in the constant-time
//     Montgomery arithmetic of engine/arith/mont, (k·b)⁻¹ by Fermat
//     (an exponentiation by the public q−2 in constant time). r = 0 or
//     s = 0 draws the next nonce.
//   - The signature is verified with the public value y, which was computed
//     in software from x when the key was prepared ([NewKey]); a signature
//     that does not verify is wiped, and the error wraps [ErrFault] and
//     engine.ErrDevice. A wrong signature is never returned. Redoing the
//     signature on another engine is engine/guard's policy: it signs again
//     with the key prepared on the software engine ([Key.On]), with a
//     fresh nonce.
//
// # Keys and verification
//
// [GenerateKey] draws x uniformly in [1, q−1] by rejection sampling; y is
// computed on the engine (exponent blinded as above) and required to equal
// the software result. [PublicKey.Verify] checks a signature in software with
// variable-time arithmetic (its inputs are public).
//
// # What is not constant time
//
// Parameter checks and generation, [PublicKey.Verify] and the check before release
// (public values only), and the number of DRBG candidates drawn before one
// falls in [1, q−1] (it reveals only that discarded candidates were out of
// range, not the nonce used).
package dsa
