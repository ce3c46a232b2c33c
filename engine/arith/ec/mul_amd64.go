//go:build amd64 && !purego

package ec

import "golang.org/x/sys/cpu"

//go:generate go run gen_asm.go

// haveADX reports whether the MULX/ADCX/ADOX products of mul_amd64.s can
// run here (BMI2 and ADX); otherwise the pure-Go products are used.
var haveADX = cpu.X86.HasADX && cpu.X86.HasBMI2

// montMul4ADX is montMul4 in assembly (mul_amd64.s): constant time,
// straight-line.
//
//go:noescape
func montMul4ADX(z, x, y, m *[4]uint64, m0inv uint64)

// montMulP256ADX is montMulP256 in assembly (mul_amd64.s); m is the P-256
// prime.
//
//go:noescape
func montMulP256ADX(z, x, y, m *[4]uint64)

// montSqr4ADX sets z = x²·2^-256 mod m (x < m) in assembly.
//
//go:noescape
func montSqr4ADX(z, x, m *[4]uint64, m0inv uint64)

// montSqrP256ADX is montSqr4ADX for the P-256 prime.
//
//go:noescape
func montSqrP256ADX(z, x, m *[4]uint64)

// mul9ADX sets z to the full 18-word product x·y in assembly
// (mul_amd64.s): straight-line, no reduction.
//
//go:noescape
func mul9ADX(z *[18]uint64, x, y *[9]uint64)

// montMulP521ADX is montMulP521 in assembly (mul_amd64.s): the product
// of mul9ADX, then the shift-and-add reduction of foldP521. Constant time,
// straight-line; z may alias x or y.
//
//go:noescape
func montMulP521ADX(z, x, y *[9]uint64)

// montMul9ADX sets z = x·y·2⁻⁵⁷⁶ mod m in assembly (mul_amd64.s): the
// product of mul9ADX, then the rows of redc9. Constant time,
// straight-line; z may alias x or y.
//
//go:noescape
func montMul9ADX(z, x, y, m *[9]uint64, m0inv uint64)

// montSqrP521ADX is montMulP521ADX(z, x, x) with the 36 cross products
// computed once and doubled (45 MULX instead of 81).
//
//go:noescape
func montSqrP521ADX(z, x *[9]uint64)
