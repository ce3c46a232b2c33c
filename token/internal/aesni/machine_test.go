package aesni

import "encoding/binary"

// aesMachine is the emulator that emu_test.go (generated with the
// assembly by gen_amd64.go) runs the kernels on: the general-purpose
// registers, sixteen 128-bit vector registers (byte i of a register is
// byte i of memory when loaded: the AES state column by column) and a
// byte memory. Addresses are byte offsets into mem. Each method is one
// instruction, with the semantics of the Intel SDM for the forms the
// generator uses; the AES rounds are written from FIPS 197 here (the S-box
// computed from the inverse in GF(2⁸)), not taken from crypto/aes, which
// the tests compare against.
type aesMachine struct {
	gp  [16]uint64
	x   [16][16]byte
	mem []byte
}

// addr is the byte address gp[base]+off.
func (m *aesMachine) addr(off, base int) int { return int(m.gp[base]) + off }

// load: VMOVDQU off(base), X(x).
func (m *aesMachine) load(off, base, x int) { copy(m.x[x][:], m.mem[m.addr(off, base):]) }

// store: VMOVDQU X(x), off(base).
func (m *aesMachine) store(x, off, base int) { copy(m.mem[m.addr(off, base):], m.x[x][:]) }

// pxorMem: VPXOR off(base), X(src), X(dst).
func (m *aesMachine) pxorMem(off, base, src, dst int) {
	a := m.addr(off, base)
	for i := range 16 {
		m.x[dst][i] = m.x[src][i] ^ m.mem[a+i]
	}
}

// pxor: VPXOR X(a), X(b), X(dst).
func (m *aesMachine) pxor(a, b, dst int) {
	for i := range 16 {
		m.x[dst][i] = m.x[a][i] ^ m.x[b][i]
	}
}

// aesenc: VAESENC X(key), X(src), X(dst): ShiftRows, SubBytes,
// MixColumns, then ⊕ the round key.
func (m *aesMachine) aesenc(key, src, dst int) {
	s := subBytes(shiftRows(m.x[src]))
	s = mixColumns(s)
	for i := range 16 {
		m.x[dst][i] = s[i] ^ m.x[key][i]
	}
}

// aesenclast: VAESENCLAST X(key), X(src), X(dst): the last round, without
// MixColumns.
func (m *aesMachine) aesenclast(key, src, dst int) {
	s := subBytes(shiftRows(m.x[src]))
	for i := range 16 {
		m.x[dst][i] = s[i] ^ m.x[key][i]
	}
}

// movqToX: MOVQ gp, X(x) (the upper half cleared).
func (m *aesMachine) movqToX(gp, x int) {
	m.x[x] = [16]byte{}
	binary.LittleEndian.PutUint64(m.x[x][:8], m.gp[gp])
}

// movqFromX: MOVQ X(x), gp.
func (m *aesMachine) movqFromX(x, gp int) { m.gp[gp] = binary.LittleEndian.Uint64(m.x[x][:8]) }

// pshufd: VPSHUFD $imm, X(src), X(dst).
func (m *aesMachine) pshufd(imm uint8, src, dst int) {
	s := m.x[src]
	for i := range 4 {
		j := int(imm>>(2*i)) & 3
		copy(m.x[dst][4*i:4*i+4], s[4*j:4*j+4])
	}
}

// aeskeygenassist: VAESKEYGENASSIST $rcon, X(src), X(dst): dwords
// SubWord(X1), RotWord(SubWord(X1)) ⊕ rcon, SubWord(X3),
// RotWord(SubWord(X3)) ⊕ rcon of the source's dwords X0 … X3
// (RotWord: a rotation right by 8 bits of the little-endian dword).
func (m *aesMachine) aeskeygenassist(rcon uint8, src, dst int) {
	s := m.x[src]
	x1 := binary.LittleEndian.Uint32(s[4:])
	x3 := binary.LittleEndian.Uint32(s[12:])
	sw := func(w uint32) uint32 {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], w)
		for i := range b {
			b[i] = sbox(b[i])
		}
		return binary.LittleEndian.Uint32(b[:])
	}
	rot := func(w uint32) uint32 { return w>>8 | w<<24 }
	var d [16]byte
	binary.LittleEndian.PutUint32(d[0:], sw(x1))
	binary.LittleEndian.PutUint32(d[4:], rot(sw(x1))^uint32(rcon))
	binary.LittleEndian.PutUint32(d[8:], sw(x3))
	binary.LittleEndian.PutUint32(d[12:], rot(sw(x3))^uint32(rcon))
	m.x[dst] = d
}

// shiftRows: row r (bytes r, r+4, r+8, r+12) rotated left by r.
func shiftRows(s [16]byte) [16]byte {
	var o [16]byte
	for c := range 4 {
		for r := range 4 {
			o[r+4*c] = s[r+4*((c+r)%4)]
		}
	}
	return o
}

func subBytes(s [16]byte) [16]byte {
	for i := range s {
		s[i] = sbox(s[i])
	}
	return s
}

// xtime is multiplication by x in GF(2⁸) mod x⁸+x⁴+x³+x+1.
func xtime(b byte) byte { return b<<1 ^ (b>>7)*0x1b }

// gmul is multiplication in GF(2⁸).
func gmul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		a, b = xtime(a), b>>1
	}
	return p
}

func mixColumns(s [16]byte) [16]byte {
	var o [16]byte
	for c := range 4 {
		a := s[4*c : 4*c+4]
		o[4*c+0] = gmul(a[0], 2) ^ gmul(a[1], 3) ^ a[2] ^ a[3]
		o[4*c+1] = a[0] ^ gmul(a[1], 2) ^ gmul(a[2], 3) ^ a[3]
		o[4*c+2] = a[0] ^ a[1] ^ gmul(a[2], 2) ^ gmul(a[3], 3)
		o[4*c+3] = gmul(a[0], 3) ^ a[1] ^ a[2] ^ gmul(a[3], 2)
	}
	return o
}

// sboxTable caches sboxOf for the emulator (a test may run thousands of
// blocks).
var sboxTable = func() (t [256]byte) {
	for i := range t {
		t[i] = sboxOf(byte(i))
	}
	return t
}()

func sbox(b byte) byte { return sboxTable[b] }

// sboxOf is the AES S-box (FIPS 197 §5.1.1): the inverse in GF(2⁸) (0 for
// 0), then the affine map.
func sboxOf(b byte) byte {
	inv := byte(0)
	if b != 0 {
		// b^254 = b⁻¹.
		inv = 1
		for range 254 {
			inv = gmul(inv, b)
		}
	}
	r := inv
	for i := 1; i <= 4; i++ {
		r ^= inv<<i | inv>>(8-i)
	}
	return r ^ 0x63
}
