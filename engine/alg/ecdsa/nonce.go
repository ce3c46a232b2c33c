package ecdsa

import (
	"crypto/sha256"
	"crypto/sha512"
	"hash"

	"github.com/modexp-token/modexp-token/engine/alg/internal/hashint"
	"github.com/modexp-token/modexp-token/engine/arith/ec"
)

// drbgHash is the hash of the HMAC-DRBG that draws nonces: the hash that
// matches the curve's strength (the hash the RFC 6979 examples pair with
// each curve). Any hash would do; the message's own hash is not known here.
type drbgHash int

const (
	drbgSHA256 drbgHash = iota
	drbgSHA384
	drbgSHA512
)

func nonceHash(c *ec.Curve) drbgHash {
	switch {
	case c.OrderBits() > 384:
		return drbgSHA512
	case c.OrderBits() > 256:
		return drbgSHA384
	default:
		return drbgSHA256
	}
}

func (h drbgHash) size() int { return [...]int{32, 48, 64}[h] }

func (h drbgHash) blockSize() int { return [...]int{64, 128, 128}[h] }

// newHash returns a fresh hash.Hash of h.
func (h drbgHash) newHash() hash.Hash {
	switch h {
	case drbgSHA256:
		return sha256.New()
	case drbgSHA384:
		return sha512.New384()
	default:
		return sha512.New()
	}
}

// maxDRBGMsg bounds the messages HMAC'ed: V‖0x00‖x‖h1‖extra, each at most
// 66 bytes, or V‖0x00.
const maxDRBGMsg = 64 + 1 + 3*66

// hmacState is HMAC (RFC 2104) with the DRBG's hash under one key at a
// time: the key's two padded blocks made once per key (setKey), the hash
// reused, so that a MAC allocates nothing and costs the compressions.
type hmacState struct {
	h          drbgHash
	md         hash.Hash // h's hash, made on first use
	mdh        drbgHash  // md's hash
	ipad, opad [128]byte // key ⊕ 0x36…, key ⊕ 0x5c… (one block)
	inner      [64]byte
}

// setKey makes the padded blocks of key (hlen bytes, shorter than the
// block) for the hash h.
func (s *hmacState) setKey(h drbgHash, key []byte) {
	if s.md == nil || s.mdh != h {
		s.md, s.mdh = h.newHash(), h
	}
	s.h = h
	blk := h.blockSize()
	n := copy(s.ipad[:blk], key)
	clear(s.ipad[n:blk])
	for i := range blk {
		s.opad[i] = s.ipad[i] ^ 0x5c
		s.ipad[i] ^= 0x36
	}
}

// mac appends HMAC_key(msg) to out[:0] (reused), the key set by setKey.
func (s *hmacState) mac(out, msg []byte) []byte {
	blk := s.h.blockSize()
	md := s.md
	md.Reset()
	md.Write(s.ipad[:blk])
	md.Write(msg)
	in := md.Sum(s.inner[:0])
	md.Reset()
	md.Write(s.opad[:blk])
	md.Write(in)
	return md.Sum(out[:0])
}

// wipe clears the key material (the padded key blocks, the inner hash)
// and the hash's state, its buffer included: Reset alone leaves the last
// partial block (an inner hash) in it, so less than a block of zeros is
// written over it first.
func (s *hmacState) wipe() {
	clear(s.ipad[:])
	clear(s.opad[:])
	clear(s.inner[:])
	if s.md != nil {
		s.md.Reset()
		s.md.Write(s.ipad[:s.md.BlockSize()-1])
		s.md.Reset()
	}
}

// nonceDRBG is the HMAC-DRBG of RFC 6979 §3.2, seeded with the private
// key, the hash and (§3.6) additional data: fresh random bytes, so a
// nonce is never repeated even if the same message is signed twice
// ("hedged" signatures), yet a broken random source alone cannot leak d.
// It makes its hash once, at its first use (a signature's working memory
// keeps it: signScratch), and allocates nothing after.
type nonceDRBG struct {
	c     *ec.Curve
	h     drbgHash
	k, v  []byte
	kb    [64]byte
	vb    [64]byte
	t     [2 * 64]byte
	msg   [maxDRBGMsg]byte
	h1buf [66]byte
	mac   hmacState // keyed with K
	// used: a candidate was returned, so the next call starts with the
	// K and V update of §3.2 step h.3 (done lazily: a signature almost
	// always takes the first nonce, and saves two HMACs).
	used bool
}

// init seeds the generator. d is the private key (OrderByteLen bytes),
// hash the message hash, extra the additional data (may be empty: then the
// nonces are exactly RFC 6979's).
func (g *nonceDRBG) init(c *ec.Curve, d, hash, extra []byte) {
	g.c, g.h, g.used = c, nonceHash(c), false
	hlen := g.h.size()
	g.k, g.v = g.kb[:hlen], g.vb[:hlen]
	for i := range g.v {
		g.k[i], g.v[i] = 0, 1
	}
	g.mac.setKey(g.h, g.k)
	h1 := bits2octets(c, g.h1buf[:0], hash)
	for _, sep := range []byte{0, 1} {
		m := append(g.msg[:0], g.v...)
		m = append(m, sep)
		m = append(m, d...)
		m = append(m, h1...)
		m = append(m, extra...)
		g.k = g.mac.mac(g.k, m)
		g.mac.setKey(g.h, g.k)
		g.v = g.mac.mac(g.v, g.v)
	}
}

// next returns the next candidate nonce in [1, n−1], OrderByteLen bytes,
// into k (reused). Candidates outside the range are skipped (§3.2 step h.3).
func (g *nonceDRBG) next(k []byte) []byte {
	olen := g.c.OrderByteLen()
	if g.used {
		g.update()
	}
	g.used = true
	for {
		t := g.t[:0]
		for len(t) < olen {
			g.v = g.mac.mac(g.v, g.v)
			t = append(t, g.v...)
		}
		k = bits2int(g.c, k[:0], t[:olen])
		if g.c.IsValidScalar(k) {
			return k
		}
		g.update() // step h.3: k out of range, the next candidate
	}
}

// update is step h.3's K = HMAC_K(V ‖ 0x00), V = HMAC_K(V): after a
// candidate out of range, and before the nonce after one that was
// returned (r = 0 or s = 0), so every candidate is fresh.
func (g *nonceDRBG) update() {
	m := append(g.msg[:0], g.v...)
	m = append(m, 0)
	g.k = g.mac.mac(g.k, m)
	g.mac.setKey(g.h, g.k)
	g.v = g.mac.mac(g.v, g.v)
}

// wipe clears the generator's secret state.
func (g *nonceDRBG) wipe() {
	clear(g.kb[:])
	clear(g.vb[:])
	clear(g.t[:])
	clear(g.msg[:])
	g.mac.wipe()
	g.used = false
}

// bits2int appends to dst the leftmost OrderBits bits of b as an
// OrderByteLen-byte integer (RFC 6979 §2.3.2). Constant time in b's value.
func bits2int(c *ec.Curve, dst, b []byte) []byte {
	return hashint.AppendBits2Int(dst, b, c.OrderByteLen(), c.OrderBits())
}

// bits2octets is RFC 6979 §2.3.4: bits2int(h) mod n, OrderByteLen bytes,
// appended to dst. bits2int(h) < 2n, so one subtraction reduces it. The
// hash is public: variable time is fine.
func bits2octets(c *ec.Curve, dst, h []byte) []byte {
	start := len(dst)
	dst = bits2int(c, dst, h)
	z := dst[start:]
	var nbuf [66]byte
	n := c.AppendOrder(nbuf[:0])
	if !lessBytes(z, n) {
		var borrow int
		for i := len(z) - 1; i >= 0; i-- {
			d := int(z[i]) - int(n[i]) - borrow
			borrow = 0
			if d < 0 {
				d += 256
				borrow = 1
			}
			z[i] = byte(d)
		}
	}
	return dst
}

// lessBytes reports whether the big-endian a < b (same length; public
// values only).
func lessBytes(a, b []byte) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
