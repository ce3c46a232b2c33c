package token

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// refCMAC is SP 800-38B's CMAC of the whole message at once (§6.2), the
// second implementation the streaming one is checked against.
func refCMAC(b cipher.Block, msg []byte) []byte {
	dbl := func(x []byte) []byte {
		o := make([]byte, 16)
		for i := 0; i < 15; i++ {
			o[i] = x[i]<<1 | x[i+1]>>7
		}
		o[15] = x[15] << 1
		if x[0]&0x80 != 0 {
			o[15] ^= 0x87
		}
		return o
	}
	l := make([]byte, 16)
	b.Encrypt(l, l)
	k1 := dbl(l)
	k2 := dbl(k1)
	n := (len(msg) + 15) / 16
	last := make([]byte, 16)
	if n == 0 || len(msg)%16 != 0 {
		n = max(n, 1)
		r := copy(last, msg[16*(n-1):])
		last[r] = 0x80
		subtle.XORBytes(last, last, k2)
	} else {
		copy(last, msg[16*(n-1):])
		subtle.XORBytes(last, last, k1)
	}
	x := make([]byte, 16)
	for i := 0; i < n-1; i++ {
		subtle.XORBytes(x, x, msg[16*i:16*i+16])
		b.Encrypt(x, x)
	}
	subtle.XORBytes(x, x, last)
	b.Encrypt(x, x)
	return x
}

// randomParts splits n bytes into random parts (some empty, some of
// many blocks).
func randomParts(r *rand.Rand, n int) []int {
	var parts []int
	for n > 0 {
		k := r.IntN(min(n, 300) + 1)
		if r.IntN(4) == 0 {
			k = r.IntN(n + 1)
		}
		parts = append(parts, k)
		n -= k
	}
	return parts
}

// TestAESBulkModes: CBC and CBC_PAD encryption, CTR, CMAC and AES-MAC
// (the modes on the aesni kernels or with their output in the caller's
// buffer) against crypto/cipher and refCMAC, for AES-128, -192 and -256
// keys and messages of 0 to 4101 bytes, in one call and in random parts.
func TestAESBulkModes(t *testing.T) {
	m, _, sh := readyToken(t)
	r := rand.New(rand.NewPCG(28, 1))
	for _, size := range []int{16, 24, 32} {
		kv := make([]byte, size)
		for i := range kv {
			kv[i] = byte(r.Uint32())
		}
		key := mustSecret(t, m, sh, ck.CKK_AES, kv)
		b, err := aes.NewCipher(kv)
		must(t, err)
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 1000, 4096, 4101} {
			msg := make([]byte, n)
			for i := range msg {
				msg[i] = byte(r.Uint32())
			}
			iv := make([]byte, 16)
			for i := range iv {
				iv[i] = byte(r.Uint32())
			}
			padded := append(bytes.Clone(msg), bytes.Repeat([]byte{byte(16 - n%16)}, 16-n%16)...)
			cbcPad := make([]byte, len(padded))
			cipher.NewCBCEncrypter(b, iv).CryptBlocks(cbcPad, padded)
			ctr := make([]byte, n)
			cipher.NewCTR(b, iv).XORKeyStream(ctr, msg)
			zeroPadded := make([]byte, (n+15)/16*16)
			copy(zeroPadded, msg)
			aesMAC := make([]byte, 16)
			if len(zeroPadded) > 0 {
				ct := make([]byte, len(zeroPadded))
				cipher.NewCBCEncrypter(b, make([]byte, 16)).CryptBlocks(ct, zeroPadded)
				aesMAC = ct[len(ct)-16:]
			}
			type tc struct {
				name string
				mech *Mechanism
				sign bool
				want []byte
			}
			cases := []tc{
				{"CBC_PAD", &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv}, false, cbcPad},
				{"CTR", ctrMech(128, iv), false, ctr},
				{"CMAC", &Mechanism{Type: ck.CKM_AES_CMAC}, true, refCMAC(b, msg)},
				{"MAC_GENERAL", generalMech(ck.CKM_AES_MAC_GENERAL, 16), true, aesMAC},
			}
			if n%16 == 0 {
				cases = append(cases, tc{"CBC", &Mechanism{Type: ck.CKM_AES_CBC, Param: iv}, false, cbcPad[:n]})
			}
			for _, c := range cases {
				name := fmt.Sprintf("AES-%d %s %d bytes", 8*size, c.name, n)
				parts := randomParts(r, n)
				var once, inParts []byte
				var err1, err2 error
				if c.sign {
					once, err1 = signOnce(m, sh, c.mech, key, msg)
					inParts, err2 = signParts(m, sh, c.mech, key, msg, parts)
				} else {
					must(t, m.EncryptInit(sh, c.mech, key))
					out := make([]byte, n+32) // the caller's buffer
					once, _, err1 = m.Encrypt(sh, msg, Out{Cap: len(out), Buf: out})
					inParts, err2 = cryptParts(m, sh, mech.OpEncrypt, c.mech, key, msg, parts)
				}
				if err1 != nil || err2 != nil {
					t.Fatalf("%s: %v, %v", name, err1, err2)
				}
				if !bytes.Equal(once, c.want) {
					t.Fatalf("%s: one call gives %x, want %x", name, once, c.want)
				}
				if !bytes.Equal(inParts, c.want) {
					t.Fatalf("%s in parts %v: %x, want %x", name, parts, inParts, c.want)
				}
			}
		}
	}
}

// TestAESCTRCounterLimits: a counter of 64, 65 or 127 bits (across the
// two words of the count of values left) takes exactly the blocks it has
// left and refuses one more, one call or in parts.
func TestAESCTRCounterLimits(t *testing.T) {
	m, _, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 16))
	cb := func(hi, lo uint64) []byte {
		b := make([]byte, 16)
		for i := range 8 {
			b[i] = byte(hi >> (56 - 8*i))
			b[8+i] = byte(lo >> (56 - 8*i))
		}
		return b
	}
	for _, c := range []struct {
		name string
		bits uint64
		cb   []byte
		left int // blocks left
	}{
		{"64 bits, 2 left", 64, cb(0xffff, ^uint64(0)-1), 2},
		{"65 bits, 1 left", 65, cb(0xfffe|1, ^uint64(0)), 1},
		{"65 bits, 2^64 + 3 left, the low word near its top", 65, cb(0, ^uint64(0)-2), -1},
		{"127 bits, 3 left", 127, cb(0xffffffffffffffff, ^uint64(0)-2), 3},
		{"63 bits, 1 left, bits above the counter set", 63, cb(0x1234, ^uint64(0)), 1},
	} {
		if c.left < 0 {
			// Plenty left: a large message passes.
			_, err := cryptParts(m, sh, mech.OpEncrypt, ctrMech(c.bits, c.cb), key, make([]byte, 4096), []int{100, 1000})
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		n := 16 * c.left
		if _, err := cryptParts(m, sh, mech.OpEncrypt, ctrMech(c.bits, c.cb), key, make([]byte, n), []int{5, 11}); err != nil {
			t.Errorf("%s: %d bytes: %v", c.name, n, err)
		}
		_, err := cryptParts(m, sh, mech.OpEncrypt, ctrMech(c.bits, c.cb), key, make([]byte, n+1), []int{5, n - 5})
		wantRV(t, err, ck.CKR_DATA_LEN_RANGE)
		must(t, m.DecryptInit(sh, ctrMech(c.bits, c.cb), key))
		_, _, err = m.Decrypt(sh, make([]byte, n+1), Out{Cap: n + 1})
		wantRV(t, err, ck.CKR_ENCRYPTED_DATA_LEN_RANGE)
	}
}
