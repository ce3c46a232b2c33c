//go:build !purego

package mont

// montMulRowsASM is montMulASM always on the looped kernel (for tests and
// measurements).
func montMulRowsASM(z, x, y, n []uint64, n0inv uint64, t []uint64) {
	k := len(n)
	x = x[:k]
	y = y[:k]
	z = z[:k]
	s := t[:k+3]
	clear(s)
	montRowsADX(&z[0], &s[1], &x[0], &y[0], &n[0], k, n0inv)
}

// montSqrRowsASM is montSqrASM always on the looped kernel (for tests and
// measurements).
func montSqrRowsASM(z, x, n []uint64, n0inv uint64, t []uint64) {
	k := len(n)
	x = x[:k]
	z = z[:k]
	T := t[:2*k]
	clear(T)
	montSqrRowsADX(&z[0], &T[0], &x[0], &n[0], k, n0inv)
}
