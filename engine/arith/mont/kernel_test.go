package mont

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// kernelCase is one limb kernel the package can run on this machine.
type kernelCase struct {
	name string
	mul  func(z, x, y, n []uint64, n0inv uint64, t []uint64)
	sqr  func(z, x, n []uint64, n0inv uint64, t []uint64)
}

// kernels lists the pure-Go kernel and, where the CPU and build allow it,
// the assembly kernel (unrolled for 16, 24 and 32 limbs) and its looped
// form at every size, so that every test compares both with math/big.
func kernels() []kernelCase {
	ks := []kernelCase{{"purego", montMulGeneric, montSqrGeneric}}
	if haveASM {
		ks = append(ks, kernelCase{"adx", montMulASM, montSqrASM},
			kernelCase{"adx-rows", montMulRowsASM, montSqrRowsASM})
	}
	return ks
}

// expKernels are the kernel configurations the exponentiation tests run
// on every machine: purego, adx and ifma (skipped, with the missing
// feature named, where the CPU or build lacks them), and the IFMA driver
// on the Go model and on the emulator of the generated instructions.
var expKernels = []string{"purego", "adx", "ifma", "ifma-model", "ifma-emu"}

// withKernel runs f with the named kernel configuration (expKernels)
// selected, restoring the previous one afterwards. Not for parallel tests.
func withKernel(t testing.TB, name string, f func()) {
	t.Helper()
	oldASM, oldIFMA, oldFor, oldBatch, oldSquare := useASM, useIFMA, ifmaKernelsFor, batchKernelsFor, batchSquareFor
	defer func() {
		useASM, useIFMA, ifmaKernelsFor, batchKernelsFor, batchSquareFor = oldASM, oldIFMA, oldFor, oldBatch, oldSquare
	}()
	switch name {
	case "purego":
		useASM, useIFMA = false, false
	case "adx":
		if !haveASM {
			t.Skipf("adx kernel not tested here: it needs %s", adxNeeds())
		}
		useASM, useIFMA = true, false
	case "ifma":
		skipWithoutIFMA(t)
		useASM, useIFMA = true, true
	case "ifma-model", "ifma-emu":
		useASM, useIFMA = haveASM, true
		if name == "ifma-model" {
			ifmaKernelsFor = func(L, C int) (ammFunc, selFunc, bool) {
				a, s := refKernels(L, C)
				return a, s, true
			}
			batchKernelsFor = func(L int) (batchAMMFunc, batchSelFunc, bool) {
				a, s := refBatchKernels(L)
				return a, s, true
			}
			batchSquareFor = func(int) batchAMSFunc { return nil }
		} else {
			ifmaKernelsFor, batchKernelsFor, batchSquareFor = emuKernels, batchEmuKernels, batchEmuSquare
		}
	default:
		t.Fatalf("unknown kernel configuration %q", name)
	}
	f()
}

// TestKernelsAgree compares every kernel with math/big and with each other
// on every limb count from 1 to 40 (the assembly unrolls by eight, so all
// remainders are covered) and on operands that stress the carries.
func TestKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for k := 1; k <= 40; k++ {
		for it := 0; it < 8; it++ {
			var n *big.Int
			switch it {
			case 0: // all ones
				n = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(64*k)), big.NewInt(1))
			case 1: // 2^(64k−1) + 1: small top limb pattern
				n = new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(64*k-1)), big.NewInt(1))
			default:
				n = randop.Odd(r, 64*k-r.IntN(63))
			}
			m := mustModulus(t, n)
			nm1 := new(big.Int).Sub(n, big.NewInt(1))
			R := new(big.Int).Lsh(big.NewInt(1), uint(64*m.Limbs()))
			Rinv := new(big.Int).ModInverse(R, n)
			xs := []*big.Int{nm1, new(big.Int).Mod(randop.Bits(r, 64*k), n), big.NewInt(0)}
			ys := []*big.Int{nm1, new(big.Int).Mod(randop.Bits(r, 64*k), n), big.NewInt(1)}
			for _, x := range xs {
				for _, y := range ys {
					want := new(big.Int).Mul(x, y)
					want.Mul(want, Rinv).Mod(want, n)
					for _, kc := range kernels() {
						z := make([]uint64, m.Limbs())
						tt := make([]uint64, m.ScratchLen())
						for i := range tt {
							tt[i] = ^uint64(0) // dirty scratch must not matter
						}
						kc.mul(z, natOf(m, x), natOf(m, y), m.n, m.n0inv, tt)
						if got := bigOf(z); got.Cmp(want) != 0 {
							t.Fatalf("%s, %d limbs: %x·%x mod %x = %x, want %x", kc.name, k, x, y, n, got, want)
						}
						want2 := new(big.Int).Mul(x, x)
						want2.Mul(want2, Rinv).Mod(want2, n)
						kc.sqr(z, natOf(m, x), m.n, m.n0inv, tt)
						if got := bigOf(z); got.Cmp(want2) != 0 {
							t.Fatalf("%s, %d limbs: %x² mod %x = %x, want %x", kc.name, k, x, n, got, want2)
						}
					}
				}
			}
		}
	}
}

// TestExpBothKernels runs Exp through the dispatcher with each kernel.
func TestExpBothKernels(t *testing.T) {
	for _, name := range expKernels {
		t.Run(name, func(t *testing.T) {
			withKernel(t, name, func() {
				if want, _, _ := strings.Cut(name, "-"); Kernel() != want {
					t.Fatalf("Kernel() = %q, want %q", Kernel(), want)
				}
				r := rand.New(rand.NewPCG(23, 24))
				for _, bits := range []int{64, 200, 1024, 1536, 2048} {
					if (raceEnabled || name == "ifma-emu") && bits > 1024 {
						continue
					}
					n := randop.Odd(r, bits)
					m := mustModulus(t, n)
					x := new(big.Int).Mod(randop.Bits(r, bits), n)
					e := randop.Bits(r, bits)
					z := make([]uint64, m.Limbs())
					m.Exp(z, natOf(m, x), e.Bytes())
					want := new(big.Int).Exp(x, e, n)
					if got := bigOf(z); got.Cmp(want) != 0 {
						t.Fatalf("%d bits: Exp = %x, want %x", bits, got, want)
					}
					m.ExpVarTime(z, natOf(m, x), e.Bytes())
					if got := bigOf(z); got.Cmp(want) != 0 {
						t.Fatalf("%d bits: ExpVarTime = %x, want %x", bits, got, want)
					}
					m.ExpVarTime(z, natOf(m, x), []byte{1, 0, 1})
					if got, want := bigOf(z), new(big.Int).Exp(x, big.NewInt(65537), n); got.Cmp(want) != 0 {
						t.Fatalf("%d bits: ExpVarTime(65537) = %x, want %x", bits, got, want)
					}
				}
			})
		})
	}
}

// TestTableSelect compares the table lookups of both kernels for every
// index of tables of several widths, including widths the AVX2 path
// leaves to Go.
func TestTableSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, k := range []int{1, 3, 4, 8, 16, 17, 24, 32, 64} {
		for _, entries := range []int{16, 32} {
			table := make([]uint64, entries*k)
			for i := range table {
				table[i] = r.Uint64()
			}
			for idx := range entries {
				want := table[idx*k : (idx+1)*k]
				for _, asm := range []bool{false, true} {
					if asm && !haveASM {
						continue
					}
					out := make([]uint64, k)
					for i := range out {
						out[i] = ^uint64(0)
					}
					if asm {
						tableSelectASM(out, table, k, entries, uint64(idx))
					} else {
						tableSelectGeneric(out, table, k, entries, uint64(idx))
					}
					for i := range want {
						if out[i] != want[i] {
							t.Fatalf("asm=%v k=%d entries=%d idx=%d: limb %d = %x, want %x", asm, k, entries, idx, i, out[i], want[i])
						}
					}
				}
			}
		}
	}
}
