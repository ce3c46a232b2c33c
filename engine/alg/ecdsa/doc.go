// Package ecdsa is ECDSA for the token, over any engine: the engine
// computes k·G ([engine.ECEngine.ScalarBaseMult]); everything else is done
// here, once, for every engine: nonces, the mod-n arithmetic, range checks,
// and the verification of every signature before it is released.
//
// It must never release a signature it has not checked to be valid under
// the public key, never reuse a nonce, and never let the engine's answer
// decide more than k·G.
//
// # Signing
//
// [Sign] and [PrivateKey.Sign] take a message hash (the caller hashes) and
// return the raw r‖s signature (each half padded to the order's byte
// length: the CKM_ECDSA format). The hash is truncated to the order's bit
// length (FIPS 186-5 §6.4.1), so inputs longer than the order are fine.
//
//   - Nonce: RFC 6979's HMAC-DRBG seeded with the private key and the hash,
//     hedged with fresh random bytes (from the rand argument, crypto/rand
//     by default) as the additional data k' of §3.6. Two signatures of one
//     message therefore differ, and a bad random source alone does not
//     expose the key. The DRBG's hash matches the curve (SHA-256 for the
//     256-bit curves, SHA-384 for P-384, SHA-512 for P-521); with no
//     additional data the nonces are the RFC's (tested against its
//     appendix A.2.5 and A.2.7).
//   - k·G comes from the engine; its result must be a point on the curve
//     (engine.ErrDevice otherwise).
//   - s = k⁻¹·(e + r·d) mod n is computed by [ec.Curve.ECDSASignatureInverse]
//     in constant time (Montgomery arithmetic mod n, one inversion of
//     k·(e + r·d) that gives both k⁻¹ and s⁻¹, by divsteps on the 256-bit
//     curves); r = 0 or s = 0 draws the next nonce.
//   - The check before release. On P-256 by default (CheckDefault), the
//     relation check (checkRelation): R is on the curve and R + (n−k)·G
//     is the point at infinity, (n−k)·G computed by filippo.io/nistec
//     (Go's P-256 assembly, exported), not by the engine, with the
//     complement of k so that no digit of the engine's recoding repeats;
//     r = x(R) mod n and s·k ≡ e + r·d (mod n) in filippo.io/bigmod, not
//     in engine/arith/ec's arithmetic that made s; and d + (n − d) ≡ 0,
//     n − d being a second copy of the scalar made with the key, so a d
//     changed since its public point was computed is seen. Together they
//     say that r‖s is a valid signature under the public point: what the
//     full verification says, at one constant-time fixed-base
//     multiplication instead of two variable-base ones. On the other
//     curves, and on every curve with CheckVerify, the signature is
//     verified with the public point, which was computed in software from
//     d when the key was made ([NewPrivateKey]), using the s⁻¹ of the
//     previous step once s·s⁻¹ ≡ 1 (mod n) is checked
//     ([ec.PublicKey.ECDSAVerifyInverseVarTime]: no second inversion). A
//     signature that fails is an error wrapping engine.ErrDevice, and is
//     wiped. docs/THREATS.md says what each check catches.
//
// A [PrivateKey] keeps the public point and, after its first signature, a
// comb table of it that makes the full verification about three times
// cheaper; callers that sign repeatedly with one key (the token) keep the
// PrivateKey. It also keeps the working memory of its signatures (nonce,
// DRBG, s⁻¹, k·G, the relation check's numbers) in a pool, wiped between
// uses: [PrivateKey.SignTo] into a buffer with room allocates nothing in
// software (TestSignAllocs); an engine's k·G allocates what the engine
// allocates (the software engine's P-256 k·G, filippo.io/nistec's, one:
// the coordinates).
//
// Both checks catch a k·G of another scalar (a flipped bit of k, k+1, 2k,
// the generator, a random point), a point off the curve and no point at
// all (TestFaultyEngine, TestFaultyEnginePreparedKey, TestECFaultModes with
// the faults of enginetest.ECFault); the full verification passes −R,
// which has R's x and so gives a valid signature, the relation check
// refuses it (it is not k·G). TestRelationCheck faults the scalar
// arithmetic (s, r, the nonce, d, the hash) one at a time.
//
// # Keys and verification
//
// [GenerateKey] draws d uniformly in [1, n−1] by rejection sampling and
// computes the public point with [PublicFromPrivate], which takes d·G from
// the engine and requires it to equal the software result. [Verify] checks
// a signature in software with variable-time arithmetic (all its inputs are
// public). The Wycheproof vectors it must pass are loaded by package
// ecdsatest, for reuse by the token's C_Verify tests.
package ecdsa
