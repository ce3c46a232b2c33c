package aesni

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestKernelsConstantTimeByConstruction reads the generated assembly and
// checks what makes it constant-time: only the instructions the generator
// emits (the AES rounds are single instructions, constant-time in
// hardware), memory addressed by an argument register and a constant
// offset only (no index register, no address computed from data), the
// one branch the loop over CX, which only the block count argument sets.
// Each mutation below must be caught.
func TestKernelsConstantTimeByConstruction(t *testing.T) {
	src, err := os.ReadFile("kernel_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	n, errs := checkConstantTimeAsm(string(src))
	for _, e := range errs {
		t.Error(e)
	}
	if n != 7 {
		t.Fatalf("%d functions checked, want 7", n)
	}
	for _, tc := range []struct{ what, old, new string }{
		{"a data-dependent pointer", "VMOVDQU X0, 0(DI)\n", "VMOVDQU X0, 0(DI)\n\tMOVQ X0, SI\n"},
		{"a data-dependent branch", "VAESENC X2, X0, X0\n", "VAESENC X2, X0, X0\n\tJZ cbcEnc14loop\n"},
		{"a loop counted by data", "DECQ CX\n", "DECQ CX\n\tMOVQ X0, CX\n"},
		{"an index register", "VMOVDQU 0(SI), X1", "VMOVDQU 0(SI)(CX*1), X1"},
		{"a table lookup", "VPXOR 0(AX), X1, X1", "VPXOR 0(AX), X1, X1\n\tVPSHUFB X0, X1, X1"},
	} {
		mutated := strings.Replace(string(src), tc.old, tc.new, 1)
		if mutated == string(src) {
			t.Fatalf("%s: the mutation did not apply", tc.what)
		}
		if _, errs := checkConstantTimeAsm(mutated); len(errs) == 0 {
			t.Errorf("%s was not caught", tc.what)
		}
	}
}

var (
	memOperand = regexp.MustCompile(`^-?\d+\((AX|BX|SI|DI)\)$`)
	argLoad    = regexp.MustCompile(`^\w+\+\d+\(FP\)$`)
	xreg       = regexp.MustCompile(`^X(\d|1[0-5])$`)
)

// checkConstantTimeAsm applies the rules above to src and returns the
// number of functions and the violations.
func checkConstantTimeAsm(src string) (int, []string) {
	var errs []string
	fns := 0
	fn := ""
	bad := func(line, why string) { errs = append(errs, fmt.Sprintf("%s: %q: %s", fn, line, why)) }
	for _, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.HasSuffix(line, ":") {
			continue
		}
		if strings.HasPrefix(line, "TEXT ") {
			fns++
			fn = line
			continue
		}
		op, rest, _ := strings.Cut(line, " ")
		var args []string
		for _, a := range strings.Split(rest, ",") {
			if a = strings.TrimSpace(a); a != "" {
				args = append(args, a)
			}
		}
		operandsOK := func() bool {
			for _, a := range args {
				if !xreg.MatchString(a) && !memOperand.MatchString(a) {
					return false
				}
			}
			return true
		}
		switch op {
		case "VAESENC", "VAESENCLAST", "VPXOR", "VMOVDQU":
			if !operandsOK() {
				bad(line, "an operand that is not an X register or base+offset memory")
			}
		case "VPSHUFD", "VAESKEYGENASSIST":
			if len(args) != 3 || !strings.HasPrefix(args[0], "$") || !xreg.MatchString(args[1]) || !xreg.MatchString(args[2]) {
				bad(line, "not an immediate form on registers")
			}
		case "MOVQ", "MOVL":
			// Arguments in, results out, and GP<->X moves of subWord.
			switch {
			case len(args) == 2 && argLoad.MatchString(args[0]) && (args[1] != "CX" || strings.HasPrefix(args[0], "n+")):
			case len(args) == 2 && argLoad.MatchString(args[1]) && args[0] == "AX":
			case len(args) == 2 && (args[0] == "AX" && xreg.MatchString(args[1]) || xreg.MatchString(args[0]) && args[1] == "AX") && strings.Contains(fn, "subWord"):
			default:
				bad(line, "a move that is not an argument, a result or subWord's")
			}
		case "ADDQ":
			if len(args) != 2 || args[0] != "$16" || (args[1] != "SI" && args[1] != "DI") {
				bad(line, "a pointer step other than one block")
			}
		case "TESTQ":
			if rest != "CX, CX" {
				bad(line, "a test of something other than the block count")
			}
		case "DECQ":
			if rest != "CX" {
				bad(line, "a count other than the block count")
			}
		case "JZ", "JNZ":
			// Only right after TESTQ CX / DECQ CX: checked by the
			// emitter's shape; here, that no other flag-setting data op
			// exists (the allowed data ops leave the flags alone).
		case "RET":
		default:
			bad(line, "an instruction the generator does not emit")
		}
	}
	// A branch must follow the block count's TESTQ or DECQ.
	lines := strings.Split(src, "\n")
	prev := ""
	for _, raw := range lines {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "//") || strings.HasSuffix(line, ":") {
			continue
		}
		if strings.HasPrefix(line, "TEXT ") {
			fn = line
		}
		if strings.HasPrefix(line, "JZ ") || strings.HasPrefix(line, "JNZ ") {
			if prev != "TESTQ CX, CX" && prev != "DECQ CX" {
				bad(line, "a branch on a flag not set by the block count")
			}
		}
		prev = line
	}
	return fns, errs
}
