// Package soft is the software engine: constant-time modular
// exponentiation in pure Go, the engine every other engine falls back to.
// It registers itself as "soft" in the engine registry.
//
// The arithmetic lives in engine/arith/mont, shared with engine/alg/rsa
// (which needs the same constant-time operations for CRT recombination and
// blinding). This package adapts it to [engine.Engine].
//
// # Constant time: how it is achieved
//
// Numbers are little-endian slices of 64-bit limbs whose length is fixed
// by the modulus (public); values never decide a branch or an address:
//
//   - Montgomery multiplication is CIOS (in pure Go with both inner
//     products fused in one pass, math/bits Mul64/Add64 only; in assembly
//     with MULX/ADCX/ADOX), and a dedicated squaring; both end with a
//     conditional subtraction that is always computed and selected with a
//     mask. Every loop count depends on the limb count only.
//   - Secret exponentiation ([Engine.Exp] with public == false) uses fixed
//     windows of 5 bits (4 for exponents under 384 bits): the same number
//     of squarings and multiplications whatever the exponent, and each
//     table lookup reads all 32 (or 16) entries and keeps one with a mask.
//     The exponent is processed over the byte length the caller gives,
//     leading zero bytes included: that length is public, the value is not
//     (the contract of Go's crypto/internal/fips140/bigmod). Callers pass
//     secret exponents at a fixed length that does not depend on the value
//     (RSA's dp and dq at the byte length of p and q, a blinded DSA nonce
//     or DH value at one limb more than the order), so a short exponent
//     (a DSA nonce: 320 bits for a 2048-bit p) costs what its length
//     costs, not a full-length exponentiation.
//   - The base is checked to be below the modulus with a borrow-based
//     comparison; the Montgomery constant R² mod n is computed by
//     constant-time doubling, not with math/big (RSA primes are moduli).
//   - Exp with public == true uses left-to-right binary exponentiation that
//     branches on the exponent bits: it is only for public exponents (e).
//
// What is allowed to leak: the byte lengths of the modulus, base and
// exponent, and whether an error is returned.
//
// # Constant time: how it was checked
//
// Review of every function on the secret path against the rules above; a
// trace test in engine/arith/mont that records the exact sequence of
// kernel calls and table lookups and requires it to be identical for
// different secret exponents, bases and moduli of one length; and an
// opt-in dudect-style timing test (MODEXP_DUDECT=1 go test -run Dudect
// ./engine/arith/mont/) comparing zero and random exponents with
// Welch's t-test; and, for the assembly kernel, identical instruction
// counts under valgrind for different exponents and bases
// (TestExpForInstructionCount in engine/arith/mont). None of this covers
// what the compiler or CPU might add (the kernels rely on MUL/MULX/ADC/
// ADCX/ADOX/SBB being constant-time, as on amd64 and arm64).
//
// # Speed
//
// No allocation per multiplication: each Exp allocates one slab (window
// table, accumulators, scratch) and the result. On amd64 with BMI2 and
// ADX the limb kernel is assembly (MULX with the two ADCX/ADOX carry
// chains, a dedicated squaring, an AVX2 table lookup; see
// engine/arith/mont), about 2.5 times the pure-Go kernel and a little
// faster than math/big's Exp, which is not constant-time; the build tag
// purego keeps the pure-Go kernel. With AVX-512 IFMA, secret
// exponentiations modulo 1024-, 1536- and 2048-bit numbers run on the
// radix-2^52 kernel, and [Engine.ExpPair] computes the two CRT halves of
// an RSA private operation interleaved on one core ([Kernels] reports the
// choice; MODEXP_KERNEL forces one). On that kernel the secret
// exponentiations in flight at once (the threads of a process, the
// clients of modexpd) are gathered by a scheduler (batch.go) and run up
// to 8 together on the 8-lane kernel, each lane its own modulus and
// exponent; one alone in flight runs at once on the single-buffer kernel,
// so a lone caller's latency does not grow (while the callers have lately
// been more than the cores, a partial batch waits up to 400 µs for more,
// from its arrival or the last batch's end);
// MODEXP_BATCH=off turns the scheduler off. Figures: docs/PERFORMANCE.md.
package soft
