//go:build !amd64 || purego

package mont

// haveASM is false: no assembly kernel for this architecture, or the
// package was built with the tag purego.
const haveASM = false

// montMulASM is never called when haveASM is false.
func montMulASM(z, x, y, n []uint64, n0inv uint64, t []uint64) {
	panic("mont: no assembly kernel in this build")
}

// montSqrASM is never called when haveASM is false.
func montSqrASM(z, x, n []uint64, n0inv uint64, t []uint64) {
	panic("mont: no assembly kernel in this build")
}

// haveAVX2 is false without the assembly kernel.
const haveAVX2 = false

// tableSelectASM is never called when haveASM is false.
func tableSelectASM(out, table []uint64, k, entries int, idx uint64) {
	panic("mont: no assembly kernel in this build")
}

// useFixed has no effect without the assembly kernel.
var useFixed = true

// haveIFMA is false without the assembly kernels.
const haveIFMA = false

// ifmaNeeds names what the IFMA kernel needs, for messages.
func ifmaNeeds() string {
	if PureGo {
		return "a build without the purego tag"
	}
	return "amd64 with avx512ifma"
}

// adxNeeds names what the MULX/ADX kernel needs, for messages.
func adxNeeds() string {
	if PureGo {
		return "a build without the purego tag"
	}
	return "amd64 with bmi2 and adx"
}

// cpuFeatures lists no feature: no kernel here uses any.
func cpuFeatures() []string { return nil }

// ifmaASMKernels: no assembly kernels in this build.
func ifmaASMKernels(L, C int) (ammFunc, selFunc, bool) { return nil, nil, false }

// ifmaASMKernelsW: no assembly kernels in this build.
func ifmaASMKernelsW(L, C, W int) (ammFunc, selFunc, bool) { return nil, nil, false }

// batchASMKernels: no assembly kernels in this build.
func batchASMKernels(L int) (batchAMMFunc, batchSelFunc, bool) { return nil, nil, false }

// batchASMSquare: no assembly kernels in this build.
func batchASMSquare(L int) batchAMSFunc { return nil }
