//go:build !amd64 || purego

package mont

// montMulRowsASM is never called when haveASM is false.
func montMulRowsASM(z, x, y, n []uint64, n0inv uint64, t []uint64) {
	panic("mont: no assembly kernel in this build")
}

// montSqrRowsASM is never called when haveASM is false.
func montSqrRowsASM(z, x, n []uint64, n0inv uint64, t []uint64) {
	panic("mont: no assembly kernel in this build")
}
