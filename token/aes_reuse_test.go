package token

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestSymmetricPathAllocs: C_EncryptInit + C_Encrypt of AES into the
// caller's buffer reuses the session's ended operation, its binding and
// stream, and the key's prepared form: nothing is allocated but CTR's
// crypto/cipher stream.
func TestSymmetricPathAllocs(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates")
	}
	m, _, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, bytes.Repeat([]byte{3}, 32))
	data := make([]byte, 1024)
	out := make([]byte, len(data)+32)
	iv := make([]byte, 16)
	var n uint64
	for _, c := range []struct {
		name   string
		mc     *Mechanism
		allocs float64
	}{
		{"GCM", gcmMech(iv[:12], nil, 128), 0},
		{"GCM-AAD", gcmMech(iv[:12], []byte("header"), 128), 0},
		{"CBC", &Mechanism{Type: ck.CKM_AES_CBC, Param: iv}, 0},
		{"CBC-PAD", &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv}, 0},
		{"ECB", &Mechanism{Type: ck.CKM_AES_ECB}, 0},
		{"CTR", &Mechanism{Type: ck.CKM_AES_CTR, Param: append(ck.ULong(128), iv...)}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc := func() {
				n++
				binary.BigEndian.PutUint64(iv[4:], n) // a fresh GCM IV each time
				if c.mc.GCM != nil {
					copy(c.mc.GCM.IV, iv[:12])
				}
				must(t, m.EncryptInit(sh, c.mc, key))
				if _, _, err := m.Encrypt(sh, data, Out{Cap: len(out), Buf: out}); err != nil {
					t.Fatal(err)
				}
			}
			enc() // the prepared key, the spare operation and binding
			if got := testing.AllocsPerRun(50, enc); got > c.allocs {
				t.Fatalf("%v allocations per C_EncryptInit + C_Encrypt, want at most %v", got, c.allocs)
			}
		})
	}
}

// TestSymmetricRebindFresh: an Init that reuses the session's last
// operation of its kind (and the memory of its binding) starts from the
// new parameter alone: the GCM IV window still refuses a repeat, a
// refused parameter leaves the next Init working, and results match
// crypto/cipher whatever ran before on the session.
func TestSymmetricRebindFresh(t *testing.T) {
	m, _, sh := readyToken(t)
	val := bytes.Repeat([]byte{9}, 32)
	key := mustSecret(t, m, sh, ck.CKK_AES, val)
	b, _ := aes.NewCipher(val)
	g, _ := cipher.NewGCM(b)
	msg := bytes.Repeat([]byte("sixteen byte msg"), 4)
	ivA, ivB := []byte("iv number 01"), []byte("iv number 02")
	cbcIV := bytes.Repeat([]byte{5}, 16)
	cbc := func(iv []byte) []byte {
		ct := make([]byte, len(msg))
		cipher.NewCBCEncrypter(b, iv).CryptBlocks(ct, msg)
		return ct
	}
	ctr := func(iv []byte) []byte {
		ct := make([]byte, len(msg))
		cipher.NewCTR(b, iv).XORKeyStream(ct, msg)
		return ct
	}
	steps := []struct {
		name string
		kind mech.OpKind
		mc   *Mechanism
		want []byte // nil: refused with rv
		rv   ck.Error
	}{
		{"GCM A", mech.OpEncrypt, gcmMech(ivA, []byte("aad"), 128), g.Seal(nil, ivA, msg, []byte("aad")), 0},
		{"GCM A again", mech.OpEncrypt, gcmMech(ivA, nil, 128), nil, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM bad tag", mech.OpEncrypt, gcmMech(ivB, nil, 100), nil, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM B, no AAD", mech.OpEncrypt, gcmMech(ivB, nil, 128), g.Seal(nil, ivB, msg, nil), 0},
		{"GCM B again", mech.OpEncrypt, gcmMech(ivB, nil, 128), nil, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM A decrypt", mech.OpDecrypt, gcmMech(ivA, []byte("aad"), 128), msg, 0},
		{"CBC", mech.OpEncrypt, &Mechanism{Type: ck.CKM_AES_CBC, Param: cbcIV}, cbc(cbcIV), 0},
		{"CBC short IV", mech.OpEncrypt, &Mechanism{Type: ck.CKM_AES_CBC, Param: cbcIV[:8]}, nil, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CBC other IV", mech.OpEncrypt, &Mechanism{Type: ck.CKM_AES_CBC, Param: msg[:16]}, cbc(msg[:16]), 0},
		{"ECB", mech.OpEncrypt, &Mechanism{Type: ck.CKM_AES_ECB}, func() []byte {
			ct := make([]byte, len(msg))
			for i := 0; i < len(msg); i += 16 {
				b.Encrypt(ct[i:], msg[i:i+16])
			}
			return ct
		}(), 0},
		{"CTR", mech.OpEncrypt, ctrMech(128, cbcIV), ctr(cbcIV), 0},
		{"CTR bad bits", mech.OpEncrypt, ctrMech(0, cbcIV), nil, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CTR other block", mech.OpEncrypt, ctrMech(128, msg[16:32]), ctr(msg[16:32]), 0},
		{"GCM C after CTR", mech.OpEncrypt, gcmMech([]byte("iv number 03"), nil, 96), g.Seal(nil, []byte("iv number 03"), msg, nil)[:len(msg)+12], 0},
	}
	for _, s := range steps {
		got, err := cryptOnce(m, sh, s.kind, s.mc, key, msg)
		if s.kind == mech.OpDecrypt {
			got, err = cryptOnce(m, sh, s.kind, s.mc, key, g.Seal(nil, ivA, msg, []byte("aad")))
		}
		if s.want == nil {
			wantRV(t, err, s.rv)
			continue
		}
		if err != nil || !bytes.Equal(got, s.want) {
			t.Fatalf("%s: %x %v, want %x", s.name, got, err, s.want)
		}
	}
}
