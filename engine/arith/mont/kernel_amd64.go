//go:build amd64 && !purego

package mont

//go:generate go run gen_fixed_amd64.go
//go:generate go run gen_ifma_amd64.go gen_ifma8_amd64.go

import (
	"sync"

	"golang.org/x/sys/cpu"
)

// haveIFMA reports whether the radix-2^52 kernels of kernel_ifma_amd64.s
// can run here: AVX-512 F (with the OS saving the registers), IFMA, VL,
// DQ (KMOVB), and the MULX/ADX kernel for everything else.
var haveIFMA = cpu.X86.HasAVX512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512IFMA &&
	cpu.X86.HasAVX512VL && cpu.X86.HasAVX512DQ && haveASM

// ifmaNeeds names what the IFMA kernel needs, for messages.
func ifmaNeeds() string {
	return "a CPU with avx512f, avx512ifma, avx512vl, avx512dq, bmi2 and adx (and an OS that enables AVX-512)"
}

// adxNeeds names what the MULX/ADX kernel needs, for messages.
func adxNeeds() string { return "a CPU with bmi2 and adx" }

// cpuFeatures lists the features seen that the kernels use.
func cpuFeatures() []string {
	var f []string
	for _, c := range []struct {
		name string
		on   bool
	}{
		{"bmi2", cpu.X86.HasBMI2}, {"adx", cpu.X86.HasADX}, {"avx2", cpu.X86.HasAVX2},
		{"avx512f", cpu.X86.HasAVX512F}, {"avx512dq", cpu.X86.HasAVX512DQ},
		{"avx512vl", cpu.X86.HasAVX512VL}, {"avx512ifma", cpu.X86.HasAVX512IFMA},
	} {
		if c.on {
			f = append(f, c.name)
		}
	}
	return f
}

// ifmaASMFuncs are one generated multiplication kernel and its lookup.
type ifmaASMFuncs struct {
	amm func(z, a, b, m, k0 *uint64)
	sel func(out, table, idx *uint64)
}

// ifmaASMKernels returns the assembly kernels for C chains of L digits,
// in registers of the width chosen for L (ifmaWidth), as slab functions
// (word offsets), if there are some.
func ifmaASMKernels(L, C int) (ammFunc, selFunc, bool) {
	return ifmaASMKernelsW(L, C, ifmaWidth[L])
}

// ifmaASMKernelsW is ifmaASMKernels for registers of W lanes. The slab
// functions are made once per kernel (ifmaSlabKernels): an exponentiation
// that asks for them allocates nothing.
func ifmaASMKernelsW(L, C, W int) (ammFunc, selFunc, bool) {
	f, ok := ifmaSlabKernels()[[3]int{L, C, W}]
	return f.amm, f.sel, ok
}

// slabKernels are one kernel's slab functions.
type slabKernels struct {
	amm ammFunc
	sel selFunc
}

// ifmaSlabKernels are the slab functions of every kernel of ifmaASM, by
// the same key, made on first use.
var ifmaSlabKernels = sync.OnceValue(func() map[[3]int]slabKernels {
	m := make(map[[3]int]slabKernels, len(ifmaASM))
	for key, f := range ifmaASM {
		L, C := key[0], key[1]
		CL := C * L
		m[key] = slabKernels{
			amm: func(s []uint64, z, a, b, m, k0 int) {
				_, _, _, _, _ = s[z+CL-1], s[a+CL-1], s[b+CL-1], s[m+CL-1], s[k0+C-1]
				f.amm(&s[z], &s[a], &s[b], &s[m], &s[k0])
			},
			sel: func(s []uint64, out, table, idx int) {
				_, _, _ = s[out+CL-1], s[table+ifmaEntries*CL-1], s[idx+C-1]
				f.sel(&s[out], &s[table], &s[idx])
			},
		}
	}
	return m
})

// haveASM reports whether the MULX/ADCX/ADOX kernel can run here: it needs
// BMI2 (MULX) and ADX (ADCX, ADOX).
var haveASM = cpu.X86.HasADX && cpu.X86.HasBMI2

// haveAVX2 reports whether tableSelectAVX2 can run here.
var haveAVX2 = cpu.X86.HasAVX2

// tableSelectAVX2 is in kernel_amd64.s.
//
//go:noescape
func tableSelectAVX2(out, table *uint64, k, entries int, idx uint64)

// tableSelectASM is tableSelectGeneric with 256-bit masked loads when the
// CPU has AVX2 and k is a multiple of 4.
func tableSelectASM(out, table []uint64, k, entries int, idx uint64) {
	if !haveAVX2 || k%4 != 0 {
		tableSelectGeneric(out, table, k, entries, idx)
		return
	}
	out = out[:k]
	table = table[:entries*k]
	tableSelectAVX2(&out[0], &table[0], k, entries, idx)
}

// montRowsADX and montSqrRowsADX are in kernel_amd64.s.
//
//go:noescape
func montRowsADX(z, t, x, y, n *uint64, k int, n0inv uint64)

//go:noescape
func montSqrRowsADX(z, T, x, n *uint64, k int, n0inv uint64)

// montMulASM is montMulGeneric on the assembly kernel: the k rows, then
// the masked final subtraction, all in assembly; fully unrolled for the
// limb counts of kernel_fixed_amd64.s (16, 24, 32), the looped kernel for
// the others. The choice depends on k only (public).
func montMulASM(z, x, y, n []uint64, n0inv uint64, t []uint64) {
	k := len(n)
	x = x[:k]
	y = y[:k]
	z = z[:k]
	s := t[:k+3] // s[0] is the dummy word the kernel may write below t
	clear(s)
	if !useFixed || !montMulFixed(&z[0], &s[1], &x[0], &y[0], &n[0], k, n0inv) {
		montRowsADX(&z[0], &s[1], &x[0], &y[0], &n[0], k, n0inv)
	}
}

// useFixed selects the unrolled kernels of kernel_fixed_amd64.s where one
// exists for the limb count; tests clear it to measure the looped kernel
// alone. It must not change while arithmetic runs.
var useFixed = true

// montSqrASM is montSqrGeneric on the assembly kernel: the square with
// each off-diagonal product computed once, then a separate Montgomery
// reduction, then the masked final subtraction, all in assembly; fully
// unrolled for the limb counts of kernel_fixed_amd64.s, looped otherwise.
func montSqrASM(z, x, n []uint64, n0inv uint64, t []uint64) {
	k := len(n)
	x = x[:k]
	z = z[:k]
	T := t[:2*k]
	if useFixed && montSqrFixed(&z[0], &T[0], &x[0], &n[0], k, n0inv) {
		return // the unrolled kernels do not need T cleared
	}
	clear(T)
	montSqrRowsADX(&z[0], &T[0], &x[0], &n[0], k, n0inv)
}
