package mont

import (
	"flag"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/modexp-token/modexp-token/engine/arith/randop"
)

// The flags of TestExpForInstructionCount.
var (
	ctClass = flag.String("ct.class", "", "TestExpForInstructionCount: the exponent's class, zero, ones or random (empty: skip)")
	ctBase  = flag.String("ct.base", "random", "TestExpForInstructionCount: the base's class, zero, one or random")
	ctASM   = flag.Bool("ct.asm", false, "TestExpForInstructionCount: force the assembly kernel")
	ctSeed  = flag.Uint64("ct.seed", 0, "TestExpForInstructionCount: the seed of a random exponent")
)

// TestExpForInstructionCount runs one secret 1024-bit exponentiation with
// an exponent of the class named by -ct.class (zero, ones, random) and a
// base of the class named by -ct.base (zero, one, random), and nothing
// else of note. It exists to be run under an instruction counter:
//
//	go test -c -o /tmp/mont.test ./engine/arith/mont
//	valgrind --tool=callgrind --toggle-collect='*Modulus*Exp' /tmp/mont.test -test.run ExpForInstructionCount -ct.class=zero
//
// and the same with ones and random (-ct.asm forces the assembly kernel,
// which valgrind runs although its CPUID hides ADX): the counts of
// executed instructions must be identical (docs/PERFORMANCE.md, "Constant
// time"). Without -ct.class it is skipped.
func TestExpForInstructionCount(t *testing.T) {
	class := *ctClass
	if class == "" {
		t.Skip("set -ct.class=zero|ones|random and run under valgrind")
	}
	if *ctASM {
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
		rr := rand.New(rand.NewPCG(*ctSeed, 33))
		for i := range e {
			e[i] = byte(rr.Uint32())
		}
	}
	x := new(big.Int).Mod(randop.Bits(r, 1024), n)
	switch *ctBase {
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
