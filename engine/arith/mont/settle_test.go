package mont

import "testing"

// init settles the kernel selection before any test saves and replaces
// useASM or useIFMA, so a later NewModulus cannot overwrite what a test
// chose.
func init() { settleKernels() }

// TestKernelsSettleOnFirstUse checks that the selection made lazily is
// the one selectKernel makes for the same request.
func TestKernelsSettleOnFirstUse(t *testing.T) {
	oldASM, oldIFMA, oldInfo := useASM, useIFMA, kernelInfo
	defer func() { useASM, useIFMA, kernelInfo = oldASM, oldIFMA, oldInfo }()
	want := selectKernel(kernelReq)
	if got := Kernels(); got.Name != want.Name || (got.Err == nil) != (want.Err == nil) {
		t.Fatalf("settled %+v, selectKernel %+v", got, want)
	}
	if asm := haveASM && kernelReq != "purego"; useASM != asm {
		t.Fatalf("useASM %v, want %v for MODEXP_KERNEL=%q", useASM, asm, kernelReq)
	}
}
