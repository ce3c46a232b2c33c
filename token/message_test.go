package token

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
	"github.com/modexp-token/modexp-token/token/symtest"
)

// goGCM is Go's AES-GCM of key for an IV of ivLen bytes and a tag of
// tagLen bytes (crypto/cipher takes a short tag only with a 12-byte IV;
// a short tag is otherwise the full tag's prefix).
func goGCM(t *testing.T, key []byte, ivLen int) cipher.AEAD {
	t.Helper()
	b, err := aes.NewCipher(key)
	must(t, err)
	g, err := cipher.NewGCMWithNonceSize(b, ivLen)
	must(t, err)
	return g
}

// goSeal seals with Go's GCM: the ciphertext and the tag cut to tagLen.
func goSeal(t *testing.T, key, iv, aad, msg []byte, tagLen int) (ct, tag []byte) {
	t.Helper()
	s := goGCM(t, key, len(iv)).Seal(nil, iv, msg, aad)
	return s[:len(msg)], s[len(msg) : len(msg)+tagLen]
}

// gcmMsg is a CK_GCM_MESSAGE_PARAMS of an IV of ivLen bytes.
func gcmMsg(iv []byte, fixed, gen uint64, tagBits uint64) *GCMMessageParams {
	return &GCMMessageParams{IV: iv, FixedBits: fixed, Generator: gen, TagBits: tagBits}
}

// encMsg encrypts one message single-part with the two-call convention
// and returns the ciphertext, the IV used and the tag.
func encMsg(t *testing.T, m *Module, sh uint64, p *GCMMessageParams, aad, msg []byte) (ct, iv, tag []byte, err error) {
	t.Helper()
	_, need, mo, err := m.EncryptMessage(sh, p, aad, msg, Out{Query: true})
	if err != nil {
		return nil, nil, nil, err
	}
	if mo != nil || need != len(msg) {
		t.Fatalf("length report: need %d, out %+v; want %d and nothing generated", need, mo, len(msg))
	}
	ct, _, mo, err = m.EncryptMessage(sh, p, aad, msg, Out{Cap: need})
	if err != nil {
		return nil, nil, nil, err
	}
	iv = p.IV
	if mo.IV != nil {
		iv = mo.IV
	}
	return ct, iv, mo.Tag, nil
}

// TestMessageGCMGenerators: every generator through C_EncryptMessage,
// several messages per Init, cross-checked with Go's crypto/cipher on the
// IV the token returned; the fixed prefix is kept, the IVs differ, the
// counter counts.
func TestMessageGCMGenerators(t *testing.T) {
	m, _, sh := readyToken(t)
	val := bytes.Repeat([]byte{0x42}, 32)
	prefix := []byte{0xde, 0xad, 0xbe, 0xef, 0xa5, 0x5a, 0xff, 0x00, 0x11, 0x22, 0x33, 0x44}
	cases := []struct {
		name    string
		gen     uint64
		ivLen   int
		fixed   uint64
		tagBits uint64
		counter bool
	}{
		{"counter, 32-bit prefix", ck.CKG_GENERATE_COUNTER, 12, 32, 128, true},
		{"generate, no prefix", ck.CKG_GENERATE, 12, 0, 128, true},
		{"counter, 12-bit prefix, 96-bit tag", ck.CKG_GENERATE_COUNTER, 12, 12, 96, true},
		{"counter, 16-byte IV", ck.CKG_GENERATE_COUNTER, 16, 40, 128, true},
		{"counter xor, 32-bit prefix", ck.CKG_GENERATE_COUNTER_XOR, 12, 32, 128, true},
		{"random, 32-bit prefix", ck.CKG_GENERATE_RANDOM, 12, 32, 128, false},
		{"random, 32-byte IV, 32-bit tag", ck.CKG_GENERATE_RANDOM, 32, 64, 32, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := mustSecret(t, m, sh, ck.CKK_AES, val)
			must(t, m.MessageEncryptInit(sh, &Mechanism{Type: ck.CKM_AES_GCM}, key))
			defer func() { must(t, m.MessageEncryptFinal(sh)) }()
			base := bytes.Repeat(prefix, 3)[:c.ivLen]
			seen := map[string]bool{}
			var last *big.Int
			for i := range 5 {
				aad, msg := []byte{byte(i), 'a'}, bytes.Repeat([]byte{byte(i)}, 10+i)
				p := gcmMsg(append([]byte(nil), base...), c.fixed, c.gen, c.tagBits)
				ct, iv, tag, err := encMsg(t, m, sh, p, aad, msg)
				must(t, err)
				if len(iv) != c.ivLen || seen[string(iv)] {
					t.Fatalf("message %d: IV %x (len %d) repeated or resized", i, iv, len(iv))
				}
				seen[string(iv)] = true
				if !samePrefixBits(iv, base, int(c.fixed)) {
					t.Fatalf("message %d: IV %x lost the %d fixed bits of %x", i, iv, c.fixed, base)
				}
				wantCT, wantTag := goSeal(t, val, iv, aad, msg, int(c.tagBits/8))
				if !bytes.Equal(ct, wantCT) || !bytes.Equal(tag, wantTag) {
					t.Fatalf("message %d: %x/%x, crypto/cipher says %x/%x", i, ct, tag, wantCT, wantTag)
				}
				if c.counter {
					free := freeBits(iv, int(c.fixed))
					if c.gen == ck.CKG_GENERATE_COUNTER_XOR {
						free = new(big.Int).Xor(free, freeBits(base, int(c.fixed)))
					}
					if last != nil && new(big.Int).Sub(free, last).Cmp(big.NewInt(1)) != 0 {
						t.Fatalf("message %d: counter %x after %x", i, free, last)
					}
					last = free
				}
			}
		})
	}
}

// samePrefixBits reports whether a and b agree on their first n bits.
func samePrefixBits(a, b []byte, n int) bool {
	x, y := new(big.Int).SetBytes(a), new(big.Int).SetBytes(b)
	shift := uint(8*len(a) - n)
	return new(big.Int).Rsh(x, shift).Cmp(new(big.Int).Rsh(y, shift)) == 0
}

// freeBits is the value of iv's bits after the first fixed.
func freeBits(iv []byte, fixed int) *big.Int {
	x := new(big.Int).SetBytes(iv)
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(8*len(iv)-fixed)), big.NewInt(1))
	return x.And(x, mask)
}

// TestMessageGCMCounterPerKey: one key's counter is shared by every
// session and operation of the Module (no repeat across them); another key
// object has its own; the window sees the generated IVs (a caller IV equal
// to one is refused).
func TestMessageGCMCounterPerKey(t *testing.T) {
	m, slot, sh := readyToken(t)
	sh2 := openRW(t, m, slot)
	val := bytes.Repeat([]byte{0x17}, 16)
	key := mustSecret(t, m, sh, ck.CKK_AES, val)
	seen := map[string]bool{}
	for round := range 3 {
		for _, s := range []uint64{sh, sh2} {
			must(t, m.MessageEncryptInit(s, &Mechanism{Type: ck.CKM_AES_GCM}, key))
			for range 3 {
				_, iv, _, err := encMsg(t, m, s, gcmMsg(make([]byte, 12), 0, ck.CKG_GENERATE_COUNTER, 128), nil, []byte("x"))
				must(t, err)
				if seen[string(iv)] {
					t.Fatalf("round %d: IV %x repeated across operations", round, iv)
				}
				seen[string(iv)] = true
			}
			must(t, m.MessageEncryptFinal(s))
		}
	}
	// A caller IV equal to a generated one is refused; a fresh one is taken.
	must(t, m.MessageEncryptInit(sh, &Mechanism{Type: ck.CKM_AES_GCM}, key))
	var generated []byte
	for iv := range seen {
		generated = []byte(iv)
		break
	}
	_, _, _, err := encMsg(t, m, sh, gcmMsg(generated, 0, ck.CKG_NO_GENERATE, 128), nil, []byte("x"))
	wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	fresh := []byte("caller's IV!")
	_, _, _, err = encMsg(t, m, sh, gcmMsg(fresh, 0, ck.CKG_NO_GENERATE, 128), nil, []byte("x"))
	must(t, err)
	_, _, _, err = encMsg(t, m, sh, gcmMsg(fresh, 0, ck.CKG_NO_GENERATE, 128), nil, []byte("y"))
	wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID) // repeated caller IV
	must(t, m.MessageEncryptFinal(sh))
}

// TestMessageGCMCounterExhausted: a 2-bit free field serves 4 counter IVs
// of a key, then CKR_KEY_EXHAUSTED, never a repeat.
func TestMessageGCMCounterExhausted(t *testing.T) {
	m, _, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 16))
	must(t, m.MessageEncryptInit(sh, &Mechanism{Type: ck.CKM_AES_GCM}, key))
	seen := map[string]bool{}
	for i := range 5 {
		_, iv, _, err := encMsg(t, m, sh, gcmMsg(make([]byte, 12), 94, ck.CKG_GENERATE_COUNTER, 128), nil, []byte("x"))
		if i == 4 {
			wantRV(t, err, ck.CKR_KEY_EXHAUSTED)
			break
		}
		must(t, err)
		if seen[string(iv)] {
			t.Fatalf("IV %x repeated", iv)
		}
		seen[string(iv)] = true
	}
}

// TestMessageGCMCallerIVSwitch: gcm_caller_iv = false refuses
// CKG_NO_GENERATE for encryption and takes the generators; decryption
// with the IV returned works.
func TestMessageGCMCallerIVSwitch(t *testing.T) {
	m, _, sh := readyTokenWith(t, "gcm_caller_iv = false\n")
	val := make([]byte, 16)
	key := mustSecret(t, m, sh, ck.CKK_AES, val)
	must(t, m.MessageEncryptInit(sh, &Mechanism{Type: ck.CKM_AES_GCM}, key))
	_, _, _, err := encMsg(t, m, sh, gcmMsg([]byte("twelve bytes"), 0, ck.CKG_NO_GENERATE, 128), nil, []byte("x"))
	wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	ct, iv, tag, err := encMsg(t, m, sh, gcmMsg(make([]byte, 12), 0, ck.CKG_GENERATE, 128), []byte("h"), []byte("secret"))
	must(t, err)
	must(t, m.MessageDecryptInit(sh, &Mechanism{Type: ck.CKM_AES_GCM}, key))
	pt, _, err := m.DecryptMessage(sh, &GCMMessageParams{IV: iv, Tag: tag, TagBits: 128}, []byte("h"), ct, Out{Cap: len(ct)})
	must(t, err)
	if string(pt) != "secret" {
		t.Fatalf("decrypted %q", pt)
	}
}

// TestMessageGCMMultiPart: Begin/Next (several parts, CKF_END_OF_MESSAGE)
// gives what single-part and crypto/cipher give, for encryption and
// decryption, several messages per Init; the IV comes at Begin, the tag
// with the last part.
func TestMessageGCMMultiPart(t *testing.T) {
	m, _, sh := readyToken(t)
	val := bytes.Repeat([]byte{5}, 24)
	key := mustSecret(t, m, sh, ck.CKK_AES, val)
	must(t, m.MessageEncryptInit(sh, &Mechanism{Type: ck.CKM_AES_GCM}, key))
	must(t, m.MessageDecryptInit(sh, &Mechanism{Type: ck.CKM_AES_GCM}, key))
	msg, aad := bytes.Repeat([]byte("0123456789"), 7), []byte("associated")
	for _, parts := range [][]int{{70}, {1, 69}, {16, 16, 16, 22}, {0, 0, 70}} {
		p := gcmMsg(make([]byte, 12), 8, ck.CKG_GENERATE_COUNTER, 112)
		mo, err := m.EncryptMessageBegin(sh, p, aad)
		must(t, err)
		iv := mo.IV
		var ct []byte
		rest := msg
		for i, n := range parts {
			end := i == len(parts)-1
			part := rest[:n]
			rest = rest[n:]
			_, need, _, err := m.EncryptMessageNext(sh, p, part, Out{Query: true}, end)
			must(t, err)
			out, _, mo, err := m.EncryptMessageNext(sh, p, part, Out{Cap: need}, end)
			must(t, err)
			ct = append(ct, out...)
			if end {
				wantCT, wantTag := goSeal(t, val, iv, aad, msg, 14)
				if !bytes.Equal(ct, wantCT) || !bytes.Equal(mo.Tag, wantTag) {
					t.Fatalf("parts %v: %x/%x, want %x/%x", parts, ct, mo.Tag, wantCT, wantTag)
				}
				// Decrypt in the same parts.
				dp := &GCMMessageParams{IV: iv, TagBits: 112, Tag: mo.Tag}
				must(t, m.DecryptMessageBegin(sh, dp, aad))
				var pt []byte
				crest := ct
				for j, k := range parts {
					last := j == len(parts)-1
					out, _, err := m.DecryptMessageNext(sh, dp, crest[:k], Out{Cap: len(ct)}, last)
					must(t, err)
					pt = append(pt, out...)
					crest = crest[k:]
				}
				if !bytes.Equal(pt, msg) {
					t.Fatalf("parts %v: decrypted %q", parts, pt)
				}
			}
		}
	}
	must(t, m.MessageEncryptFinal(sh))
	must(t, m.MessageDecryptFinal(sh))
}

// TestMessageReturnCodes: the standard's answers for calls out of order,
// bad parameters, short buffers and bad tags; an error ends the message,
// not the operation.
func TestMessageReturnCodes(t *testing.T) {
	m, _, sh := readyToken(t)
	val := make([]byte, 16)
	key := mustSecret(t, m, sh, ck.CKK_AES, val)
	gcm := &Mechanism{Type: ck.CKM_AES_GCM}
	gen := func() *GCMMessageParams { return gcmMsg(make([]byte, 12), 0, ck.CKG_GENERATE, 128) }
	steps := []struct {
		name string
		call func() error
		rv   ck.Error
	}{
		{"EncryptMessage before Init", func() error {
			_, _, _, err := m.EncryptMessage(sh, gen(), nil, []byte("x"), Out{Cap: 1})
			return err
		}, ck.CKR_OPERATION_NOT_INITIALIZED},
		{"Final before Init", func() error { return m.MessageEncryptFinal(sh) }, ck.CKR_OPERATION_NOT_INITIALIZED},
		{"Init with a parameter", func() error { return m.MessageEncryptInit(sh, gcmMech([]byte("twelve bytes"), nil, 128), key) }, ck.CKR_MECHANISM_PARAM_INVALID},
		{"Init of a mechanism without message encryption", func() error {
			return m.MessageEncryptInit(sh, &Mechanism{Type: ck.CKM_AES_ECB}, key)
		}, ck.CKR_MECHANISM_INVALID},
		{"Init", func() error { return m.MessageEncryptInit(sh, gcm, key) }, 0},
		{"Init again", func() error { return m.MessageEncryptInit(sh, gcm, key) }, ck.CKR_OPERATION_ACTIVE},
		{"classic C_EncryptInit beside it", func() error {
			err := m.EncryptInit(sh, gcmMech([]byte("another IV.."), nil, 128), key)
			if err == nil {
				err = m.SessionCancel(sh, ck.CKF_ENCRYPT)
			}
			return err
		}, 0},
		{"no parameter", func() error {
			_, _, _, err := m.EncryptMessage(sh, nil, nil, []byte("x"), Out{Cap: 1})
			return err
		}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"tag of 100 bits", func() error {
			_, _, _, err := m.EncryptMessage(sh, gcmMsg(make([]byte, 12), 0, ck.CKG_GENERATE, 100), nil, []byte("x"), Out{Cap: 1})
			return err
		}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"unknown generator", func() error {
			_, _, _, err := m.EncryptMessage(sh, gcmMsg(make([]byte, 12), 0, 9, 128), nil, []byte("x"), Out{Cap: 1})
			return err
		}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"every IV bit fixed", func() error {
			_, _, _, err := m.EncryptMessage(sh, gcmMsg(make([]byte, 12), 96, ck.CKG_GENERATE, 128), nil, []byte("x"), Out{Cap: 1})
			return err
		}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"random with 32 free bits", func() error {
			_, _, _, err := m.EncryptMessage(sh, gcmMsg(make([]byte, 12), 64, ck.CKG_GENERATE_RANDOM, 128), nil, []byte("x"), Out{Cap: 1})
			return err
		}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"empty IV", func() error {
			_, _, _, err := m.EncryptMessage(sh, gcmMsg(nil, 0, ck.CKG_GENERATE, 128), nil, []byte("x"), Out{Cap: 1})
			return err
		}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"buffer too small", func() error {
			_, need, mo, err := m.EncryptMessage(sh, gen(), nil, []byte("abc"), Out{Cap: 2})
			if need != 3 || mo != nil {
				t.Fatalf("need %d, out %+v", need, mo)
			}
			return err
		}, ck.CKR_BUFFER_TOO_SMALL},
		{"still active after the errors", func() error {
			_, _, _, err := m.EncryptMessage(sh, gen(), nil, []byte("abc"), Out{Cap: 3})
			return err
		}, 0},
		{"Next before Begin", func() error {
			_, _, _, err := m.EncryptMessageNext(sh, gen(), []byte("x"), Out{Cap: 1}, true)
			return err
		}, ck.CKR_OPERATION_NOT_INITIALIZED},
		{"Begin", func() error { _, err := m.EncryptMessageBegin(sh, gen(), nil); return err }, 0},
		{"Begin again", func() error { _, err := m.EncryptMessageBegin(sh, gen(), nil); return err }, ck.CKR_OPERATION_ACTIVE},
		{"single-part during a message", func() error {
			_, _, _, err := m.EncryptMessage(sh, gen(), nil, []byte("x"), Out{Cap: 1})
			return err
		}, ck.CKR_OPERATION_ACTIVE},
		{"last part without parameter", func() error {
			_, _, _, err := m.EncryptMessageNext(sh, nil, []byte("x"), Out{Cap: 1}, true)
			return err
		}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"that ended the message", func() error {
			_, _, _, err := m.EncryptMessageNext(sh, gen(), []byte("x"), Out{Cap: 1}, true)
			return err
		}, ck.CKR_OPERATION_NOT_INITIALIZED},
		{"Final", func() error { return m.MessageEncryptFinal(sh) }, 0},
		{"Final again", func() error { return m.MessageEncryptFinal(sh) }, ck.CKR_OPERATION_NOT_INITIALIZED},
	}
	for _, s := range steps {
		wantRVNamed(t, s.name, s.call(), s.rv)
	}

	// Decryption: a bad tag is CKR_ENCRYPTED_DATA_INVALID and releases
	// nothing; the operation goes on.
	must(t, m.MessageEncryptInit(sh, gcm, key))
	ct, iv, tag, err := encMsg(t, m, sh, gen(), []byte("aad"), []byte("plaintext"))
	must(t, err)
	must(t, m.MessageDecryptInit(sh, gcm, key))
	bad := append([]byte(nil), tag...)
	bad[0] ^= 1
	pt, _, err := m.DecryptMessage(sh, &GCMMessageParams{IV: iv, Tag: bad, TagBits: 128}, []byte("aad"), ct, Out{Cap: 64})
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_INVALID)
	if pt != nil {
		t.Fatalf("released %x on a bad tag", pt)
	}
	_, _, err = m.DecryptMessage(sh, &GCMMessageParams{IV: iv, Tag: tag, TagBits: 128}, []byte("AAD"), ct, Out{Cap: 64})
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_INVALID)
	pt, _, err = m.DecryptMessage(sh, &GCMMessageParams{IV: iv, Tag: tag, TagBits: 128}, []byte("aad"), ct, Out{Cap: 64})
	must(t, err)
	if string(pt) != "plaintext" {
		t.Fatalf("decrypted %q", pt)
	}
	// C_SessionCancel with CKF_MESSAGE_* ends them.
	must(t, m.SessionCancel(sh, ck.CKF_MESSAGE_ENCRYPT|ck.CKF_MESSAGE_DECRYPT))
	wantRV(t, m.MessageDecryptFinal(sh), ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRV(t, m.MessageEncryptFinal(sh), ck.CKR_OPERATION_NOT_INITIALIZED)
}

// wantRVNamed is wantRV for a named step.
func wantRVNamed(t *testing.T, name string, err error, code ck.Error) {
	t.Helper()
	if code == 0 && err != nil || code != 0 && !isRV(err, code) {
		t.Fatalf("%s: %v, want %v", name, err, code)
	}
}

// TestMessageGCMWycheproof runs the Wycheproof AES-GCM vectors through
// C_DecryptMessage: the valid ones decrypt to their message, the invalid
// ones are refused.
func TestMessageGCMWycheproof(t *testing.T) {
	vs, err := symtest.Load(symtest.GCM)
	must(t, err)
	m, _, sh := readyToken(t)
	keys := map[string]uint64{}
	ran := 0
	for _, v := range vs {
		if len(v.IV) == 0 || len(v.Tag) != 16 || (len(v.Key) != 16 && len(v.Key) != 24 && len(v.Key) != 32) {
			continue // outside CK_GCM_MESSAGE_PARAMS's range (an empty IV) or the token's key sizes
		}
		key, ok := keys[string(v.Key)]
		if !ok {
			key = mustSecret(t, m, sh, ck.CKK_AES, v.Key)
			keys[string(v.Key)] = key
		}
		must(t, m.MessageDecryptInit(sh, &Mechanism{Type: ck.CKM_AES_GCM}, key))
		pt, _, err := m.DecryptMessage(sh, &GCMMessageParams{IV: v.IV, Tag: v.Tag, TagBits: 128}, v.AAD, v.CT, Out{Cap: len(v.CT)})
		must(t, m.MessageDecryptFinal(sh))
		switch {
		case v.Valid && (err != nil || !bytes.Equal(pt, v.Msg)):
			t.Errorf("tcId %d (%s): %v, %x", v.TcID, v.Comment, err, pt)
		case !v.Valid && !v.Acceptable && err == nil:
			t.Errorf("tcId %d (%s): invalid vector accepted", v.TcID, v.Comment)
		}
		ran++
	}
	if ran < 100 {
		t.Fatalf("only %d vectors ran", ran)
	}
}

// TestMessageSign: HMAC and ECDSA through C_SignMessage and
// Begin/Next, several messages per Init, checked against crypto/hmac and
// the classic C_Verify; the two-call convention recomputes for other data;
// a bad signature is CKR_SIGNATURE_INVALID and the operation goes on.
func TestMessageSign(t *testing.T) {
	m, _, sh := readyToken(t)
	hk := bytes.Repeat([]byte{0x0b}, 32)
	hkey := mustSecret(t, m, sh, ck.CKK_GENERIC_SECRET, hk)
	pub, priv := genEC(t, m, sh, "P-256", false)
	cases := []struct {
		name           string
		mech           uint64
		signKey, verif uint64
		deterministic  bool
	}{
		{"HMAC-SHA256", ck.CKM_SHA256_HMAC, hkey, hkey, true},
		{"ECDSA-SHA256", ck.CKM_ECDSA_SHA256, priv, pub, false},
		{"raw ECDSA (parts buffered)", ck.CKM_ECDSA, priv, pub, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mc := &Mechanism{Type: c.mech}
			must(t, m.MessageSignInit(sh, mc, c.signKey))
			must(t, m.MessageVerifyInit(sh, mc, c.verif))
			for i, parts := range [][]string{{"first message"}, {"sec", "ond mes", "sage"}, {"", "third"}} {
				var whole []byte
				for _, p := range parts {
					whole = append(whole, p...)
				}
				if c.mech == ck.CKM_ECDSA {
					d := sha256.Sum256(whole)
					whole = d[:]
					parts = []string{string(d[:7]), string(d[7:])}
				}
				// Single part, with a length query for other data first.
				_, need, err := m.SignMessage(sh, false, []byte("other data"), Out{Query: true})
				must(t, err)
				sig, _, err := m.SignMessage(sh, false, whole, Out{Cap: need + 8})
				must(t, err)
				must(t, verifyWith(t, m, sh, c.verif, c.mech, whole, sig))
				if c.deterministic {
					mac := hmac.New(crypto.SHA256.New, hk)
					mac.Write(whole)
					if !bytes.Equal(sig, mac.Sum(nil)) {
						t.Fatalf("message %d: HMAC %x, crypto/hmac says %x", i, sig, mac.Sum(nil))
					}
				}
				must(t, m.VerifyMessage(sh, false, whole, sig))
				// Multi-part.
				must(t, m.SignMessageBegin(sh, false))
				for _, p := range parts[:len(parts)-1] {
					_, _, err := m.SignMessageNext(sh, false, []byte(p), false, Out{})
					must(t, err)
				}
				lastPart := []byte(parts[len(parts)-1])
				_, need, err = m.SignMessageNext(sh, false, lastPart, true, Out{Cap: 1})
				wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
				sig2, _, err := m.SignMessageNext(sh, false, lastPart, true, Out{Cap: need})
				must(t, err)
				must(t, verifyWith(t, m, sh, c.verif, c.mech, whole, sig2))
				if c.deterministic && !bytes.Equal(sig, sig2) {
					t.Fatalf("message %d: multi-part %x, single %x", i, sig2, sig)
				}
				must(t, m.VerifyMessageBegin(sh, false))
				for _, p := range parts[:len(parts)-1] {
					must(t, m.VerifyMessageNext(sh, false, []byte(p), nil))
				}
				must(t, m.VerifyMessageNext(sh, false, lastPart, sig2))
				bad := append([]byte(nil), sig...)
				bad[len(bad)-1] ^= 1
				wantRV(t, m.VerifyMessage(sh, false, whole, bad), ck.CKR_SIGNATURE_INVALID)
			}
			wantRV(t, m.SignMessageBegin(sh, true), ck.CKR_MECHANISM_PARAM_INVALID)
			must(t, m.MessageSignFinal(sh))
			must(t, m.MessageVerifyFinal(sh))
			wantRV(t, m.MessageSignFinal(sh), ck.CKR_OPERATION_NOT_INITIALIZED)
		})
	}
}

// TestMessageSignRetryOtherData: a length report of the last part kept
// for one data, a retry with other data computes the other's signature.
func TestMessageSignRetryOtherData(t *testing.T) {
	m, _, sh := readyToken(t)
	hk := []byte("a key of HMAC")
	key := mustSecret(t, m, sh, ck.CKK_GENERIC_SECRET, hk)
	must(t, m.MessageSignInit(sh, &Mechanism{Type: ck.CKM_SHA256_HMAC}, key))
	must(t, m.SignMessageBegin(sh, false))
	_, _, err := m.SignMessageNext(sh, false, []byte("head "), false, Out{})
	must(t, err)
	_, need, err := m.SignMessageNext(sh, false, []byte("tail A"), true, Out{Query: true})
	must(t, err)
	sig, _, err := m.SignMessageNext(sh, false, []byte("tail B"), true, Out{Cap: need})
	must(t, err)
	mac := hmac.New(sha256.New, hk)
	mac.Write([]byte("head tail B"))
	if !bytes.Equal(sig, mac.Sum(nil)) {
		t.Fatalf("retry with other data: %x, want %x", sig, mac.Sum(nil))
	}
}

// TestMessageFlags: every CKF_MESSAGE_* flag C_GetMechanismInfo shows on
// the slot is an Init that works, and its absence one refused.
func TestMessageFlags(t *testing.T) {
	m, slot, sh := readyToken(t)
	aes := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 16))
	list, err := m.MechanismList(slot)
	must(t, err)
	for _, typ := range list {
		info, err := m.MechanismInfo(slot, typ)
		must(t, err)
		if info.Flags&mech.MessageKinds != 0 && info.Flags&ck.CKF_MULTI_MESSAGE == 0 {
			t.Errorf("%s: message flags without CKF_MULTI_MESSAGE", ck.Name("CKM_", typ))
		}
		for _, f := range []struct{ msg, classic uint64 }{
			{ck.CKF_MESSAGE_ENCRYPT, ck.CKF_ENCRYPT}, {ck.CKF_MESSAGE_DECRYPT, ck.CKF_DECRYPT},
			{ck.CKF_MESSAGE_SIGN, ck.CKF_SIGN}, {ck.CKF_MESSAGE_VERIFY, ck.CKF_VERIFY},
		} {
			if info.Flags&f.msg != 0 && info.Flags&f.classic == 0 {
				t.Errorf("%s: %#x without its classic flag", ck.Name("CKM_", typ), f.msg)
			}
		}
	}
	gcmInfo, err := m.MechanismInfo(slot, ck.CKM_AES_GCM)
	must(t, err)
	if gcmInfo.Flags&(ck.CKF_MESSAGE_ENCRYPT|ck.CKF_MESSAGE_DECRYPT|ck.CKF_MULTI_MESSAGE) != ck.CKF_MESSAGE_ENCRYPT|ck.CKF_MESSAGE_DECRYPT|ck.CKF_MULTI_MESSAGE {
		t.Fatalf("CKM_AES_GCM flags %#x lack the message flags", gcmInfo.Flags)
	}
	// AES-CBC has no message flag: its message Init is refused.
	cbc, err := m.MechanismInfo(slot, ck.CKM_AES_CBC)
	must(t, err)
	if cbc.Flags&mech.MessageMask != 0 {
		t.Fatalf("CKM_AES_CBC flags %#x", cbc.Flags)
	}
	wantRV(t, m.MessageEncryptInit(sh, &Mechanism{Type: ck.CKM_AES_CBC}, aes), ck.CKR_MECHANISM_INVALID)
	// A slot without RSA PKCS#1 decryption has no message decryption either.
	if narrowMessageFlags(ck.CKF_MESSAGE_DECRYPT|ck.CKF_MULTI_MESSAGE|ck.CKF_ENCRYPT) != ck.CKF_ENCRYPT {
		t.Fatal("narrowMessageFlags kept a message flag without its classic one")
	}
}

// FuzzGCMMessageParams: any CK_GCM_MESSAGE_PARAMS is checked and its IV
// made without a panic, every refusal carries its CKR code; an accepted
// one keeps the IV's length and its fixed bits (all of a caller's IV),
// and a second message under the same parameter gets another IV.
func FuzzGCMMessageParams(f *testing.F) {
	f.Add(make([]byte, 12), uint64(0), uint64(ck.CKG_GENERATE), uint64(128))
	f.Add([]byte{1}, uint64(7), uint64(ck.CKG_GENERATE_COUNTER), uint64(32))
	f.Add(make([]byte, 40), uint64(300), uint64(ck.CKG_GENERATE_RANDOM), uint64(96))
	f.Add(make([]byte, 12), uint64(95), uint64(ck.CKG_GENERATE_COUNTER_XOR), uint64(120))
	f.Add([]byte("caller IV"), uint64(0), uint64(ck.CKG_NO_GENERATE), uint64(64))
	f.Fuzz(func(t *testing.T, iv []byte, fixed, gen, tagBits uint64) {
		op := &operation{slot: &slot{m: &Module{}, id: 1}, key: &object{handle: 1}}
		p := &GCMMessageParams{IV: iv, FixedBits: fixed, Generator: gen, TagBits: tagBits}
		err := (&mech.AESGCM{}).CheckMessageParam(p)
		var first []byte
		if err == nil {
			first, _, err = mech.MessageIV(op, p, true)
		}
		if err != nil {
			if rv := ck.RV(err); rv == 0 || rv == uint64(ck.CKR_GENERAL_ERROR) {
				t.Fatalf("refusal without its code: %v", err)
			}
			return
		}
		keep := int(fixed)
		if gen == ck.CKG_NO_GENERATE {
			keep = 8 * len(iv)
		}
		if len(first) != len(iv) || !samePrefixBits(first, iv, keep) {
			t.Fatalf("IV %x from %x lost its %d fixed bits", first, iv, keep)
		}
		second, _, err := mech.MessageIV(op, p, true)
		if err == nil && bytes.Equal(first, second) {
			t.Fatalf("IV %x given twice", first)
		}
		if err != nil && gen == ck.CKG_NO_GENERATE && !isRV(err, ck.CKR_MECHANISM_PARAM_INVALID) {
			t.Fatalf("repeated caller IV: %v", err)
		}
	})
}

// TestMessageGCMCounterConcurrent: sessions encrypting at once with one
// key's counter never get the same IV (run with -race).
func TestMessageGCMCounterConcurrent(t *testing.T) {
	m, slot, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 16))
	const sessions, each = 4, 50
	ivs := make(chan []byte, sessions*each)
	errs := make(chan error, sessions)
	for range sessions {
		s := openRW(t, m, slot)
		go func() {
			err := m.MessageEncryptInit(s, &Mechanism{Type: ck.CKM_AES_GCM}, key)
			for i := 0; i < each && err == nil; i++ {
				var mo *MessageOut
				p := gcmMsg(make([]byte, 12), 0, ck.CKG_GENERATE_COUNTER, 128)
				if _, _, mo, err = m.EncryptMessage(s, p, nil, []byte("x"), Out{Cap: 1}); err == nil {
					ivs <- mo.IV
				}
			}
			errs <- err
		}()
	}
	for range sessions {
		must(t, <-errs)
	}
	close(ivs)
	seen := map[string]bool{}
	for iv := range ivs {
		if seen[string(iv)] {
			t.Fatalf("IV %x given twice", iv)
		}
		seen[string(iv)] = true
	}
	if len(seen) != sessions*each {
		t.Fatalf("%d IVs, want %d", len(seen), sessions*each)
	}
}
