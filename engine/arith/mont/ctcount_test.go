package mont

import (
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// TestExpForInstructionCount runs one secret 1024-bit exponentiation with
// an exponent of the class named by MODEXP_CT_CLASS (zero, ones, random)
// and a base of the class named by MODEXP_CT_BASE (zero, one, random), and
// nothing else of note. It exists to be run under an instruction counter:
//
//	go test -c -o /tmp/mont.test ./engine/arith/mont
//	MODEXP_CT_CLASS=zero valgrind --tool=callgrind --toggle-collect='*Modulus*Exp' /tmp/mont.test -test.run ExpForInstructionCount
//
// and the same with ones and random (MODEXP_CT_ASM=1 forces the assembly
// kernel, which valgrind runs although its CPUID hides ADX): the counts of executed instructions
// must be identical (docs/PERFORMANCE.md, "Constant time"). Without
// MODEXP_CT_CLASS it is skipped.
func TestExpForInstructionCount(t *testing.T) {
	class := os.Getenv("MODEXP_CT_CLASS")
	if class == "" {
		t.Skip("set MODEXP_CT_CLASS=zero|ones|random and run under valgrind")
	}
	if os.Getenv("MODEXP_CT_ASM") == "1" {
		// Valgrind's CPUID hides ADX; force the assembly kernel (it
		// decodes MULX/ADCX/ADOX all the same).
		old := useASM
		useASM = true
		defer func() { useASM = old }()
	}
	// Stay on one thread: callgrind's toggle follows the thread's stack,
	// and a goroutine moved to another thread mid-Exp would be partly
	// uncounted.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := rand.New(rand.NewPCG(31, 32))
	n := randop.Odd(r, 1024)
	m := mustModulus(t, n)
	e := make([]byte, 128)
	switch class {
	case "ones":
		for i := range e {
			e[i] = 0xff
		}
	case "random":
		rr := rand.New(rand.NewPCG(uint64(len(os.Getenv("MODEXP_CT_SEED"))), 33))
		for i := range e {
			e[i] = byte(rr.Uint32())
		}
	}
	x := new(big.Int).Mod(randop.Bits(r, 1024), n)
	switch os.Getenv("MODEXP_CT_BASE") {
	case "zero":
		x.SetInt64(0)
	case "one":
		x.SetInt64(1)
	}
	z := make([]uint64, m.Limbs())
	m.Exp(z, natOf(m, x), e)
	if got, want := bigOf(z), new(big.Int).Exp(x, new(big.Int).SetBytes(e), n); got.Cmp(want) != 0 {
		t.Fatalf("Exp = %x, want %x", got, want)
	}
	t.Logf("kernel %s, exponent class %s", Kernel(), class)
}
