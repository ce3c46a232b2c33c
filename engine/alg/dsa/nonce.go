package dsa

import (
	"crypto/hmac"
	"crypto/sha256"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// nonceDRBG is the HMAC-DRBG of RFC 6979 §3.2 with HMAC-SHA-256, seeded
// with the private value, the hash and (§3.6) additional data: fresh random
// bytes, so a nonce is never repeated even if the same message is signed
// twice, yet a broken random source alone cannot leak x.
type nonceDRBG struct {
	q      *mont.Modulus
	qLen   int
	nBits  int
	k, v   []byte
	cand   []uint64
	tBytes []byte
}

func hmacSHA256(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// newNonceDRBG seeds the generator: x and h1 are qLen bytes (int2octets
// of x, bits2octets of the hash), extra the additional data (may be empty:
// the nonces are then exactly RFC 6979's).
func newNonceDRBG(q *mont.Modulus, nBits int, x, h1, extra []byte) *nonceDRBG {
	g := &nonceDRBG{q: q, qLen: q.Size(), nBits: nBits, cand: make([]uint64, q.Limbs())}
	g.k = make([]byte, sha256.Size)
	g.v = make([]byte, sha256.Size)
	for i := range g.v {
		g.v[i] = 1
	}
	for _, sep := range []byte{0, 1} {
		g.k = hmacSHA256(g.k, g.v, []byte{sep}, x, h1, extra)
		g.v = hmacSHA256(g.k, g.v)
	}
	return g
}

// next sets k to the next candidate nonce in [1, q−1] (§3.2 step h);
// candidates outside the range are skipped.
func (g *nonceDRBG) next(k []uint64) {
	for {
		t := g.tBytes[:0]
		for len(t) < g.qLen {
			g.v = hmacSHA256(g.k, g.v)
			t = append(t, g.v...)
		}
		g.tBytes = t
		c := bits2int(t[:g.qLen], g.qLen, g.nBits)
		mont.SetBytes(g.cand, c)
		clear(c)
		ok := g.q.Less(g.cand) & (1 ^ mont.IsZero(g.cand))
		// Step h.3: update K and V whether or not the candidate is used,
		// so a second call (r = 0 or s = 0) gives a fresh nonce.
		g.k = hmacSHA256(g.k, g.v, []byte{0})
		g.v = hmacSHA256(g.k, g.v)
		if ok == 1 {
			copy(k, g.cand)
			return
		}
	}
}

// wipe clears the generator's secret state.
func (g *nonceDRBG) wipe() {
	clear(g.k)
	clear(g.v)
	clear(g.cand)
	clear(g.tBytes)
}
