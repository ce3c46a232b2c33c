// Package mont is the constant-time Montgomery arithmetic shared by the
// software engine (engine/soft) and the RSA layer (engine/rsa): numbers as
// little-endian slices of 64-bit limbs, multiplication and squaring in
// Montgomery form (CIOS), fixed-window exponentiation, reduction of
// arbitrary-length inputs, modular addition and subtraction, and plain
// products.
//
// # What leaks and what does not
//
// The length of a modulus (its limb count and bit length) and the byte
// length of every input are public. The values of moduli, bases, exponents
// and intermediate results are not: every function whose name does not end
// in VarTime runs the same instructions and touches the same memory
// addresses whatever those values are. Concretely:
//
//   - Montgomery multiplication and squaring run a fixed number of limb
//     iterations and end with a conditional subtraction done with masks
//     (both the subtraction and the selection are always computed).
//   - [Modulus.Exp] uses a fixed window of 4 or 5 bits (chosen from the
//     exponent's byte length, which is public), always does the same
//     sequence of squarings and multiplications, and reads every table
//     entry on each lookup, keeping the wanted one with a mask.
//   - Comparisons return 0/1 words computed from borrows, never booleans
//     that a caller could branch on by accident.
//   - [NewModulus] computes R² mod n by constant-time modular doubling and
//     Montgomery squaring, not with math/big, because RSA primes are
//     secret moduli.
//
// Functions named ...VarTime ([Modulus.ExpVarTime]) branch on the exponent
// and must only be given public exponents.
//
// # The limb kernel
//
// The two hot loops (montMul and montSqr) live alone in kernel.go and
// kernel_generic.go so that an assembly version (MULX/ADX, AVX-512 IFMA)
// can replace them later. Building with the tag purego forces the pure-Go
// kernel even when an assembly one exists; today only the pure-Go one does.
//
// # How constant time is checked
//
// By construction (the rules above, reviewed against every function in
// this package), by a trace test (ct_test.go) that records the sequence of
// kernel calls and table lookups made by Exp for different secret
// exponents and bases of the same length and requires them to be
// identical, and by an opt-in statistical timing test in the dudect style
// (MODEXP_DUDECT=1) that compares run times of two classes of exponents.
// None of this proves the absence of leaks through the Go compiler or the
// CPU (e.g. a variable-latency multiplier); the kernel uses only
// bits.Mul64/bits.Add64/bits.Sub64, which compile to MUL/ADC/SBB on amd64
// and arm64.
package mont
