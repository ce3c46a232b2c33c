package token

// The AES-GCM IVs the token makes for C_EncryptMessage and
// C_EncryptMessageBegin (CK_GCM_MESSAGE_PARAMS.ivGenerator; docs/THREATS.md,
// GCM). The caller's pIv holds ulIvLen bytes; its first ulIvFixedBits bits
// (most significant first) are kept, the others, the free field of w bits,
// are the generator's:
//
//   - CKG_GENERATE and CKG_GENERATE_COUNTER: the free field is a counter
//     (NIST SP 800-38D §8.2.1, the deterministic construction), written
//     big-endian at the right end of the IV (bits of the field beyond 64
//     are zero).
//   - CKG_GENERATE_COUNTER_XOR (3.2): the counter is xored into the
//     caller's free bits instead (TLS 1.3's per-record nonce).
//   - CKG_GENERATE_RANDOM: the free field is random (crypto/rand), at
//     least 64 bits of it: n random IVs of w free bits repeat with a
//     probability of about n²/2^(w+1) (SP 800-38D §8.2.2 and §8.3).
//
// The counter is per key object and per Module (one process): every
// session and every message operation using a key draws from the same
// counter, so the counter IVs of one key never repeat in this process,
// whatever the sessions, operations, lengths or prefixes. It starts at a
// random 64-bit value (a second process, or this one after a restart,
// starts elsewhere: a collision between two processes needs their ranges
// to overlap). A field of w < 64 bits serves at most 2^w counter IVs of
// one key in a process; the next is refused (CKR_KEY_EXHAUSTED) rather
// than repeated. Every generated IV also goes through the caller-IV window
// of gcmiv.go: one equal to an IV the window holds (a caller's, or another
// generator's) is skipped, and a caller IV equal to a generated one is
// refused. The counters are kept for the Module's life (about 40 bytes per
// key object that used one), never evicted: a forgotten counter could
// restart where it was.

import (
	"crypto/rand"
	"encoding/binary"
	"sync"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// gcmCounter is one key's counter: the next value and the first.
type gcmCounter struct{ start, next uint64 }

// gcmCounters are a Module's counters, by key object.
type gcmCounters struct {
	mu   sync.Mutex
	keys map[gcmKeyID]*gcmCounter
}

// take returns key's next counter value for a free field of w bits, or
// an error once the field's 2^w values are spent.
func (c *gcmCounters) take(key gcmKeyID, w int) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = map[gcmKeyID]*gcmCounter{}
	}
	k := c.keys[key]
	if k == nil {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, ck.Errorf(ck.CKR_FUNCTION_FAILED, "GCM IV counter: random start: %v", err)
		}
		s := binary.BigEndian.Uint64(b[:])
		k = &gcmCounter{start: s, next: s}
		c.keys[key] = k
	}
	used := k.next - k.start
	if w < 64 && used >= 1<<uint(w) || w >= 64 && used == ^uint64(0) {
		return 0, ck.Errorf(ck.CKR_KEY_EXHAUSTED, "CKM_AES_GCM: this key's IV counter has served every value of a %d-bit field", w)
	}
	v := k.next
	k.next++
	if w < 64 {
		v &= 1<<uint(w) - 1
	}
	return v, nil
}

// gcmRandomMinBits is the smallest free field CKG_GENERATE_RANDOM fills.
const gcmRandomMinBits = 64

// generateIV fills the free field of iv (after fixedBits bits) for
// generator gen under key o of slot s, and records it in the Module's
// window. iv is the caller's IV, modified in place.
func generateIV(s *slot, o *object, iv []byte, fixedBits int, gen uint64) error {
	w := 8*len(iv) - fixedBits
	if gen == ck.CKG_GENERATE_RANDOM && w < gcmRandomMinBits {
		return ck.Errorf(ck.CKR_MECHANISM_PARAM_INVALID, "CKG_GENERATE_RANDOM needs at least %d free IV bits, has %d", gcmRandomMinBits, w)
	}
	m, key := s.m, gcmKeyOf(s, o)
	base := append([]byte(nil), iv...)
	// A generated IV the window already holds is skipped; the window holds
	// at most gcmIVWindow IVs of a key, so this ends.
	for range mech.GCMIVWindow + 1 {
		copy(iv, base)
		switch gen {
		case ck.CKG_GENERATE_RANDOM:
			r := make([]byte, len(iv))
			if _, err := rand.Read(r); err != nil {
				return ck.Errorf(ck.CKR_FUNCTION_FAILED, "GCM IV: random: %v", err)
			}
			setFree(iv, fixedBits, r, false)
		default: // CKG_GENERATE, CKG_GENERATE_COUNTER, CKG_GENERATE_COUNTER_XOR
			v, err := m.gcmCounters.take(key, w)
			if err != nil {
				return err
			}
			c := make([]byte, len(iv))
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], v)
			n := min(8, len(c))
			copy(c[len(c)-n:], b[8-n:])
			setFree(iv, fixedBits, c, gen == ck.CKG_GENERATE_COUNTER_XOR)
		}
		if m.gcmIVs.use(key, iv) {
			return nil
		}
	}
	return ck.Errorf(ck.CKR_FUNCTION_FAILED, "CKM_AES_GCM: no fresh IV in %d tries", mech.GCMIVWindow+1)
}

// setFree sets the bits of iv after the first fixedBits to those of v (of
// iv's length), or xors them in.
func setFree(iv []byte, fixedBits int, v []byte, xor bool) {
	for i := range iv {
		// mask: the free bits of byte i.
		var mask byte
		switch {
		case 8*(i+1) <= fixedBits:
			mask = 0
		case 8*i >= fixedBits:
			mask = 0xff
		default:
			mask = 0xff >> uint(fixedBits-8*i)
		}
		if xor {
			iv[i] ^= v[i] & mask
		} else {
			iv[i] = iv[i]&^mask | v[i]&mask
		}
	}
}
