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
