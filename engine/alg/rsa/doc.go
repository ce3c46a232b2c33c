// Package rsa is the RSA private and public operation over any engine.
//
// # The private operation
//
// [Key.Private] does, for every engine:
//
//  1. Range check of the input (below n).
//  2. Base blinding: c·rᵉ mod n with a per-key pair (rᵉ, r⁻¹) that is
//     refreshed by squaring on each use and renewed from fresh randomness
//     every 32 uses (OpenSSL's scheme). The pair is kept in
//     Montgomery form and used with the constant-time arithmetic of
//     engine/arith/mont, never on the engine. Fresh pairs are drawn 8 at
//     a time, by one caller while the others go on squaring: the 8
//     inverses from one constant-time inversion of the product of the
//     8 r (Montgomery's trick).
//  3. CRT: the blinded input is reduced mod p and mod q in software, and
//     the engine does two exponentiations (concurrently when Info().Cores
//     ≥ 2, fewer private operations are in flight than the engine has
//     cores, and the machine has an idle CPU), or one ExpPair call if it implements [engine.PairEngine] (a
//     device: one round trip; the software engine on the IFMA kernel: the
//     two halves interleaved on one core) and does not decline it with
//     [engine.ErrUnsupported], or one ExpCRT call if it implements
//     [engine.CRTEngine]. With Options.ExponentBlinding the engine sees
//     d_p + k·(p−1) and d_q + k'·(q−1) with fresh 64-bit k, k'.
//  4. Range check of the engine's outputs (length and value below the
//     modulus), then Garner recombination in constant time: m2 mod p,
//     subtraction mod p, a Montgomery multiplication by qInv·R mod p, a
//     plain product by q and an addition.
//  5. Unblinding by r⁻¹, then the check before release: sᵉ mod n is
//     computed in software and compared in constant time with the input.
//     On mismatch the error wraps both [ErrFault] and [engine.ErrDevice]
//     (an engine error wrapping engine.ErrDevice is returned as such). A
//     wrong result is never returned. Redoing the operation on another
//     engine is engine/guard's policy: it runs it again on the key
//     prepared for the software engine ([Key.On]), which shares the
//     blinding state and so takes a fresh blinding pair.
//
// # What is not constant time
//
// Key preparation ([NewKey]) and [GenerateKey] use math/big on the key
// (validation, d mod p−1, q⁻¹ mod p, d = e⁻¹ mod λ, the small-prime sieve):
// once per key, not per operation. Miller–Rabin reveals, through the
// number of squarings, the number of trailing zero bits of p−1. The
// public operation ([Public] and the check) is variable-time in e only.
package rsa
