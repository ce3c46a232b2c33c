package token

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestCryptIntoCallerBuffer: the bulk ciphers write their output into the
// caller's buffer (Out.Buf, as the C layer hands it over) — disjoint from
// the input, the input itself (in place), or shifted from it (the Module
// then works in a buffer of its own) — and give the bytes the copying path
// gives, single- and multi-part, both ways.
func TestCryptIntoCallerBuffer(t *testing.T) {
	m, _, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, bytes.Repeat([]byte{7}, 32))
	iv := bytes.Repeat([]byte{9}, 16)
	ivN := byte(0)
	fresh := func() []byte { ivN++; return append(bytes.Repeat([]byte{ivN}, 11), ivN) } // a GCM IV never repeated
	msg := make([]byte, 1000)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	for _, c := range []struct {
		name string
		mech func() *Mechanism
		in   int // message length
	}{
		{"ECB", func() *Mechanism { return &Mechanism{Type: ck.CKM_AES_ECB} }, 992},
		{"CBC", func() *Mechanism { return &Mechanism{Type: ck.CKM_AES_CBC, Param: iv} }, 992},
		{"CBC_PAD", func() *Mechanism { return &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv} }, 1000},
		{"CBC_PAD whole blocks", func() *Mechanism { return &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv} }, 992},
		{"CTR", func() *Mechanism { return ctrMech(128, iv) }, 1000},
		{"GCM", func() *Mechanism { return gcmMech(fresh(), []byte("aad"), 128) }, 1000},
		{"GCM 96-bit tag", func() *Mechanism { return gcmMech(fresh(), nil, 96) }, 1000},
		{"GCM 64-bit tag (cut)", func() *Mechanism { return gcmMech(fresh(), nil, 64) }, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			pt := msg[:c.in]
			for _, layout := range []string{"disjoint", "in place", "shifted"} {
				mc := c.mech()
				want, err := cryptOnce(m, sh, mech.OpEncrypt, mc, key, pt)
				must(t, err)
				// GCM: the same IV again, for the comparison; a new key
				// object has a window of its own.
				k2 := mustSecret(t, m, sh, ck.CKK_AES, bytes.Repeat([]byte{7}, 32))
				in, buf := layoutOf(layout, pt, len(want))
				must(t, m.EncryptInit(sh, mc, k2))
				got, n, err := m.Encrypt(sh, in, Out{Cap: len(buf), Buf: buf})
				must(t, err)
				if n != len(want) || !bytes.Equal(got, want) {
					t.Fatalf("%s: encryption differs from the copying path", layout)
				}
				if layout != "shifted" && len(got) > 0 && &got[0] != &buf[0] {
					t.Fatalf("%s: output not written in the caller's buffer", layout)
				}
				in, buf = layoutOf(layout, want, len(want))
				must(t, m.DecryptInit(sh, mc, k2))
				got, _, err = m.Decrypt(sh, in, Out{Cap: len(buf), Buf: buf})
				must(t, err)
				if !bytes.Equal(got, pt) {
					t.Fatalf("%s: decryption differs", layout)
				}
				must(t, m.DestroyObject(sh, k2))
			}
		})
	}
	t.Run("multi-part", func(t *testing.T) {
		for _, mc := range []*Mechanism{{Type: ck.CKM_AES_CBC_PAD, Param: iv}, ctrMech(128, iv)} {
			want, err := cryptOnce(m, sh, mech.OpEncrypt, mc, key, msg)
			must(t, err)
			must(t, m.EncryptInit(sh, mc, key))
			var got []byte
			for _, part := range [][]byte{msg[:5], msg[5:300], msg[300:]} {
				buf := make([]byte, len(part)+16)
				r, _, err := m.EncryptUpdate(sh, part, Out{Cap: len(buf), Buf: buf})
				must(t, err)
				if len(r) > 0 && &r[0] != &buf[0] {
					t.Fatal("update output not written in the caller's buffer")
				}
				got = append(got, r...)
			}
			r, _, err := m.EncryptFinal(sh, Out{Cap: 16})
			must(t, err)
			if got = append(got, r...); !bytes.Equal(got, want) {
				t.Fatalf("mechanism %#x: multi-part output differs", mc.Type)
			}
		}
	})
}

// layoutOf places the input and the output buffer: apart, at one address,
// or the output one byte after the input.
func layoutOf(layout string, in []byte, outLen int) (src, dst []byte) {
	mem := make([]byte, max(len(in), outLen)+1+len(in))
	switch layout {
	case "in place":
		copy(mem, in)
		return mem[:len(in)], mem[:outLen]
	case "shifted":
		copy(mem, in)
		return mem[:len(in)], mem[1 : 1+outLen]
	}
	copy(mem[outLen+1:], in)
	return mem[outLen+1 : outLen+1+len(in)], mem[:outLen]
}

// TestCryptIntoCallerBufferFailure: a decryption that fails (bad CBC
// padding, a GCM tag that does not match) leaves no plaintext in the
// caller's buffer.
func TestCryptIntoCallerBufferFailure(t *testing.T) {
	m, _, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, bytes.Repeat([]byte{3}, 32))
	iv := make([]byte, 16)
	for _, c := range []struct {
		name string
		mech *Mechanism
		ct   func() []byte
		rv   ck.Error
	}{
		{"CBC_PAD bad padding", &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv}, func() []byte {
			ct, err := cryptOnce(m, sh, mech.OpEncrypt, &Mechanism{Type: ck.CKM_AES_CBC, Param: iv}, key, bytes.Repeat([]byte{'A'}, 64))
			must(t, err)
			return ct // decrypts to 'A's: padding byte 65
		}, ck.CKR_ENCRYPTED_DATA_INVALID},
		{"GCM tag mismatch", gcmMech(make([]byte, 12), nil, 128), func() []byte {
			ct, err := cryptOnce(m, sh, mech.OpEncrypt, gcmMech(make([]byte, 12), nil, 128), key, bytes.Repeat([]byte{'A'}, 64))
			must(t, err)
			ct[len(ct)-1] ^= 1
			return ct
		}, ck.CKR_ENCRYPTED_DATA_INVALID},
	} {
		t.Run(c.name, func(t *testing.T) {
			ct := c.ct()
			buf := bytes.Repeat([]byte{0xee}, len(ct))
			must(t, m.DecryptInit(sh, c.mech, key))
			_, _, err := m.Decrypt(sh, ct, Out{Cap: len(buf), Buf: buf})
			wantRV(t, err, c.rv)
			for _, b := range buf {
				if b == 'A' {
					t.Fatalf("plaintext left in the caller's buffer: %x", buf)
				}
			}
		})
	}
}
