package soft

import (
	"strings"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// KernelInfo describes the limb kernel the software engine runs on: the
// one in use, what MODEXP_KERNEL asked for, the CPU features seen, and
// why a requested or faster kernel is not in use.
type KernelInfo = mont.KernelInfo

// Kernels reports the limb-kernel selection, made once when the program
// starts: MODEXP_KERNEL=auto (the default) takes the AVX-512 IFMA kernel
// where the CPU has it and it passed its known-answer self-test, else the
// MULX/ADX kernel where the CPU has BMI2 and ADX, else pure Go;
// MODEXP_KERNEL=ifma, adx or purego forces one. When the forced kernel
// cannot run here, Err says why, and opening the "soft" engine fails
// with it (so C_Initialize fails on a slot that uses it).
func Kernels() KernelInfo { return mont.Kernels() }

// Describe is [engine.Describer]'s: the kernel in use, the one
// MODEXP_KERNEL asked for and the CPU features seen, with the kernel
// selection's notes as the warnings.
func (e *Engine) Describe() (attrs []any, notes []string) {
	ki := Kernels()
	return []any{"kernel", ki.Name, "kernel_requested", ki.Requested, "cpu", strings.Join(ki.CPU, " ")}, ki.Notes
}
