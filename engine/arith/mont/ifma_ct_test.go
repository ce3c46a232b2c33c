package mont

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// asmInsn is one instruction of the generated assembly.
type asmInsn struct {
	line     int
	op       string
	args     []string
	text     string
	loopHead bool // first instruction after the loop label
}

// TestIFMAKernelsConstantTimeByConstruction reads the generated
// kernel_ifma_amd64.s and checks the rules the constant-time argument
// rests on, instruction by instruction (valgrind, which counts the
// instructions of the adx kernel, cannot run AVX-512 code):
//
//   - only instructions of a fixed list, all of data-independent timing
//     on the cores we know (no division, no conditional move or set, no
//     gather/scatter, no masked load or store);
//   - the only branch is the counted loop: JNZ to the function's own loop
//     label right after DECQ CX, with CX set from a constant (or there
//     is no branch at all);
//   - every memory operand is a constant offset from an argument pointer:
//     a register last written by an argument load or by LEAQ
//     constant(self), self (checked over the loop body run twice, so that
//     a write late in the body is seen at the top of the next turn).
func TestIFMAKernelsConstantTimeByConstruction(t *testing.T) {
	src, err := os.ReadFile("kernel_ifma_amd64.s")
	if err != nil {
		t.Skip("no generated assembly in this directory")
	}
	n, errs := checkConstantTimeAsm(string(src))
	for _, e := range errs {
		t.Error(e)
	}
	if n == 0 {
		t.Fatal("no function found in kernel_ifma_amd64.s")
	}
	t.Logf("%d kernels checked", n)
	// The check itself: each of these changes to a kernel must be caught.
	// One kernel is enough to show that: from its TEXT line to the next.
	one := string(src)[strings.Index(string(src), "TEXT ·amm52x2_20y(SB)"):]
	one = one[:strings.Index(one[1:], "TEXT ")+1]
	if _, errs := checkConstantTimeAsm(one); len(errs) != 0 {
		t.Fatalf("the unchanged kernel fails: %v", errs)
	}
	fn := strings.Index(one, "amm52x2_20yloop:")
	body := one[fn:]
	for _, tc := range []struct{ what, old, new string }{
		{"a data-dependent pointer", "MOVQ R9, DX\n", "MOVQ R9, DX\n\tMOVQ R9, SI\n"},
		{"a conditional move", "MOVQ R9, DX\n", "CMOVQNE R9, DX\n"},
		{"a data-dependent branch", "MOVQ R9, DX\n", "MOVQ R9, DX\n\tJZ amm52x2_20yloop\n"},
		{"a loop counted by data", "DECQ CX\n", "DECQ CX\n\tMOVQ R9, CX\n"},
		{"an index register", "MULXQ 0(SI), AX, R11", "MULXQ 0(SI)(R9*8), AX, R11"},
	} {
		mutated := one[:fn] + strings.Replace(body, tc.old, tc.new, 1)
		if mutated == one {
			t.Fatalf("%s: the mutation did not apply", tc.what)
		}
		if _, errs := checkConstantTimeAsm(mutated); len(errs) == 0 {
			t.Errorf("%s was not caught", tc.what)
		}
	}
}

// checkConstantTimeAsm applies the rules above to the assembly src and
// returns the number of functions and the violations.
func checkConstantTimeAsm(src string) (int, []string) {
	var errs []string
	report := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	allowed := map[string]bool{
		"MOVQ": true, "KMOVB": true, "VMOVDQU64": true, "VPXORQ": true, "VPCMPUQ": true,
		"SHLQ": true, "SHRQ": true, "VPADDQ": true, "VPMADD52LUQ": true, "VPMADD52HUQ": true,
		"VPANDQ": true, "VALIGNQ": true, "ORQ": true, "XORQ": true, "VPSRLQ": true,
		"VPBLENDMQ": true, "VPBROADCASTQ": true, "ADDQ": true, "ADCQ": true, "MULXQ": true,
		"IMULQ": true, "VMOVQ": true, "LEAQ": true, "DECQ": true, "JNZ": true,
		"VZEROUPPER": true, "RET": true,
	}
	memRe := regexp.MustCompile(`^(?:\w+\+)?(-?\d+)\((\w+)\)$`)
	// Parse into functions.
	funcs := map[string][]asmInsn{}
	var order []string
	var fn string
	head := false
	for n, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "TEXT "):
			fn = strings.TrimPrefix(strings.TrimSuffix(strings.Fields(line)[1], "(SB),"), "·")
			order = append(order, fn)
		case strings.HasSuffix(line, ":"):
			if line != fn+"loop:" {
				report("line %d: label %q is not %s's loop", n+1, line, fn)
			}
			head = true
		default:
			f := strings.Fields(strings.ReplaceAll(line, ",", " "))
			funcs[fn] = append(funcs[fn], asmInsn{line: n + 1, op: f[0], args: f[1:], text: line, loopHead: head})
			head = false
		}
	}
	for _, fn := range order {
		ins := funcs[fn]
		// The loop body, from its head to the JNZ, runs twice.
		start, end := -1, -1
		for i, in := range ins {
			if in.loopHead {
				start = i
			}
			if in.op == "JNZ" {
				end = i
			}
		}
		var seq []asmInsn
		switch {
		case start < 0 && end < 0: // straight-line (the unrolled batch kernels)
			seq = ins
		case start < 0 || end < start:
			report("%s: no counted loop", fn)
			continue
		default:
			seq = append(append(append([]asmInsn{}, ins[:end+1]...), ins[start:end+1]...), ins[end+1:]...)
		}
		clean := map[string]bool{} // registers holding argument pointers
		counter := false           // CX holds a count from a constant
		prev := ""
		for _, in := range seq {
			if !allowed[in.op] {
				report("line %d: %s: instruction %s not on the constant-time list", in.line, fn, in.op)
			}
			for _, a := range in.args {
				if strings.Contains(a, "(") && !memRe.MatchString(a) {
					report("line %d: %s: memory operand %s is not a constant offset from a register", in.line, fn, a)
				}
				if m := memRe.FindStringSubmatch(a); m != nil && m[2] != "FP" && in.op != "LEAQ" && !clean[m[2]] {
					report("line %d: %s: memory operand %s: %s does not hold an argument pointer", in.line, fn, a, m[2])
				}
			}
			var dst string
			if len(in.args) > 0 {
				dst = in.args[len(in.args)-1]
			}
			switch {
			case in.op == "JNZ":
				if len(in.args) != 1 || in.args[0] != fn+"loop" || prev != "DECQ CX" || !counter {
					report("line %d: %s: branch %q is not the counted loop", in.line, fn, in.text)
				}
			case in.op == "LEAQ":
				m := memRe.FindStringSubmatch(in.args[0])
				if m == nil || m[2] != dst || !clean[dst] {
					report("line %d: %s: %q is not a constant step of a pointer", in.line, fn, in.text)
				}
			case in.op == "MOVQ" && strings.HasSuffix(in.args[0], "(FP)"):
				clean[dst] = true
			case in.op == "MOVQ" && dst == "CX" && strings.HasPrefix(in.args[0], "$"):
				counter = true
			case in.op == "DECQ" && dst == "CX":
			case in.op == "MULXQ":
				clean[in.args[1]], clean[in.args[2]] = false, false
			case dst != "" && !strings.Contains(dst, "("):
				clean[dst] = false
				if dst == "CX" {
					counter = false
				}
			}
			prev = in.op + " " + strings.Join(in.args, " ")
		}
	}
	return len(order), errs
}
