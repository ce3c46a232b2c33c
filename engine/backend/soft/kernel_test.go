package soft

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// TestKernelForcedUnavailable runs this test binary again with a
// MODEXP_KERNEL that cannot be satisfied and checks that opening the
// "soft" engine then fails with a message naming it (the module's
// C_Initialize fails with it).
func TestKernelForcedUnavailable(t *testing.T) {
	if os.Getenv("MODEXP_SOFT_KERNEL_CHILD") == "1" {
		ki := Kernels()
		if ki.Err == nil || !errors.Is(ki.Err, mont.ErrKernel) {
			t.Fatalf("Kernels() = %+v, want an error", ki)
		}
		_, err := engine.Open("soft")
		if err == nil || !strings.Contains(err.Error(), "MODEXP_KERNEL") {
			t.Fatalf("engine.Open(soft) = %v, want the kernel error", err)
		}
		return
	}
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	req := "no-such-kernel"
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKernelForcedUnavailable$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MODEXP_SOFT_KERNEL_CHILD=1", "MODEXP_KERNEL="+req)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestKernelInUse logs the kernel (and fails under MODEXP_REQUIRE_IFMA=1,
// make test-ifma, unless it is ifma).
func TestKernelInUse(t *testing.T) {
	ki := Kernels()
	t.Logf("kernel %s (MODEXP_KERNEL=%s), CPU features %v, notes %v", ki.Name, ki.Requested, ki.CPU, ki.Notes)
	if os.Getenv("MODEXP_REQUIRE_IFMA") == "1" && ki.Name != "ifma" {
		t.Fatalf("MODEXP_REQUIRE_IFMA=1: kernel in use is %s (%v)", ki.Name, ki.Err)
	}
}

// TestExpPair checks ExpPair against math/big where the kernel pairs, and
// that it declines with engine.ErrUnsupported (before any work) where it
// does not: public exponents, moduli of different sizes, other kernels.
func TestExpPair(t *testing.T) {
	ctx := context.Background()
	e := New()
	r := rand.New(rand.NewSource(7))
	mk := func(bits int) (*big.Int, engine.Modulus) {
		n := new(big.Int).Rand(r, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
		n.SetBit(n, bits-1, 1).SetBit(n, 0, 1)
		m, err := e.NewModulus(n.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return n, m
	}
	for _, bits := range [][2]int{{1024, 1024}, {1536, 1536}, {2048, 2048}, {1024, 2048}, {768, 768}} {
		n1, m1 := mk(bits[0])
		n2, m2 := mk(bits[1])
		x1, x2 := new(big.Int).Rand(r, n1), new(big.Int).Rand(r, n2)
		e1, e2 := new(big.Int).Rand(r, n1).Bytes(), new(big.Int).Rand(r, n2).Bytes()
		for _, public := range []bool{false, true} {
			ra, rb, _, err := e.ExpPair(ctx, engine.ExpOp{M: m1, Base: x1.Bytes(), Exp: e1, Public: public},
				engine.ExpOp{M: m2, Base: x2.Bytes(), Exp: e2})
			wantPair := Kernels().Name == "ifma" && !public && bits[0] == bits[1] && bits[0] >= 1024
			if !wantPair {
				if !errors.Is(err, engine.ErrUnsupported) {
					t.Fatalf("%v bits, public %v: ExpPair = %v, want ErrUnsupported", bits, public, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v bits: ExpPair: %v", bits, err)
			}
			w1 := new(big.Int).Exp(x1, new(big.Int).SetBytes(e1), n1).FillBytes(make([]byte, len(n1.Bytes())))
			w2 := new(big.Int).Exp(x2, new(big.Int).SetBytes(e2), n2).FillBytes(make([]byte, len(n2.Bytes())))
			if !bytes.Equal(ra, w1) || !bytes.Equal(rb, w2) {
				t.Fatalf("%v bits: ExpPair results differ from math/big", bits)
			}
		}
	}
	// Out-of-range bases are refused, not computed.
	n1, m1 := mk(1024)
	_, m2 := mk(1024)
	if _, _, _, err := e.ExpPair(ctx, engine.ExpOp{M: m1, Base: n1.Bytes(), Exp: []byte{3}}, engine.ExpOp{M: m2, Base: []byte{2}, Exp: []byte{3}}); err == nil {
		t.Fatal("ExpPair accepted a base equal to the modulus")
	}
}
