// Package mont is the constant-time Montgomery arithmetic shared by the
// software engine (engine/backend/soft) and the RSA layer (engine/alg/rsa): numbers as
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
//     entry on each lookup, keeping the wanted one with a mask. The
//     exponent is processed over exactly its byte length, leading zero
//     bytes included: callers give a secret exponent at a length that
//     does not depend on its value, as Go's bigmod does.
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
// The hot loops (Montgomery multiplication and squaring, and the window
// table lookup) are chosen in kernel.go. On amd64 CPUs with BMI2 and ADX
// (golang.org/x/sys/cpu) the assembly kernel in kernel_amd64.s runs them:
// multiplication row by row, each row two passes over the accumulator
// (t += x_i·y, then t = (t + m·n)/2⁶⁴) in which MULX leaves the flags alone
// and ADCX and ADOX carry the low and the high halves of the products on
// two independent chains (CF and OF); squaring with each off-diagonal
// product computed once, doubled and added to the diagonal squares in one
// pass (doubling on CF, squares on OF), then reduced; loops unrolled by
// eight columns and driven by LEAQ/JCXZ, which leave the flags alone; and,
// with AVX2, a table lookup that ANDs every entry with a broadcast mask.
// Any limb count works (a remainder loop follows the unrolled blocks). The
// final conditional subtraction is the same masked Go code for both
// kernels. Everywhere else, or when built with the tag purego, or when the
// package variable useASM is cleared (the tests run both kernels on every
// machine and compare them with math/big), the pure-Go kernel of
// kernel_generic.go runs. [Kernel] names the kernel in use.
//
// # The IFMA kernel
//
// On CPUs with AVX-512 IFMA, secret exponentiations ([Modulus.Exp], and
// [ExpPair] for the two CRT halves of an RSA private operation) modulo
// 1024-, 1536- and 2048-bit numbers run in radix 2^52 (ifma.go): 20, 32
// or 40 digits of 52 bits in 64-bit lanes of YMM registers (ZMM kernels
// are generated and tested too; the YMM ones are faster on AMD Zen 4), Almost
// Montgomery Multiplication with VPMADD52LUQ/VPMADD52HUQ (results below
// 2n, no subtraction between multiplications), column 0 kept exactly in
// a general-purpose register, digits normalised after each product with
// a carry-lookahead on compare masks; ExpPair runs the two
// exponentiations with their instructions interleaved, which hides the
// multiplier latency. The kernels are generated with a Go emulation of
// the same instruction sequence by gen_ifma_amd64.go; the tests run the
// emulation and a pure-Go model (ammRef) against math/big on every
// machine, and the hardware against both where it exists (make
// test-ifma). The kernel is chosen when the package loads
// (kernel_select.go): MODEXP_KERNEL=auto|ifma|adx|purego, the IFMA kernel
// only after its known-answer self-test passes; [Kernels] reports the
// choice, the CPU features seen and, when a forced kernel cannot run,
// the error (the software engine then refuses to open).
//
// # The 8-lane batch kernel
//
// [ExpBatch] runs up to [BatchLanes] secret exponentiations at once, each
// with its own modulus, base and exponent, one in each 64-bit lane of the
// ZMM registers (ifma8.go, kernel_ifma8_amd64.s from gen_ifma8_amd64.go):
// numbers digit-major (digit i of all lanes in one register's worth of
// words), the same Almost Montgomery Multiplication as ammRef in every
// lane (20, 30, 40, 60 and 80 digits: the CRT halves of RSA-2048, -3072
// and -4096 and the DSA and DH moduli up to 4096 bits), the accumulator
// in rotating registers up to 30 digits and in memory beyond, and a
// lookup that keeps each lane's entry under a compare mask on that lane's
// index. At 20 digits the squarings have a kernel of their own (ams8x20:
// the cross products a_i·a_j, i < j, summed by column apart from the
// accumulator and doubled once, 1,240 multiply-adds where the
// multiplication has 1,620; the same digits as amm8x20 on a·a). Every
// lane runs the same instructions on the same addresses; windows of 5
// bits over the longest exponent. It is the batched path's
// kernel (engine/soft gathers the operations in flight); the tests
// compare the model, the emulated instructions and the assembly digit
// for digit and with math/big, record the emulator's memory addresses
// for lanes of different secrets (TestBatchTraceIndependentOfSecrets)
// and check the assembly like the other IFMA kernels.
//
// # How constant time is checked
//
// By construction (the rules above, reviewed against every function in
// this package), by a trace test (ct_test.go) that records the sequence of
// kernel calls and table lookups made by Exp for different secret
// exponents and bases of the same length and requires them to be
// identical, and by an opt-in statistical timing test in the dudect style
// (MODEXP_DUDECT=1) that compares run times of two classes of exponents.
// The trace test runs on the IFMA path too (its Go model and emulation on
// every machine, the assembly where the CPU has it); the IFMA kernels use
// only multiplies, adds, shifts, logic, lane moves, compares into mask
// registers and blends, with no branch or address depending on values,
// which TestIFMAKernelsConstantTimeByConstruction checks on the generated
// assembly instruction by instruction (valgrind cannot run AVX-512).
// The assembly kernel adds one check: run under valgrind's callgrind
// (TestExpForInstructionCount), the instructions executed by each kernel
// function during a 1024-bit Exp are the same, to the instruction, for
// zero, all-ones and random exponents and zero, one and random bases. None
// of this proves the absence of leaks through the Go compiler or the CPU
// (e.g. a variable-latency multiplier); the kernels use only
// MUL/MULX/ADC/ADCX/ADOX/SBB, masks and full-table reads.
package mont
