//go:build amd64 && !purego

package mont

// batchASMFuncs are one generated 8-lane multiplication kernel and its
// lookup, one function a block of digits.
type batchASMFuncs struct {
	amm func(z, a, b, m, k0, t *uint64)
	sel []func(out, table, idx *uint64)
}

// batchASMKernels returns the 8-lane assembly kernels for L digits as
// slab functions (word offsets), if there are some.
func batchASMKernels(L int) (batchAMMFunc, batchSelFunc, bool) {
	f, ok := batchASM[L]
	if !ok || !haveIFMA {
		return nil, nil, false
	}
	N := BatchLanes * L
	amm := func(s []uint64, z, a, b, m, k0, t int) {
		_, _, _, _, _, _ = s[z+N-1], s[a+N-1], s[b+N-1], s[m+N-1], s[k0+BatchLanes-1], s[t+N-1]
		f.amm(&s[z], &s[a], &s[b], &s[m], &s[k0], &s[t])
	}
	sel := func(s []uint64, out, table, idx int) {
		_, _, _ = s[out+N-1], s[table+ifmaEntries*N-1], s[idx+BatchLanes-1]
		for _, f := range f.sel {
			f(&s[out], &s[table], &s[idx])
		}
	}
	return amm, sel, true
}
