package mont

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"os"
	"slices"
	"sync"
)

// KernelInfo describes the limb-kernel selection made when the package
// was loaded.
type KernelInfo struct {
	// Name is the kernel in use: "ifma" (AVX-512 IFMA, radix 2^52, for
	// the secret exponentiations of 1024-, 1536- and 2048-bit moduli;
	// everything else on adx), "adx" (MULX/ADCX/ADOX) or "purego".
	Name string
	// Requested is MODEXP_KERNEL: "auto" (the default), "ifma", "adx" or
	// "purego".
	Requested string
	// CPU lists the CPU features seen that the kernels use.
	CPU []string
	// Err is not nil when the requested kernel cannot run here (the CPU
	// or the build lacks it, or it failed its self-test) or the request
	// is not a kernel name; Name is then the best kernel that can.
	Err error
	// Notes says why a faster kernel is not in use (e.g. a failed
	// self-test under auto).
	Notes []string
}

// ErrKernel: the kernel requested with MODEXP_KERNEL cannot run.
var ErrKernel = errors.New("mont: requested kernel unavailable")

var (
	kernelInfo KernelInfo
	kernelReq  string
	kernelOnce sync.Once
)

// init reads MODEXP_KERNEL and settles useASM, which costs nothing; the
// IFMA self-test waits for settleKernels.
func init() {
	kernelReq = os.Getenv("MODEXP_KERNEL")
	useASM = haveASM && kernelReq != "purego"
}

// settleKernels makes the whole selection, with the IFMA self-test, once:
// at the first use that could take an IFMA path (NewModulus, Kernel,
// Kernels, Batching), not at program start, so a process that does no
// modular exponentiation (a forked worker serving EC keys, most CLI
// commands) never pays it (3.6 ms and 0.77 MB at a worker's first call,
// GODEBUG=inittrace=1). Every arithmetic function takes a *Modulus, so
// it runs after its NewModulus and sees the settled kernels.
func settleKernels() {
	kernelOnce.Do(func() { kernelInfo = selectKernel(kernelReq) })
}

// Kernels reports the kernel selection (see KernelInfo).
func Kernels() KernelInfo {
	settleKernels()
	ki := kernelInfo
	ki.CPU = slices.Clone(ki.CPU)
	ki.Notes = slices.Clone(ki.Notes)
	ki.Name = Kernel()
	return ki
}

// selectKernel sets useASM and useIFMA for the request (MODEXP_KERNEL)
// and returns what it chose. The IFMA kernel is used only after its
// self-test passes.
func selectKernel(req string) KernelInfo {
	if req == "" {
		req = "auto"
	}
	ki := KernelInfo{Requested: req, CPU: cpuFeatures()}
	var ifmaErr error
	switch {
	case !haveIFMA:
		ifmaErr = fmt.Errorf("ifma kernel needs %s", ifmaNeeds())
	default:
		if err := ifmaCheck(); err != nil {
			ifmaErr = fmt.Errorf("ifma kernel failed its self-test, not used: %w", err)
			ki.Notes = append(ki.Notes, ifmaErr.Error())
		}
	}
	adxErr := error(nil)
	if !haveASM {
		adxErr = fmt.Errorf("adx kernel needs %s", adxNeeds())
	}
	useIFMA = false
	asm := haveASM
	switch req {
	case "auto":
		useIFMA = ifmaErr == nil
	case "ifma":
		useIFMA = ifmaErr == nil
		if ifmaErr != nil {
			ki.Err = fmt.Errorf("MODEXP_KERNEL=ifma: %w (%w)", ifmaErr, ErrKernel)
		}
	case "adx":
		if adxErr != nil {
			ki.Err = fmt.Errorf("MODEXP_KERNEL=adx: %w (%w)", adxErr, ErrKernel)
		}
	case "purego":
		asm = false
	default:
		ki.Err = fmt.Errorf("MODEXP_KERNEL=%q: not auto, ifma, adx or purego (%w)", req, ErrKernel)
		useIFMA = ifmaErr == nil
	}
	if useASM != asm { // init set it already: no write while others read
		useASM = asm
	}
	ki.Name = kernelName()
	return ki
}

// ifmaCheck is the IFMA self-test selectKernel runs (tests replace it to
// see a failing kernel refused).
var ifmaCheck = ifmaSelfTest

// ifmaSelfTest compares the IFMA kernels in use with the Go model on
// fixed pseudo-random operands (every digit count, one and two chains,
// chained products, table lookups of the first, a middle and the last
// entry), the same for the 8-lane batch kernels (batchSelfTest), then
// one exponentiation with math/big. About a millisecond, at
// every program start; the tests compare every generated kernel.
func ifmaSelfTest() error {
	rng := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return rng
	}
	for _, L := range slices.Sorted(maps.Values(ifmaShape)) {
		for _, C := range []int{1, 2} {
			W := ifmaWidth[L]
			amm, sel, ok := ifmaASMKernelsW(L, C, W)
			if !ok {
				if C > 1 {
					continue // no pairs at this size
				}
				return fmt.Errorf("no kernel for %d digits, %d chains, %d lanes", L, C, W)
			}
			ramm, rsel := refKernels(L, C)
			CL := C * L
			// s: a | b | m | k0 | z (kernel) | z (model) | table | out | out | idx
			s := make([]uint64, 5*CL+C+ifmaEntries*CL+2*CL+C)
			a, b, m, k0 := 0, CL, 2*CL, 3*CL
			z1, z2 := 3*CL+C, 4*CL+C
			for c := 0; c < C; c++ {
				o := c * L
				for i := 0; i < L; i++ {
					s[m+o+i] = next() & mask52
				}
				s[m+o] |= 1
				s[m+o+L-1] = s[m+o+L-1]>>3 | 1<<48 // 4m ≤ 2^(52L)
				for i := 0; i < L; i++ {
					s[a+o+i] = next() & mask52
					s[b+o+i] = next() & mask52
				}
				s[a+o+L-1] = s[m+o+L-1] - 1 // a, b < m
				s[b+o+L-1] = s[m+o+L-1] >> 1
				inv := s[m+o]
				for range 6 {
					inv *= 2 - s[m+o]*inv
				}
				s[k0+c] = -inv & mask52
			}
			for it := 0; it < 4; it++ {
				amm(s, z1, a, b, m, k0)
				ramm(s, z2, a, b, m, k0)
				if !slices.Equal(s[z1:z1+CL], s[z2:z2+CL]) {
					return fmt.Errorf("%d digits, %d chains, %d lanes: product %d differs from the model", L, C, W, it)
				}
				copy(s[b:b+CL], s[a:a+CL])
				copy(s[a:a+CL], s[z1:z1+CL])
			}
			table, out1, out2, idx := 5*CL+C, 5*CL+C+ifmaEntries*CL, 6*CL+C+ifmaEntries*CL, 7*CL+C+ifmaEntries*CL
			for i := 0; i < ifmaEntries*CL; i++ {
				s[table+i] = next()
			}
			for _, j := range []int{0, 13, ifmaEntries - 1} {
				for c := 0; c < C; c++ {
					s[idx+c] = uint64((j + 7*c) % ifmaEntries)
				}
				sel(s, out1, table, idx)
				rsel(s, out2, table, idx)
				if !slices.Equal(s[out1:out1+CL], s[out2:out2+CL]) {
					return fmt.Errorf("%d digits, %d chains, %d lanes: table lookup %d differs from the model", L, C, W, j)
				}
			}
		}
	}
	if err := batchSelfTest(next); err != nil {
		return err
	}
	// One exponentiation, 1024-bit modulus, against math/big.
	nb := make([]byte, 128)
	for i := range nb {
		nb[i] = byte(next())
	}
	nb[0] |= 0x80
	nb[127] |= 1
	mod, err := newModulus(nb)
	if err != nil {
		return err
	}
	n := new(big.Int).SetBytes(nb)
	xb := new(big.Int).Rsh(n, 3)
	e := []byte{0xc3, 0x5a, 0x01, 0xff, 0x80, 0x00, 0x7e, 0x11, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01}
	x := make([]uint64, mod.Limbs())
	SetBytes(x, xb.Bytes())
	z := make([]uint64, mod.Limbs())
	amm, sel, _ := ifmaASMKernels(mod.l52, 1)
	expIFMA([]*Modulus{mod}, [][]uint64{z}, [][]uint64{x}, [][]byte{e}, amm, sel)
	want := new(big.Int).Exp(xb, new(big.Int).SetBytes(e), n)
	got := make([]byte, 128)
	FillBytes(got, z)
	if new(big.Int).SetBytes(got).Cmp(want) != 0 {
		return errors.New("1024-bit exponentiation differs from math/big")
	}
	return nil
}
