package mont

// Exp sets z = x^e mod n for x < n and the big-endian secret exponent e.
// The time and the memory addresses touched depend only on len(e) and the
// limb count of n: fixed windows of w bits (w = 4 below 384 exponent bits,
// 5 above), always w squarings and one multiplication per window, and a
// table lookup that reads every entry. z has Limbs() limbs and may alias x.
// On the IFMA kernel, moduli of 16, 24 and 32 limbs take the radix-2^52
// path of ifma.go (windows of 5 bits whatever the exponent length; the
// same rules otherwise).
func (m *Modulus) Exp(z, x []uint64, e []byte) {
	if useIFMA && m.l52 != 0 {
		if amm, sel, ok := ifmaKernelsFor(m.l52, 1); ok {
			expIFMA([]*Modulus{m}, [][]uint64{z}, [][]uint64{x}, [][]byte{e}, amm, sel)
			return
		}
	}
	k := len(m.n)
	nbits := 8 * len(e)
	w := 5
	if nbits < 384 {
		w = 4
	}
	entries := 1 << w
	raw := getSlab(entries*k + 3*k + m.ScratchLen()) // cleared when it goes back: the table is secret
	defer putSlab(raw)
	slab := *raw
	table := slab[:entries*k]
	acc := slab[entries*k : entries*k+k]
	sel := slab[entries*k+k : entries*k+2*k]
	t := slab[entries*k+3*k:]

	// table[i] = x^i in Montgomery form.
	copy(table[:k], m.one)
	m.ToMont(table[k:2*k], x, t)
	for i := 2; i < entries; i++ {
		if i%2 == 0 {
			montSqr(table[i*k:(i+1)*k], table[(i/2)*k:(i/2+1)*k], m.n, m.n0inv, t)
		} else {
			montMul(table[i*k:(i+1)*k], table[(i-1)*k:i*k], table[k:2*k], m.n, m.n0inv, t)
		}
	}

	windows := (nbits + w - 1) / w
	copy(acc, m.one)
	for win := windows - 1; win >= 0; win-- {
		if win != windows-1 { // public: depends on the position only
			for s := 0; s < w; s++ {
				montSqr(acc, acc, m.n, m.n0inv, t)
			}
		}
		idx := window(e, win*w, w)
		tableSelect(sel, table, k, entries, idx)
		montMul(acc, acc, sel, m.n, m.n0inv, t)
	}
	m.FromMont(z[:k], acc, t)
}

// ExpPair sets z1 = x1^e1 mod m1 and z2 = x2^e2 mod m2, with secret
// exponents as for Exp, in one pass that interleaves the two
// exponentiations (the two CRT halves of an RSA private operation), when
// the kernel in use can: the IFMA kernel, for two moduli of the same size
// it handles. It reports whether it did; if not, it did nothing and the
// caller runs two Exp. The exponents are processed over the longer one's
// byte length; the time depends only on that and the moduli's size.
func ExpPair(m1, m2 *Modulus, z1, x1 []uint64, e1 []byte, z2, x2 []uint64, e2 []byte) bool {
	if !CanPair(m1, m2) {
		return false
	}
	amm, sel, _ := ifmaKernelsFor(m1.l52, 2)
	expIFMA([]*Modulus{m1, m2}, [][]uint64{z1, z2}, [][]uint64{x1, x2}, [][]byte{e1, e2}, amm, sel)
	return true
}

// CanPair reports whether ExpPair would pair exponentiations modulo m1
// and m2 (it depends on their sizes and the kernel in use only).
func CanPair(m1, m2 *Modulus) bool {
	if !useIFMA || m1.l52 == 0 || m1.l52 != m2.l52 {
		return false
	}
	_, _, ok := ifmaKernelsFor(m1.l52, 2)
	return ok
}

// ifmaKernelsFor returns the IFMA kernels in use for C chains of L
// digits: the assembly ones (tests may substitute the emulated ones).
var ifmaKernelsFor = ifmaASMKernels

// window returns the w bits of the big-endian e starting at bit position
// pos (from the least significant bit); bits beyond e are zero. The memory
// accessed depends only on pos, w and len(e).
func window(e []byte, pos, w int) uint64 {
	var v uint64
	for i := 0; i < w; i++ {
		p := pos + i
		if p/8 < len(e) { // public: positions only
			bit := uint64(e[len(e)-1-p/8]>>(p%8)) & 1
			v |= bit << i
		}
	}
	return v
}

// tableSelect sets out = table[idx] reading every entry of the table and
// keeping the wanted one with a mask.
func tableSelect(out, table []uint64, k, entries int, idx uint64) {
	if kernelTrace != nil {
		kernelTrace('T')
	}
	if useASM {
		tableSelectASM(out, table, k, entries, idx)
		return
	}
	tableSelectGeneric(out, table, k, entries, idx)
}

// tableSelectGeneric is tableSelect in pure Go.
func tableSelectGeneric(out, table []uint64, k, entries int, idx uint64) {
	clear(out)
	out = out[:k]
	for j := 0; j < entries; j++ {
		mask := ctMask(ctEq(uint64(j), idx))
		ent := table[j*k : j*k+k]
		for i := range out {
			out[i] |= ent[i] & mask
		}
	}
}

// ExpVarTime sets z = x^e mod n for x < n and a PUBLIC big-endian exponent
// e, by left-to-right binary exponentiation: the time depends on e (not on
// x or n beyond their lengths). z may alias x.
func (m *Modulus) ExpVarTime(z, x []uint64, e []byte) {
	if useIFMA && m.l52 != 0 {
		if amm, _, ok := ifmaKernelsFor(m.l52, 1); ok {
			expVarTimeIFMA(m, z, x, e, amm)
			return
		}
	}
	k := len(m.n)
	raw := getSlab(2*k + m.ScratchLen())
	defer putSlab(raw)
	slab := *raw
	xm := slab[:k]
	acc := slab[k : 2*k]
	t := slab[2*k:]
	m.ToMont(xm, x, t)
	copy(acc, m.one)
	started := false
	for _, by := range e {
		for b := 7; b >= 0; b-- {
			if started {
				montSqr(acc, acc, m.n, m.n0inv, t)
			}
			if by>>b&1 == 1 {
				if started {
					montMul(acc, acc, xm, m.n, m.n0inv, t)
				} else {
					copy(acc, xm)
					started = true
				}
			}
		}
	}
	m.FromMont(z[:k], acc, t)
}
