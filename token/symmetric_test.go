package token

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	mrand "math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// NIST SP 800-38A appendix F: the AES-128 key and the four plaintext
// blocks shared by the ECB, CBC and CTR examples.
var (
	sp38aKey = mustHex("2b7e151628aed2a6abf7158809cf4f3c")
	sp38aPT  = mustHex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51" +
		"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
	sp38aIV = mustHex("000102030405060708090a0b0c0d0e0f")
)

func TestAESKnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, sp38aKey)
	cases := []struct {
		name string
		mech *Mechanism
		ct   []byte
	}{
		{"F.1.1 ECB-AES128", &Mechanism{Type: ck.CKM_AES_ECB}, mustHex("3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf" +
			"43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4")},
		{"F.2.1 CBC-AES128", &Mechanism{Type: ck.CKM_AES_CBC, Param: sp38aIV}, mustHex("7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2" +
			"73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7")},
		{"F.5.1 CTR-AES128", ctrMech(128, mustHex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")), mustHex("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff" +
			"5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee")},
		// The same counter block with a 32-bit counter: no wrap within 4 blocks
		// (its low 32 bits are 0xfcfdfeff), so the same output.
		{"F.5.1 CTR, 32-bit counter", ctrMech(32, mustHex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")), mustHex("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff" +
			"5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, parts := range [][]int{nil, {1}, {15, 2}, {16, 16, 16}, {33}} {
				var got []byte
				var err error
				if parts == nil {
					got, err = cryptOnce(m, sh, mech.OpEncrypt, c.mech, key, sp38aPT)
				} else {
					got, err = cryptParts(m, sh, mech.OpEncrypt, c.mech, key, sp38aPT, parts)
				}
				if err != nil || !bytes.Equal(got, c.ct) {
					t.Fatalf("encrypt %v: %x, %v", parts, got, err)
				}
				if parts == nil {
					got, err = cryptOnce(m, sh, mech.OpDecrypt, c.mech, key, c.ct)
				} else {
					got, err = cryptParts(m, sh, mech.OpDecrypt, c.mech, key, c.ct, parts)
				}
				if err != nil || !bytes.Equal(got, sp38aPT) {
					t.Fatalf("decrypt %v: %x, %v", parts, got, err)
				}
			}
		})
	}
}

// TestAESCrossCheck compares every AES mode with crypto/cipher on random
// keys, messages and splits.
func TestAESCrossCheck(t *testing.T) {
	m, _, sh := readyToken(t)
	r := mrand.New(mrand.NewPCG(1, 2))
	for _, klen := range []int{16, 24, 32} {
		k := make([]byte, klen)
		rand.Read(k)
		key := mustSecret(t, m, sh, ck.CKK_AES, k)
		b, _ := aes.NewCipher(k)
		for i := 0; i < 20; i++ {
			n := r.IntN(100)
			msg := make([]byte, n)
			rand.Read(msg)
			iv := make([]byte, 16)
			rand.Read(iv)
			parts := []int{r.IntN(40), r.IntN(40)}
			// CBC_PAD against crypto/cipher with PKCS#7.
			p := 16 - n%16
			padded := append(append([]byte{}, msg...), bytes.Repeat([]byte{byte(p)}, p)...)
			want := make([]byte, len(padded))
			cipher.NewCBCEncrypter(b, iv).CryptBlocks(want, padded)
			checkBoth(t, m, sh, &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv}, key, msg, want, parts)
			// CTR against cipher.NewCTR (a 128-bit counter).
			want = make([]byte, n)
			cipher.NewCTR(b, iv).XORKeyStream(want, msg)
			checkBoth(t, m, sh, ctrMech(128, iv), key, msg, want, parts)
			// GCM: IV sizes 12 and 16, tags 16 and 12 bytes (Go's
			// NewGCMWithTagSize), and a cut 8-byte tag (the leading bytes).
			aad := msg[:n/3]
			for _, ivLen := range []int{12, 16} {
				for _, tag := range []int{16, 12, 8} {
					var g cipher.AEAD
					switch {
					case ivLen == 12 && tag >= 12:
						g, _ = cipher.NewGCMWithTagSize(b, tag)
					case ivLen == 12:
						g, _ = cipher.NewGCM(b)
					default:
						g, _ = cipher.NewGCMWithNonceSize(b, ivLen)
					}
					want = g.Seal(nil, iv[:ivLen], msg, aad)[:n+tag]
					checkBoth(t, m, sh, gcmMech(iv[:ivLen], aad, 8*tag), key, msg, want, parts)
					// A flipped tag bit is refused.
					bad := append([]byte{}, want...)
					bad[len(bad)-1] ^= 1
					if _, err := cryptOnce(m, sh, mech.OpDecrypt, gcmMech(iv[:ivLen], aad, 8*tag), key, bad); !isRV(err, ck.CKR_ENCRYPTED_DATA_INVALID) {
						t.Fatalf("GCM iv %d tag %d: bad tag: %v", ivLen, tag, err)
					}
				}
			}
			if n%16 == 0 {
				want = make([]byte, n)
				cipher.NewCBCEncrypter(b, iv).CryptBlocks(want, msg)
				checkBoth(t, m, sh, &Mechanism{Type: ck.CKM_AES_CBC, Param: iv}, key, msg, want, parts)
			}
		}
	}
}

// checkBoth encrypts (single- and multi-part) to want and decrypts back.
func checkBoth(t *testing.T, m *Module, sh uint64, mc *Mechanism, key uint64, msg, want []byte, parts []int) {
	t.Helper()
	name := ck.Name("CKM_", mc.Type)
	// One vector is encrypted twice (single- and multi-part) on purpose.
	forgetGCMIVs(m)
	got, err := cryptOnce(m, sh, mech.OpEncrypt, mc, key, msg)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s encrypt: %x, %v; want %x", name, got, err, want)
	}
	forgetGCMIVs(m)
	got, err = cryptParts(m, sh, mech.OpEncrypt, mc, key, msg, parts)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s encrypt %v: %x, %v; want %x", name, parts, got, err, want)
	}
	got, err = cryptOnce(m, sh, mech.OpDecrypt, mc, key, want)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("%s decrypt: %x, %v", name, got, err)
	}
	got, err = cryptParts(m, sh, mech.OpDecrypt, mc, key, want, parts)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("%s decrypt %v: %x, %v", name, parts, got, err)
	}
}

// TestCMACKnownAnswers: RFC 4493 §4 (AES-128) and NIST SP 800-38B
// appendix D.2/D.3 (AES-192, AES-256) examples.
func TestCMACKnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	msg := sp38aPT
	cases := []struct {
		key  []byte
		n    int
		want []byte
	}{
		{sp38aKey, 0, mustHex("bb1d6929e95937287fa37d129b756746")},
		{sp38aKey, 16, mustHex("070a16b46b4d4144f79bdd9dd04a287c")},
		{sp38aKey, 40, mustHex("dfa66747de9ae63030ca32611497c827")},
		{sp38aKey, 64, mustHex("51f0bebf7e3b9d92fc49741779363cfe")},
		{mustHex("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b"), 0, mustHex("d17ddf46adaacde531cac483de7a9367")},
		{mustHex("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b"), 64, mustHex("a1d5df0eed790f794d77589659f39a11")},
		{mustHex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"), 0, mustHex("028962f61b7bf89efc6b551f4667d983")},
		{mustHex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"), 64, mustHex("e1992190549f6ed5696a2c056c315410")},
	}
	for _, c := range cases {
		key := mustSecret(t, m, sh, ck.CKK_AES, c.key)
		for _, parts := range [][]int{nil, {1, 15}, {16}, {17, 16}} {
			var got []byte
			var err error
			if parts == nil {
				got, err = signOnce(m, sh, &Mechanism{Type: ck.CKM_AES_CMAC}, key, msg[:c.n])
			} else {
				got, err = signParts(m, sh, &Mechanism{Type: ck.CKM_AES_CMAC}, key, msg[:c.n], parts)
			}
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("CMAC key %d bytes, msg %d bytes, parts %v: %x, %v; want %x", len(c.key), c.n, parts, got, err, c.want)
			}
		}
		got, err := signOnce(m, sh, generalMech(ck.CKM_AES_CMAC_GENERAL, 4), key, msg[:c.n])
		if err != nil || !bytes.Equal(got, c.want[:4]) {
			t.Fatalf("CMAC_GENERAL(4): %x, %v", got, err)
		}
		must(t, verifyOnce(m, sh, &Mechanism{Type: ck.CKM_AES_CMAC}, key, msg[:c.n], c.want))
	}
}

// TestHMACKnownAnswers: RFC 4231 test case 2 ("what do ya want for
// nothing?") and test case 6 (a 131-byte key), SHA-256 and SHA-512, and a
// cross-check of every HMAC with crypto/hmac.
func TestHMACKnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	jefe := mustSecret(t, m, sh, ck.CKK_GENERIC_SECRET, []byte("Jefe"))
	data := []byte("what do ya want for nothing?")
	long := mustSecret(t, m, sh, ck.CKK_SHA256_HMAC, bytes.Repeat([]byte{0xaa}, 131))
	data6 := []byte("Test Using Larger Than Block-Size Key - Hash Key First")
	cases := []struct {
		mech uint64
		key  uint64
		data []byte
		want []byte
	}{
		{ck.CKM_SHA256_HMAC, jefe, data, mustHex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")},
		{ck.CKM_SHA512_HMAC, jefe, data, mustHex("164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737")},
		{ck.CKM_SHA256_HMAC, long, data6, mustHex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")},
	}
	for _, c := range cases {
		got, err := signOnce(m, sh, &Mechanism{Type: c.mech}, c.key, c.data)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Fatalf("%s: %x, %v; want %x", ck.Name("CKM_", c.mech), got, err, c.want)
		}
		must(t, verifyParts(m, sh, &Mechanism{Type: c.mech}, c.key, c.data, c.want))
	}
	// An HMAC key of another hash's type is refused.
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA512_HMAC}, long), ck.CKR_KEY_TYPE_INCONSISTENT)
	// Cross-check with crypto/hmac, truncation by the _GENERAL forms.
	k := make([]byte, 40)
	rand.Read(k)
	key := mustSecret(t, m, sh, ck.CKK_GENERIC_SECRET, k)
	msg := make([]byte, 300)
	rand.Read(msg)
	for _, hm := range mech.HMACMechs {
		h := hmac.New(hm.Hash.New, k)
		h.Write(msg)
		want := h.Sum(nil)
		got, err := signParts(m, sh, &Mechanism{Type: hm.MAC}, key, msg, []int{64, 1, 100})
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %x, %v", ck.Name("CKM_", hm.MAC), got, err)
		}
		got, err = signOnce(m, sh, generalMech(hm.General, 10), key, msg)
		if err != nil || !bytes.Equal(got, want[:10]) {
			t.Fatalf("%s(10): %x, %v", ck.Name("CKM_", hm.General), got, err)
		}
		must(t, verifyOnce(m, sh, generalMech(hm.General, 10), key, msg, want[:10]))
		wantRV(t, verifyOnce(m, sh, generalMech(hm.General, 10), key, msg, want[:11]), ck.CKR_SIGNATURE_LEN_RANGE)
		wantRV(t, verifyOnce(m, sh, &Mechanism{Type: hm.MAC}, key, msg, want[:len(want)-1]), ck.CKR_SIGNATURE_LEN_RANGE)
		bad := append([]byte{}, want...)
		bad[0] ^= 0x80
		wantRV(t, verifyOnce(m, sh, &Mechanism{Type: hm.MAC}, key, msg, bad), ck.CKR_SIGNATURE_INVALID)
	}
}

// TestDigestKeySecret: C_DigestKey feeds a secret key's value into the
// digest, sensitive or not; asymmetric keys stay indigestible.
func TestDigestKeySecret(t *testing.T) {
	m, _, sh := readyToken(t)
	v := []byte("0123456789abcdef")
	key, err := m.CreateObject(sh, aesTmpl(v))
	must(t, err)
	must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
	must(t, m.DigestUpdate(sh, []byte("prefix")))
	must(t, m.DigestKey(sh, key))
	must(t, m.DigestUpdate(sh, []byte("suffix")))
	got, _, err := m.DigestFinal(sh, Out{Cap: 64})
	must(t, err)
	want := sha256.Sum256([]byte("prefix0123456789abcdefsuffix"))
	if !bytes.Equal(got, want[:]) {
		t.Fatalf("digest %x, want %x", got, want)
	}
	// C_Digest after C_DigestKey is a multi-part misuse.
	must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
	must(t, m.DigestKey(sh, key))
	_, _, err = m.Digest(sh, []byte("x"), Out{Cap: 64})
	wantRV(t, err, ck.CKR_OPERATION_ACTIVE)
	must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
	wantRV(t, m.DigestKey(sh, 0xdead), ck.CKR_KEY_HANDLE_INVALID)
}

// BenchmarkSymmetric is one single-part C_EncryptInit + C_Encrypt (or
// C_SignInit + C_Sign) of 4 KiB per mechanism through the Module;
// MB/CPU-s is per CPU-second of the process.
func BenchmarkSymmetric(b *testing.B) {
	m, slot := benchModule(b)
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION)
	must2(b, err)
	aesKey, err := secretKeyOf(m, sh, ck.CKK_AES, make([]byte, 32))
	must2(b, err)
	macKey, err := secretKeyOf(m, sh, ck.CKK_GENERIC_SECRET, make([]byte, 32))
	must2(b, err)
	iv := make([]byte, 16)
	gcmIV := make([]byte, 12)
	data := make([]byte, 4096)
	for _, c := range []struct {
		name string
		mech *Mechanism
		key  uint64
		sign bool
	}{
		{"AES-256-GCM", gcmMech(gcmIV, nil, 128), aesKey, false}, // gcmIV changes every call: no IV repeats
		{"AES-256-CBC-PAD", &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv}, aesKey, false},
		{"AES-256-CTR", ctrMech(128, iv), aesKey, false},
		{"AES-256-CMAC", &Mechanism{Type: ck.CKM_AES_CMAC}, aesKey, true},
		{"HMAC-SHA256", &Mechanism{Type: ck.CKM_SHA256_HMAC}, macKey, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := processCPU()
			defer func() {
				b.ReportMetric(float64(b.N)*float64(len(data))/1e6/(processCPU()-cpu0).Seconds(), "MB/CPU-s")
			}()
			for b.Loop() {
				binary.BigEndian.PutUint64(gcmIV[4:], binary.BigEndian.Uint64(gcmIV[4:])+1)
				if c.sign {
					must2(b, m.SignInit(sh, c.mech, c.key))
					_, _, err = m.Sign(sh, data, Out{Cap: 64})
				} else {
					must2(b, m.EncryptInit(sh, c.mech, c.key))
					_, _, err = m.Encrypt(sh, data, Out{Cap: 8192})
				}
				must2(b, err)
			}
		})
	}
}
