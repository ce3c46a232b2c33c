// Package ec is the elliptic-curve arithmetic of the token: the curves
// P-192, P-224, P-256, P-384, P-521 and secp256k1, scalar multiplication for the software
// engine, the ECDSA signing equation and signature verification. It is used
// by engine/backend/soft (k·G and k·Q for engine.ECEngine) and engine/alg/ecdsa.
//
// It must never print, never use math/big or any other variable-time code
// on a secret, and never return the point at infinity as a result.
//
// # API
//
// A [Curve] is found by name ([CurveByName]: "P-192", "P-224", "P-256", "P-384",
// "P-521", "secp256k1", plus SEC/ANSI aliases) or by the DER of its named-curve OID
// ([CurveByOID], the form of PKCS#11's CKA_EC_PARAMS; [Curve.OID] gives it
// back). Points are affine, big-endian coordinates of [Curve.ByteLen] bytes;
// scalars are big-endian. Every input point is validated (coordinates < p,
// on the curve; the point at infinity has no affine form and so is never
// accepted). [Curve.Marshal], [Curve.Unmarshal] (uncompressed and
// compressed SEC 1) and [Curve.MarshalECPoint]/[Curve.UnmarshalECPoint]
// (the DER OCTET STRING of CKA_EC_POINT) convert encodings.
//
// # Arithmetic
//
// Field elements are fixed-size little-endian limb arrays, one type per size:
// [4]uint64 for P-192, P-224, P-256 and secp256k1, [6]uint64 for P-384, [9]uint64
// for P-521 (P-192, P-224 and secp256k1 take the generic four-limb Montgomery code:
// any odd modulus below 2²⁵⁶ works; P-224's p ≡ 1 mod 4, so its compressed
// points decompress by Tonelli–Shanks, on public data). The code is written once with generics over those array types; Go
// compiles each array length separately, so loop bounds are constants. The
// field (mod p) and the scalars (mod n) both use Montgomery arithmetic
// (CIOS products built on math/bits, fully unrolled for four and six limbs
// by gen_mul.go, with dedicated four-limb squarings and a reduction
// specialised to the P-256 prime: −p⁻¹ ≡ 1 mod 2⁶⁴ and two of its words
// need no product). On amd64 CPUs with BMI2 and ADX the four-limb products
// and squarings are assembly (mul_amd64.s, written by gen_asm.go: MULX
// with the two carry chains of ADCX/ADOX, straight-line, the final
// subtraction by CMOV), chosen at run time; the purego build tag or another
// CPU keeps the Go code, and TestMulASM compares the two. The nine-limb
// products are assembly too: for the P-521 prime a full 18-word product
// (and a squaring with the 36 cross products doubled) reduced by shifts,
// since 2⁵⁷⁶ ≡ 2⁵⁵ mod 2⁵²¹ − 1 (montMulP521ADX, montSqrP521ADX), and for
// the P-521 order the product followed by nine Montgomery rows
// (montMul9ADX); TestMul9ASM checks them against math/big. Nine-limb
// addition and subtraction are unrolled (field_p521.go), with a mask-only
// reduction for 2⁵²¹ − 1. Constant-time inversion modulo a four-limb
// modulus (the P-256 prime and order, P-224, P-192, secp256k1) is Bernstein
// and Yang's divsteps in libsecp256k1's form (safegcd.go: 590 divsteps in
// ten batches of 59, masks only, then two 2×2 matrix updates of 62-bit
// signed limbs per batch; 2.0 µs of CPU against 5.1 µs for the P-256
// order's addition chain it replaced), modulo the P-521 prime by a fixed
// addition chain (524 squarings, 13 products), else Fermat's x^(m−2)
// with a sliding window over the public exponent; the verification inverts s (public) with a variable-time
// binary extended Euclid, unless the signer hands it s⁻¹
// (ECDSASignatureInverse inverts k·(e + r·d) once for both k⁻¹ and s⁻¹;
// PublicKey.ECDSAVerifyInverseVarTime checks s·s⁻¹ ≡ 1 first). math/big is used only to derive constants and
// in tests.
//
// Points are projective (X:Y:Z) and added with the complete formulas of
// Renes, Costello and Batina (2016): algorithms 4–6 for a = −3 (NIST
// curves), 7–9 for a = 0 (secp256k1). Complete formulas have no exceptional
// case (P + P, P + (−P), the identity), so no branch is needed on any point.
//
//   - ScalarBaseMult: k is recoded into signed 6-bit digits (Booth, digits
//     in [−32, 32]); a comb table of the generator (row i holds j·64^i·G,
//     j = 1..32, affine; built once, on first use, with one batched
//     inversion) gives k·G as one mixed addition per digit, no doubling
//     (43 additions for the 256-bit curves; each lookup reads the row's 32
//     entries, for four limbs with the selection kept in registers).
//   - ScalarMult: a 16-entry table of the point, then for each 4-bit window
//     from the top: four doublings and one complete addition.
//   - DoubleScalarMultVarTime (verification only; public scalars): wNAF
//     (width 7 for G from a precomputed table, width 5 for the point)
//     interleaved in one doubling chain, in Jacobian coordinates with the
//     cheaper incomplete formulas (their exceptional cases are branches:
//     the data is public). A [PublicKey] can instead keep a signed 6-bit
//     comb table of its point (5-bit for P-521) and use a signed 8-bit comb
//     table of G, so that verification is two table sums without doublings
//     (about three times faster; used by engine/alg/ecdsa to check each
//     signature before release).
//
// # Constant time
//
// For secret scalars (ScalarBaseMult, ScalarMult, ECDSASignature's k and d,
// IsValidScalar) the time and the memory addresses touched depend only on
// the curve and the lengths of the inputs:
//
//   - the schedule is fixed: every window is processed, a zero digit
//     included (its addition is computed and discarded with a masked
//     select), a negative digit negates the entry with a masked select, the
//     number of windows is fixed by the order's length;
//   - table lookups read every entry of the row and keep one with a masked
//     select (ctEq builds the mask without branching); the row read depends
//     on the window index only;
//   - field operations are straight-line: bits.Add64/Sub64/Mul64 carries,
//     final conditional subtractions and selections done with masks;
//   - scalars are reduced mod n with Montgomery multiplications (no
//     comparison loop), k⁻¹ mod n is x^(n−2) (the exponent is public);
//   - a result at infinity (k ≡ 0 mod n) is detected after the computation,
//     and reported as an error.
//
// What leaks, by design: input lengths; whether an input was rejected;
// everything about the inputs of the functions named VarTime (public
// data only). How it was checked: by construction and review of the rules
// above, and mechanically by TestConstantTimeTrace, which runs with the
// ecoptrace build tag (go test -tags ecoptrace ./engine/arith/ec): every field
// operation folds its kind into a trace, and the test requires the same
// trace (and count) for scalars 1, 2, n−1, n−2, n/2, 15, 16, 17 and random
// ones, for each constant-time routine and curve. It checks control flow at
// the level of field operations; the branch-free body of each field
// operation is checked by review (and by the fuzz targets for correctness).
//
// # Race detector
//
// The field operations (and the generated products) are marked
// //go:norace: they are pure functions of their operands on the caller's
// stack, and instrumenting every limb access made -race runs five times
// slower. Races in the callers are still seen.
//
// # Tests
//
// The arithmetic is compared with a plain math/big reference (textbook
// affine formulas, ref_test.go) and with crypto/ecdh and crypto/elliptic
// for the NIST curves; fuzz targets (FuzzFieldMul*, FuzzScalarMult,
// FuzzUnmarshalECPoint) keep a seed corpus in testdata/fuzz. ECDSA vectors
// (Wycheproof, RFC 6979) are checked in engine/alg/ecdsa.
package ec
