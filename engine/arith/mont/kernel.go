package mont

// This file is the one place where the limb kernel is chosen: the
// MULX/ADCX/ADOX assembly kernel (kernel_amd64.s, with fully unrolled
// 16-, 24- and 32-limb versions generated into kernel_fixed_amd64.s) on
// amd64 CPUs with BMI2 and ADX, the pure-Go one (kernel_generic.go) everywhere else, or when the
// package is built with the tag purego, or when useASM is cleared.

// kernelTrace, when non-nil, receives one event per kernel call and table
// lookup. It is set only by the constant-time trace test, before any
// concurrent use, and costs one predictable branch per call otherwise.
var kernelTrace func(op byte)

// useASM selects the assembly kernel. It starts as haveASM (the CPU has
// what the kernel needs and the build allows it); tests clear it to run
// the pure-Go kernel on the same machine. It must not change while
// arithmetic runs.
var useASM = haveASM

// useIFMA selects the AVX-512 IFMA kernels (ifma.go) for the secret
// exponentiations of the sizes they handle; it is set by selectKernel
// (kernel_select.go) only where they run and passed their self-test, and
// implies useASM. It must not change while arithmetic runs.
var useIFMA = false

// Kernel names the limb kernel in use: "ifma" (radix-2^52 AVX-512 IFMA
// assembly for secret exponentiations of 1024-, 1536- and 2048-bit moduli,
// adx for the rest), "adx" (MULX/ADCX/ADOX assembly) or "purego".
func Kernel() string {
	settleKernels()
	return kernelName()
}

// kernelName is Kernel without settling the selection.
func kernelName() string {
	switch {
	case useIFMA:
		return "ifma"
	case useASM:
		return "adx"
	}
	return "purego"
}

// montMul sets z = x·y·R⁻¹ mod n, where R = 2^(64·len(n)). x and y must be
// below n (x may be any value below R if y < n); t is scratch of at least
// 2·len(n)+2 limbs. z may alias x or y but not t.
func montMul(z, x, y, n []uint64, n0inv uint64, t []uint64) {
	if kernelTrace != nil {
		kernelTrace('M')
	}
	if useASM {
		montMulASM(z, x, y, n, n0inv, t)
		return
	}
	montMulGeneric(z, x, y, n, n0inv, t)
}

// montSqr sets z = x²·R⁻¹ mod n for x < n; t as for montMul. z may alias x.
func montSqr(z, x, n []uint64, n0inv uint64, t []uint64) {
	if kernelTrace != nil {
		kernelTrace('S')
	}
	if useASM {
		montSqrASM(z, x, n, n0inv, t)
		return
	}
	if useSqr && len(n) >= sqrMinLimbs {
		montSqrGeneric(z, x, n, n0inv, t)
		return
	}
	montMulGeneric(z, x, x, n, n0inv, t)
}

// useSqr selects, for the pure-Go kernel, the dedicated squaring
// (k(k−1)/2 + k products and a separate reduction, against 2k² for CIOS)
// from sqrMinLimbs limbs. On the shared development machine CPU-time
// measurements (TestKernelCPUTime) could not separate it from CIOS beyond
// ±30% noise.
const (
	useSqr      = true
	sqrMinLimbs = 8
)
