package mont

import (
	"math/bits"
	"sync"
	"unsafe"
)

// The radix-2^52 path: secret exponentiation on the AVX-512 IFMA kernels
// (kernel_ifma_amd64.s, generated with their Go emulation by
// gen_ifma_amd64.go) for the moduli of RSA CRT halves.
//
// Numbers are L digits of 52 bits, each in a 64-bit word, little-endian,
// with L a multiple of the register's lanes (4 or 8) and 4n ≤ 2^(52L).
// The Montgomery radix is R52 = 2^(52L). The kernels compute Almost
// Montgomery Multiplication: for a, b < 2n they return a value
// below 2n congruent to a·b·R52⁻¹ mod n (ab/R52 < 4n²/R52 ≤ n, plus the
// added multiple of n below n), with every digit normalised below 2^52,
// so results feed the next multiplication without a final subtraction.
// Only the end of an exponentiation reduces: a multiplication by 1 brings
// the value to at most n, and the masked subtraction of finalSub to below
// n. The conversions at the edges are plain repacking (constant time:
// fixed shifts); the Montgomery constant R52² mod n is computed once per
// modulus with the 64-bit kernels (doublings and Montgomery products, in
// constant time like computeRR).

// ifmaDigits returns the number of 52-bit digits the IFMA kernels use for
// a modulus of k 64-bit limbs, or 0 if there is no kernel for k.
func ifmaDigits(k int) int { return ifmaShape[k] }

// ifmaShape maps limb counts to digit counts, and ifmaWidth digit counts
// to the lanes per register of the kernel used. Kernels exist for 4-lane
// (YMM) registers with 20, 32 and 40 digits and 8-lane (ZMM) ones with
// 24, 32 and 40 (4n ≤ 2^(52L) needs 52L ≥ 64k + 2); all are tested. On
// AMD Zen 4, where a ZMM operation is two YMM ones, the 4-lane kernels
// take 3-4% less CPU time at 32 and 40 digits and 28% less for 1024-bit
// moduli, where 20 digits suffice against 24 (TestIFMAShapesCPUTime), so
// they are the ones used. 3072- and 4096-bit moduli (60 and 80 digits)
// have one-chain kernels only: ExpPair does not pair them.
var (
	ifmaShape = map[int]int{16: 20, 24: 32, 32: 40, 48: 60, 64: 80}
	ifmaWidth = map[int]int{20: 4, 24: 8, 32: 4, 40: 4, 60: 4, 80: 4}
)

// ifmaEntries is the window table size of the radix-2^52 exponentiation
// (windows of 5 bits; the exponent lengths of the CRT halves are at least
// 512 bits).
const (
	ifmaWindow  = 5
	ifmaEntries = 1 << ifmaWindow
)

// ammFunc runs C radix-2^52 Montgomery multiplications of L digits on the
// slab s: chain c multiplies the L digits at word offset a+c·L and b+c·L
// modulo those at m+c·L with s[k0+c] = −m⁻¹ mod 2^52, into z+c·L. z may
// be a or b.
type ammFunc func(s []uint64, z, a, b, m, k0 int)

// selFunc sets, for each chain c, the L words at out+c·L to those of
// entry s[idx+c] of the table at word offset table (32 entries of C·L
// words, chain c at offset c·L of each), reading every entry.
type selFunc func(s []uint64, out, table, idx int)

// prepare52 sets the radix-2^52 constants of m if the IFMA kernels
// handle its size.
func (m *Modulus) prepare52() {
	k := len(m.n)
	L := ifmaDigits(k)
	if L == 0 {
		return
	}
	// R52 mod n from R64 mod n by 52L − 64k constant-time doublings.
	x := make([]uint64, k)
	copy(x, m.one)
	m.doubleMod(x, 52*L-64*k)
	// R52² mod n = mont64(mont64(R52, R52), R64²): R52²·R64⁻¹·R64²·R64⁻¹.
	t := make([]uint64, m.ScratchLen())
	y := make([]uint64, k)
	montMulNoTrace(y, x, x, m.n, m.n0inv, t)
	montMulNoTrace(y, y, m.rr, m.n, m.n0inv, t)
	m.l52 = L
	m.n52 = to52(make([]uint64, L), m.n)
	m.rr52 = to52(make([]uint64, L), y)
	m.k052 = m.n0inv & mask52
}

// montMulNoTrace is montMul on the current 64-bit kernel without a trace
// event (moduli are often prepared while a trace is recorded).
func montMulNoTrace(z, x, y, n []uint64, n0inv uint64, t []uint64) {
	if useASM {
		montMulASM(z, x, y, n, n0inv, t)
		return
	}
	montMulGeneric(z, x, y, n, n0inv, t)
}

const mask52 = 1<<52 - 1

// to52 sets the digits d to the value of the limbs x (which must fit) and
// returns d. The shifts depend only on the lengths.
func to52(d, x []uint64) []uint64 {
	for i := range d {
		bit := 52 * i
		w, s := bit/64, uint(bit%64)
		var v uint64
		if w < len(x) {
			v = x[w] >> s
			if s > 12 && w+1 < len(x) {
				v |= x[w+1] << (64 - s)
			}
		}
		d[i] = v & mask52
	}
	return d
}

// from52 sets the limbs x to the value of the normalised digits d (which
// must fit) and returns x.
func from52(x, d []uint64) []uint64 {
	clear(x)
	for i, v := range d {
		bit := 52 * i
		w, s := bit/64, uint(bit%64)
		if w < len(x) {
			x[w] |= v << s
			if s > 12 && w+1 < len(x) {
				x[w+1] |= v >> (64 - s)
			}
		}
	}
	return x
}

// ammRef is the pure-Go model of the kernels: z = a·b·2^(−52L) + y·m/2^(52L)
// digit by digit, y_i = (t_0 + a_0·b_i)·k0 mod 2^52, with the same
// 52-bit halves of each product (mul52) and the same bounds; the digits of
// z are normalised. It gives the same digits as the kernels (the result
// is the same number, and normalised digits are unique). z may alias a or
// b. Constant time: fixed loops, multiplications and additions.
func ammRef(z, a, b, m []uint64, k0 uint64) {
	L := len(m)
	a, b, z = a[:L], b[:L], z[:L]
	var tb [81]uint64
	var t []uint64
	if L+1 <= len(tb) {
		t = tb[:L+1]
	} else {
		t = make([]uint64, L+1)
	}
	for i := 0; i < L; i++ {
		bi := b[i]
		_, lo := mul52(a[0], bi)
		y := (t[0] + lo) * k0 & mask52
		var carry, ha, hm uint64
		for j := 0; j < L; j++ {
			haj, la := mul52(a[j], bi)
			hmj, lm := mul52(m[j], y)
			col := t[j] + la + lm + ha + hm + carry
			t[j] = col & mask52
			carry = col >> 52
			ha, hm = haj, hmj
		}
		t[L] += ha + hm + carry
		// t[0] is zero: divide by 2^52.
		copy(t[:L], t[1:])
		t[L] = 0
	}
	copy(z, t[:L])
}

// mul52 returns the high and low 52-bit halves of the product of the low
// 52 bits of x and y (what VPMADD52HUQ and VPMADD52LUQ add).
func mul52(x, y uint64) (hi, lo uint64) {
	h, l := bits.Mul64(x&mask52, y&mask52)
	return h<<12 | l>>52, l & mask52
}

// refKernels returns ammRef and a pure-Go table lookup as slab functions
// for C chains of L digits.
func refKernels(L, C int) (ammFunc, selFunc) {
	amm := func(s []uint64, z, a, b, m, k0 int) {
		for c := 0; c < C; c++ {
			o := c * L
			ammRef(s[z+o:z+o+L], s[a+o:a+o+L], s[b+o:b+o+L], s[m+o:m+o+L], s[k0+c])
		}
	}
	sel := func(s []uint64, out, table, idx int) {
		for c := 0; c < C; c++ {
			o := out + c*L
			clear(s[o : o+L])
			for j := 0; j < ifmaEntries; j++ {
				mask := ctMask(ctEq(uint64(j), s[idx+c]))
				ent := s[table+j*C*L+c*L : table+j*C*L+c*L+L]
				for i := range ent {
					s[o+i] |= ent[i] & mask
				}
			}
		}
	}
	return amm, sel
}

// expIFMA sets zs[c] = xs[c]^es[c] mod ms[c] for the C = len(ms) moduli,
// which must all have the same digit count, with the multiplication and
// lookup kernels amm and sel for that count. The exponents are processed
// over the longest one's byte length (lengths are public). Fixed windows
// of 5 bits; every step the same sequence of kernel calls.
func expIFMA(ms []*Modulus, zs, xs [][]uint64, es [][]byte, amm ammFunc, sel selFunc) {
	C := len(ms)
	L := ms[0].l52
	CL := C * L
	nbytes := 1 // an empty exponent is one zero window
	for _, e := range es {
		nbytes = max(nbytes, len(e))
	}
	// Slab: table | acc | sel | m | one | rr | k0 | idx, from a 64-byte
	// boundary: every region of digits starts on a multiple of the
	// register width, so that no load splits a cache line.
	const offTable = 0
	offAcc := ifmaEntries * CL
	offSel := offAcc + CL
	offM := offSel + CL
	offOne := offM + CL
	offRR := offOne + CL
	offK0 := offRR + CL
	offIdx := offK0 + C
	size := offIdx + C
	kmax := 0 // the conversions out of radix 2^52 use the words after the aligned slab
	for _, m := range ms {
		kmax = max(kmax, len(m.n))
	}
	raw := getSlab(size + 8 + kmax)
	defer putSlab(raw)
	s := (*raw)[align64(*raw):][:size]
	out := (*raw)[size+8:]
	for c, m := range ms {
		o := c * L
		copy(s[offM+o:], m.n52)
		copy(s[offRR+o:], m.rr52)
		s[offOne+o] = 1
		s[offK0+c] = m.k052
		to52(s[offSel+o:offSel+o+L], xs[c][:len(m.n)])
	}
	expWindows52(exp52Plan{
		amm:    func(z, a, b int) { amm(s, z, a, b, offM, offK0) },
		sel:    func(out int) { sel(s, out, offTable, offIdx) },
		setIdx: func(c int, w uint64) { s[offIdx+c] = w },
		es:     es, nbytes: nbytes, entry: CL,
		table: offTable, acc: offAcc, x: offSel, rr: offRR, one: offOne,
	})
	for c, m := range ms {
		k := len(m.n)
		t := from52(out[:k], s[offAcc+c*L:offAcc+c*L+L])
		finalSub(zs[c][:k], t, 0, m.n)
	}
}

// exp52Plan is one radix-2^52 exponentiation for expWindows52: the
// multiplication and lookup on the caller's slab, and the word offsets of
// its regions. x holds the base (in radix 2^52), and is the lookup's
// output afterwards.
type exp52Plan struct {
	amm                    func(z, a, b int)
	sqr                    func(z, a int) // z = a·a; nil: amm(z, a, a)
	sel                    func(out int)
	setIdx                 func(chain int, window uint64)
	es                     [][]byte
	nbytes                 int
	entry                  int // words an entry of the table
	table, acc, x, rr, one int
}

// expWindows52 runs the fixed-window exponentiation of p, leaving the
// result, out of Montgomery form (at most n), at p.acc: the table of the
// 32 powers, then for each 5-bit window 5 squarings, the lookup and a
// multiplication, the same calls whatever the values.
func expWindows52(p exp52Plan) {
	call := func(op byte, z, a, b int) {
		if kernelTrace != nil {
			kernelTrace(op)
		}
		if op == 'S' && p.sqr != nil { // public: the position in the sequence
			p.sqr(z, a)
			return
		}
		p.amm(z, a, b)
	}
	entry := func(i int) int { return p.table + i*p.entry }
	// table[1] = x·R52, table[0] = R52 (mod n, below 2n), then powers.
	call('M', entry(1), p.x, p.rr)
	call('M', entry(0), p.rr, p.one)
	for i := 2; i < ifmaEntries; i++ {
		if i%2 == 0 {
			call('S', entry(i), entry(i/2), entry(i/2))
		} else {
			call('M', entry(i), entry(i-1), entry(1))
		}
	}
	windows := (8*p.nbytes + ifmaWindow - 1) / ifmaWindow
	for win := windows - 1; win >= 0; win-- {
		for c, e := range p.es {
			p.setIdx(c, window(e, win*ifmaWindow, ifmaWindow))
		}
		if kernelTrace != nil {
			kernelTrace('T')
		}
		if win == windows-1 { // public: position only
			p.sel(p.acc)
			continue
		}
		for range ifmaWindow {
			call('S', p.acc, p.acc, p.acc)
		}
		p.sel(p.x)
		call('M', p.acc, p.acc, p.x)
	}
	call('M', p.acc, p.acc, p.one) // out of Montgomery form: at most n
}

// expVarTimeIFMA sets z = x^e mod m for x < m and a PUBLIC exponent e
// (left-to-right binary, branching on the bits of e) on the radix-2^52
// multiplication amm: the check of an RSA signature with e = 65537 is 17
// products.
func expVarTimeIFMA(m *Modulus, z, x []uint64, e []byte, amm ammFunc) {
	L := m.l52
	// Slab: x·R52 | acc | m | one | rr | k0.
	offX, offAcc, offM, offOne, offRR, offK0 := 0, L, 2*L, 3*L, 4*L, 5*L
	k := len(m.n)
	raw := getSlab(5*L + 1 + 8 + k) // the last k words: the conversion out of radix 2^52
	defer putSlab(raw)
	s := (*raw)[align64(*raw):][:5*L+1]
	clear(s)
	copy(s[offM:], m.n52)
	copy(s[offRR:], m.rr52)
	s[offOne] = 1
	s[offK0] = m.k052
	to52(s[offAcc:offAcc+L], x[:len(m.n)])
	amm(s, offX, offAcc, offRR, offM, offK0)   // x·R52
	amm(s, offAcc, offRR, offOne, offM, offK0) // R52: x^0
	started := false
	for _, by := range e {
		for b := 7; b >= 0; b-- {
			if started {
				amm(s, offAcc, offAcc, offAcc, offM, offK0)
			}
			if by>>b&1 == 1 {
				if started {
					amm(s, offAcc, offAcc, offX, offM, offK0)
				} else {
					copy(s[offAcc:offAcc+L], s[offX:offX+L])
					started = true
				}
			}
		}
	}
	amm(s, offAcc, offAcc, offOne, offM, offK0) // at most n
	t := from52((*raw)[5*L+1+8:], s[offAcc:offAcc+L])
	finalSub(z[:k], t, 0, m.n)
}

// slabs recycles the scratch of the radix-2^52 exponentiations, one pool
// per slab size (a few: digit count, chains, public or secret). Slabs are
// cleared before they go back.
var slabs sync.Map // int → *sync.Pool

// getSlab returns a zeroed slab of n words.
func getSlab(n int) *[]uint64 {
	if p, ok := slabs.Load(n); ok {
		if s, ok := p.(*sync.Pool).Get().(*[]uint64); ok {
			return s
		}
	}
	s := make([]uint64, n)
	return &s
}

// putSlab clears the slab and returns it to its pool.
func putSlab(s *[]uint64) {
	clear(*s)
	p, ok := slabs.Load(len(*s))
	if !ok {
		p, _ = slabs.LoadOrStore(len(*s), new(sync.Pool))
	}
	p.(*sync.Pool).Put(s)
}

// align64 returns the index of the first word of s on a 64-byte
// boundary (s has at least 8 words).
func align64(s []uint64) int {
	return int((64 - uintptr(unsafe.Pointer(&s[0]))%64) % 64 / 8)
}
