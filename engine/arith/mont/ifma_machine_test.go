package mont

import "math/bits"

// ifmaMachine is the emulator that ifma_emu.go (generated with the
// assembly by gen_ifma_amd64.go) runs the IFMA kernels on: the
// general-purpose registers, the carry flag, 32 vector registers of up to
// 8 lanes, the mask registers and a memory of 64-bit words. Addresses are
// byte offsets into mem. Each method is one instruction, with the
// semantics of the Intel SDM for the forms the generator uses.
type ifmaMachine struct {
	gp  [16]uint64
	cf  uint64
	v   [32][8]uint64
	k   [8]uint64
	w   int // lanes per vector register (8: ZMM)
	mem []uint64
}

// emuAddrTrace, when set, receives the byte address of every load and
// store the emulator makes (the trace tests).
var emuAddrTrace func(addr int)

// load returns the word at byte address gp[base]+off.
func (m *ifmaMachine) load(off, base int) uint64 {
	if emuAddrTrace != nil {
		emuAddrTrace(int(m.gp[base]) + off)
	}
	return m.mem[(int(m.gp[base])+off)/8]
}

// movLoad: MOVQ off(base), dst.
func (m *ifmaMachine) movLoad(off, base, dst int) { m.gp[dst] = m.load(off, base) }

// mulx: MULXQ off(base), lo, hi (hi:lo = DX · mem; flags untouched).
func (m *ifmaMachine) mulx(off, base, lo, hi int) {
	h, l := bits.Mul64(m.gp[2], m.load(off, base))
	m.gp[lo], m.gp[hi] = l, h
}

// add: ADDQ src, dst (sets CF).
func (m *ifmaMachine) add(src, dst int) { m.gp[dst], m.cf = bits.Add64(m.gp[dst], m.gp[src], 0) }

// adc: ADCQ src, dst.
func (m *ifmaMachine) adc(src, dst int) { m.gp[dst], m.cf = bits.Add64(m.gp[dst], m.gp[src], m.cf) }

// adc0: ADCQ $0, dst.
func (m *ifmaMachine) adc0(dst int) { m.gp[dst], m.cf = bits.Add64(m.gp[dst], 0, m.cf) }

// vbroadcast: VPBROADCASTQ src, [Kk,] dst (k < 0: no mask).
func (m *ifmaMachine) vbroadcast(src, dst, k int) {
	for i := 0; i < m.w; i++ {
		if m.on(k, i) {
			m.v[dst][i] = m.gp[src]
		}
	}
	m.clearUpper(dst)
}

// on reports whether lane i is written under mask register k (k < 0: no
// mask).
func (m *ifmaMachine) on(k, i int) bool { return k < 0 || m.k[k]>>i&1 == 1 }

// clearUpper zeroes the lanes beyond the register width, as a VEX/EVEX
// write does.
func (m *ifmaMachine) clearUpper(r int) {
	for i := m.w; i < 8; i++ {
		m.v[r][i] = 0
	}
}

// madd52lo: VPMADD52LUQ off(base), src1, dst: dst += low 52 bits of the
// 104-bit product of the low 52 bits of each lane.
func (m *ifmaMachine) madd52lo(off, base, src1, dst int) {
	for i := 0; i < m.w; i++ {
		_, lo := mul52(m.v[src1][i], m.load(off+8*i, base))
		m.v[dst][i] += lo
	}
}

// madd52hi: VPMADD52HUQ off(base), src1, dst: dst += high 52 bits.
func (m *ifmaMachine) madd52hi(off, base, src1, dst int) {
	for i := 0; i < m.w; i++ {
		hi, _ := mul52(m.v[src1][i], m.load(off+8*i, base))
		m.v[dst][i] += hi
	}
}

// valign: VALIGNQ $n, low, high, dst: the lanes of high:low shifted down
// by n lanes.
func (m *ifmaMachine) valign(n, low, high, dst int) {
	var cat [16]uint64
	copy(cat[:m.w], m.v[low][:m.w])
	copy(cat[m.w:2*m.w], m.v[high][:m.w])
	for i := 0; i < m.w; i++ {
		m.v[dst][i] = cat[i+n]
	}
}

// vsrl: VPSRLQ $n, src, dst.
func (m *ifmaMachine) vsrl(n, src, dst int) {
	for i := 0; i < m.w; i++ {
		m.v[dst][i] = m.v[src][i] >> n
	}
}

// vand: VPANDQ a, b, dst.
func (m *ifmaMachine) vand(a, b, dst int) {
	for i := 0; i < m.w; i++ {
		m.v[dst][i] = m.v[a][i] & m.v[b][i]
	}
}

// vxor: VPXORQ a, b, dst.
func (m *ifmaMachine) vxor(a, b, dst int) {
	for i := 0; i < m.w; i++ {
		m.v[dst][i] = m.v[a][i] ^ m.v[b][i]
	}
}

// vadd: VPADDQ a, b, [Kk,] dst (merge masking).
func (m *ifmaMachine) vadd(a, b, dst, k int) {
	for i := 0; i < m.w; i++ {
		if m.on(k, i) {
			m.v[dst][i] = m.v[a][i] + m.v[b][i]
		}
	}
}

// vcmpu: VPCMPUQ $pred, src2, src1, Kk: bit i of k is src1[i] pred
// src2[i] (unsigned; 0 equal, 1 less, 2 less or equal, 4 not equal, 5 not
// less, 6 greater).
func (m *ifmaMachine) vcmpu(pred, src2, src1, k int) {
	var r uint64
	for i := 0; i < m.w; i++ {
		a, b := m.v[src1][i], m.v[src2][i]
		var t bool
		switch pred {
		case 0:
			t = a == b
		case 1:
			t = a < b
		case 2:
			t = a <= b
		case 4:
			t = a != b
		case 5:
			t = a >= b
		case 6:
			t = a > b
		default:
			panic("vcmpu: predicate not emulated")
		}
		if t {
			r |= 1 << i
		}
	}
	m.k[k] = r
}

// vload: VMOVDQU64 off(base), dst.
func (m *ifmaMachine) vload(off, base, dst int) {
	for i := 0; i < m.w; i++ {
		m.v[dst][i] = m.load(off+8*i, base)
	}
}

// vstore: VMOVDQU64 src, off(base).
func (m *ifmaMachine) vstore(src, off, base int) {
	if emuAddrTrace != nil {
		emuAddrTrace(int(m.gp[base]) + off)
	}
	for i := 0; i < m.w; i++ {
		m.mem[(int(m.gp[base])+off)/8+i] = m.v[src][i]
	}
}

// vblend: VPBLENDMQ src, other, Kk, dst: lane i is src[i] where bit i of
// k is set, other[i] where not.
func (m *ifmaMachine) vblend(src, other, k, dst int) {
	for i := 0; i < m.w; i++ {
		if m.on(k, i) {
			m.v[dst][i] = m.v[src][i]
		} else {
			m.v[dst][i] = m.v[other][i]
		}
	}
}
