//go:build amd64 && !purego

package mont

import "sync"

// batchASMFuncs are one generated 8-lane multiplication kernel and its
// lookup, one function a block of digits.
type batchASMFuncs struct {
	amm func(z, a, b, m, k0, t *uint64)
	ams func(z, a, m, k0 *uint64) // nil: no squaring kernel
	sel []func(out, table, idx *uint64)
}

// batchASMKernels returns the 8-lane assembly kernels for L digits as
// slab functions (word offsets), if there are some.
func batchASMKernels(L int) (batchAMMFunc, batchSelFunc, bool) {
	if !haveIFMA {
		return nil, nil, false
	}
	f, ok := batchSlabKernels()[L]
	return f.amm, f.sel, ok
}

// batchASMSquare returns the 8-lane assembly squaring kernel for L
// digits as a slab function, or nil where there is none.
func batchASMSquare(L int) batchAMSFunc {
	if !haveIFMA {
		return nil
	}
	return batchSlabKernels()[L].ams
}

// batchSlab are one batch kernel's slab functions.
type batchSlab struct {
	amm batchAMMFunc
	ams batchAMSFunc // nil: none
	sel batchSelFunc
}

// batchSlabKernels are the slab functions of every kernel of batchASM,
// made on first use, so that a batch allocates none.
var batchSlabKernels = sync.OnceValue(func() map[int]batchSlab {
	m := make(map[int]batchSlab, len(batchASM))
	for L, f := range batchASM {
		N := BatchLanes * L
		var ams batchAMSFunc
		if f.ams != nil {
			ams = func(s []uint64, z, a, m, k0 int) {
				_, _, _, _ = s[z+N-1], s[a+N-1], s[m+N-1], s[k0+BatchLanes-1]
				f.ams(&s[z], &s[a], &s[m], &s[k0])
			}
		}
		m[L] = batchSlab{
			ams: ams,
			amm: func(s []uint64, z, a, b, m, k0, t int) {
				_, _, _, _, _, _ = s[z+N-1], s[a+N-1], s[b+N-1], s[m+N-1], s[k0+BatchLanes-1], s[t+N-1]
				f.amm(&s[z], &s[a], &s[b], &s[m], &s[k0], &s[t])
			},
			sel: func(s []uint64, out, table, idx int) {
				_, _, _ = s[out+N-1], s[table+ifmaEntries*N-1], s[idx+BatchLanes-1]
				for _, f := range f.sel {
					f(&s[out], &s[table], &s[idx])
				}
			},
		}
	}
	return m
})
