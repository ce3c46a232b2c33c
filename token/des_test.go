package token

import (
	"bytes"
	"crypto/cipher"
	"crypto/des"
	"crypto/rand"
	"math/bits"
	mrand "math/rand/v2"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestDES3KnownAnswers: Triple DES ECB against NIST SP 800-67 rev. 1's
// example (appendix B), CBC and a two-key CBC_PAD against openssl enc
// (`openssl enc -des-ede3-cbc -K … -iv 0001020304050607 -nopad`, and
// -des-ede-cbc with padding), single- and multi-part, both ways.
func TestDES3KnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	k3 := mustHex("0123456789abcdef23456789abcdef01456789abcdef0123")
	pt := []byte("The qufck brown fox jump")
	iv := mustHex("0001020304050607")
	cases := []struct {
		name string
		kt   uint64
		key  []byte
		mech *Mechanism
		ct   string
	}{
		{"DES3-ECB (SP 800-67)", ck.CKK_DES3, k3, &Mechanism{Type: ck.CKM_DES3_ECB}, "a826fd8ce53b855fcce21c8112256fe668d5c05dd9b6b900"},
		{"DES3-CBC (openssl)", ck.CKK_DES3, k3, &Mechanism{Type: ck.CKM_DES3_CBC, Param: iv}, "f368d06f3bbd614e60f2d0245cad3f818d5c69f2cb3fd5c7"},
		{"DES2-CBC-PAD (openssl)", ck.CKK_DES2, k3[:16], &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: iv},
			"5fc422bf09e37e07d18101ef41b90eca02e8ed6fef6e414ea94283bc04636a71"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := mustSecret(t, m, sh, c.kt, c.key)
			want := mustHex(c.ct)
			got, err := cryptOnce(m, sh, mech.OpEncrypt, c.mech, key, pt)
			must(t, err)
			if !bytes.Equal(got, want) {
				t.Fatalf("encrypt: %x, want %x", got, want)
			}
			got, err = cryptParts(m, sh, mech.OpEncrypt, c.mech, key, pt, []int{3, 8, 5})
			must(t, err)
			if !bytes.Equal(got, want) {
				t.Fatalf("encrypt in parts: %x, want %x", got, want)
			}
			back, err := cryptOnce(m, sh, mech.OpDecrypt, c.mech, key, want)
			must(t, err)
			if !bytes.Equal(back, pt) {
				t.Fatalf("decrypt: %q", back)
			}
			back, err = cryptParts(m, sh, mech.OpDecrypt, c.mech, key, want, []int{9, 8})
			must(t, err)
			if !bytes.Equal(back, pt) {
				t.Fatalf("decrypt in parts: %q", back)
			}
		})
	}
	// The key check value: the first 3 bytes of ECB(key, 0^64).
	key := mustSecret(t, m, sh, ck.CKK_DES3, k3)
	zero, err := cryptOnce(m, sh, mech.OpEncrypt, &Mechanism{Type: ck.CKM_DES3_ECB}, key, make([]byte, 8))
	must(t, err)
	if kcv := attrValue(t, m, sh, key, ck.CKA_CHECK_VALUE); !bytes.Equal(kcv, zero[:3]) {
		t.Fatalf("CKA_CHECK_VALUE %x, want %x", kcv, zero[:3])
	}
}

// TestDESKeys: generation (odd parity, the type's length, no
// CKA_VALUE_LEN needed), import lengths, the check values of known keys
// (`openssl enc -des-ecb / -des-ede / -des-ede3` of a zero block), and
// which mechanisms each key type serves.
func TestDESKeys(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, c := range []struct {
		gen, kt uint64
		n       int
	}{{ck.CKM_DES_KEY_GEN, ck.CKK_DES, 8}, {ck.CKM_DES2_KEY_GEN, ck.CKK_DES2, 16}, {ck.CKM_DES3_KEY_GEN, ck.CKK_DES3, 24}} {
		t.Run(ck.Name("CKM_", c.gen), func(t *testing.T) {
			h, err := m.GenerateKey(sh, &Mechanism{Type: c.gen}, []Attribute{aBool(ck.CKA_PRIVATE, false),
				aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)})
			must(t, err)
			if kt, _ := ck.ParseULong(attrValue(t, m, sh, h, ck.CKA_KEY_TYPE)); kt != c.kt {
				t.Fatalf("CKA_KEY_TYPE %s", ck.Name("CKK_", kt))
			}
			v := attrValue(t, m, sh, h, ck.CKA_VALUE)
			if len(v) != c.n {
				t.Fatalf("value of %d bytes", len(v))
			}
			for _, b := range v {
				if bits.OnesCount8(b)%2 != 1 {
					t.Fatalf("byte %#02x of %x has even parity", b, v)
				}
			}
			if l, _ := ck.ParseULong(attrValue(t, m, sh, h, ck.CKA_VALUE_LEN)); l != uint64(c.n) {
				t.Fatalf("CKA_VALUE_LEN %d", l)
			}
			_, err = m.GenerateKey(sh, &Mechanism{Type: c.gen}, []Attribute{aBool(ck.CKA_PRIVATE, false), aULong(ck.CKA_VALUE_LEN, uint64(c.n))})
			must(t, err)
			_, err = m.GenerateKey(sh, &Mechanism{Type: c.gen}, []Attribute{aBool(ck.CKA_PRIVATE, false), aULong(ck.CKA_VALUE_LEN, 32)})
			wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
			_, err = m.GenerateKey(sh, &Mechanism{Type: c.gen}, []Attribute{aBool(ck.CKA_PRIVATE, false), aULong(ck.CKA_KEY_TYPE, ck.CKK_AES)})
			wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
			_, err = m.GenerateKey(sh, &Mechanism{Type: c.gen, Param: []byte{1}}, []Attribute{aBool(ck.CKA_PRIVATE, false)})
			wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
			if kcv := attrValue(t, m, sh, h, ck.CKA_CHECK_VALUE); !bytes.Equal(kcv, mech.DESKCV(v)) {
				t.Fatalf("CKA_CHECK_VALUE %x", kcv)
			}
			_, err = secretKeyOf(m, sh, c.kt, make([]byte, c.n-1))
			wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
			err = m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES3_ECB}, h)
			if c.kt == ck.CKK_DES {
				wantRV(t, err, ck.CKR_KEY_TYPE_INCONSISTENT)
			} else {
				must(t, err)
				must(t, m.SessionCancel(sh, ck.CKF_ENCRYPT))
			}
		})
	}
	_, err := secretKeyOf(m, sh, ck.CKK_DES2, make([]byte, 24))
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	des2 := mustSecret(t, m, sh, ck.CKK_DES2, make([]byte, 16))
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES3_ECB}, des2))
	must(t, m.SessionCancel(sh, ck.CKF_ENCRYPT))
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES_ECB}, des2), ck.CKR_KEY_TYPE_INCONSISTENT)
	des := mustSecret(t, m, sh, ck.CKK_DES, mustHex("8001010101010101"))
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES_ECB}, des))
	must(t, m.SessionCancel(sh, ck.CKF_ENCRYPT))
	for _, c := range []struct {
		kt       uint64
		key, kcv string
	}{
		{ck.CKK_DES, "0123456789abcdef", "d5d44f"},
		{ck.CKK_DES2, "0123456789abcdef23456789abcdef01", "86e965"},
		{ck.CKK_DES3, "0123456789abcdef23456789abcdef01456789abcdef0123", "4eba73"},
	} {
		h := mustSecret(t, m, sh, c.kt, mustHex(c.key))
		if got := attrValue(t, m, sh, h, ck.CKA_CHECK_VALUE); !bytes.Equal(got, mustHex(c.kcv)) {
			t.Fatalf("%s check value %x, want %s", ck.Name("CKK_", c.kt), got, c.kcv)
		}
		_, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, c.kt),
			aBytes(ck.CKA_VALUE, mustHex(c.key)), aBytes(ck.CKA_CHECK_VALUE, []byte{1, 2, 3})})
		wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	}
	// C_DigestKey takes a DES key's value.
	must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
	must(t, m.DigestKey(sh, des))
	_, _, err = m.DigestFinal(sh, Out{Cap: 32})
	must(t, err)
	// Lengths and the IV.
	k := mustSecret(t, m, sh, ck.CKK_DES3, make([]byte, 24))
	_, err = cryptOnce(m, sh, mech.OpEncrypt, &Mechanism{Type: ck.CKM_DES3_ECB}, k, make([]byte, 7))
	wantRV(t, err, ck.CKR_DATA_LEN_RANGE)
	_, err = cryptOnce(m, sh, mech.OpDecrypt, &Mechanism{Type: ck.CKM_DES3_CBC, Param: make([]byte, 8)}, k, make([]byte, 12))
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_LEN_RANGE)
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES3_CBC, Param: make([]byte, 16)}, k), ck.CKR_MECHANISM_PARAM_INVALID)
	out, err := cryptOnce(m, sh, mech.OpEncrypt, &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: make([]byte, 8)}, k, nil)
	must(t, err)
	if len(out) != 8 {
		t.Fatalf("CBC_PAD of nothing: %d bytes", len(out))
	}
}

func TestDESParity(t *testing.T) {
	for b := 0; b < 256; b++ {
		p := mech.DESParity(byte(b))
		if bits.OnesCount8(p)%2 != 1 || p&^1 != byte(b)&^1 {
			t.Fatalf("desParity(%#02x) = %#02x", b, p)
		}
	}
}

// The triple-DES example of NIST SP 800-67 Rev. 1 appendix B (three
// keys): the key K1‖K2‖K3 and "The qufck brown fox jump".
var (
	tdeaKey = mustHex("0123456789abcdef23456789abcdef01456789abcdef0123")
	tdeaPT  = []byte("The qufck brown fox jump")
	tdeaIV  = mustHex("f69f2445df4f9b17")
)

// TestDESKnownAnswers: DES vectors (the textbook FIPS 46 example, NIST SP
// 800-17's variable-key and variable-plaintext tests, pkcs11test's table
// whose keys have even-parity bytes; SP 800-67's TDEA example is
// TestDES3KnownAnswers') and CBC,
// CBC_PAD outputs of `openssl enc -des-cbc / -des-ede-cbc / -des-ede3-cbc`
// (with -provider legacy for single DES), single- and multi-part.
func TestDESKnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	cases := []struct {
		name    string
		kt      uint64
		key     string
		mech    *Mechanism
		pt, ct  []byte
		partsOK bool
	}{
		{"FIPS 46 example", ck.CKK_DES, "133457799bbcdff1", &Mechanism{Type: ck.CKM_DES_ECB},
			mustHex("0123456789abcdef"), mustHex("85e813540f0ab405"), true},
		{"SP 800-17 variable key 1", ck.CKK_DES, "8001010101010101", &Mechanism{Type: ck.CKM_DES_ECB},
			make([]byte, 8), mustHex("95a8d72813daa94d"), true},
		{"SP 800-17 variable plaintext 1", ck.CKK_DES, "0101010101010101", &Mechanism{Type: ck.CKM_DES_ECB},
			mustHex("8000000000000000"), mustHex("95f8a5e5dd31d900"), true},
		{"pkcs11test DES (even parity)", ck.CKK_DES, "8000000000000000", &Mechanism{Type: ck.CKM_DES_ECB},
			make([]byte, 8), mustHex("95a8d72813daa94d"), true},
		{"pkcs11test DES3 (K1=K2=K3)", ck.CKK_DES3, "800000000000000000000000000000000000000000000000", &Mechanism{Type: ck.CKM_DES3_ECB},
			make([]byte, 8), mustHex("95a8d72813daa94d"), true},
		{"openssl des-ede3-cbc", ck.CKK_DES3, "0123456789abcdef23456789abcdef01456789abcdef0123", &Mechanism{Type: ck.CKM_DES3_CBC, Param: tdeaIV},
			tdeaPT, mustHex("a5c282bad0de3774becd2e04386b589fb5057d8552fc4336"), true},
		{"openssl des-ede-cbc (padded)", ck.CKK_DES2, "0123456789abcdef23456789abcdef01", &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: tdeaIV},
			tdeaPT, mustHex("acd5699dd6060a430dedd74525b7870297202cf5ed176718a56afe859392eb5a"), true},
		{"openssl des-cbc (padded)", ck.CKK_DES, "0123456789abcdef", &Mechanism{Type: ck.CKM_DES_CBC_PAD, Param: tdeaIV},
			tdeaPT, mustHex("1ab0b20ac41bb35f4d8335cf38abcd8b51df5579c3120a8c52b9738164cf556d"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := mustSecret(t, m, sh, c.kt, mustHex(c.key))
			for _, parts := range [][]int{{1}, {7, 2}, {8, 8}, {17}} {
				checkBoth(t, m, sh, c.mech, key, c.pt, c.ct, parts)
			}
		})
	}
}

// TestDESCrossCheck compares every DES mode with crypto/des and
// crypto/cipher on random keys, messages and splits.
func TestDESCrossCheck(t *testing.T) {
	m, _, sh := readyToken(t)
	r := mrand.New(mrand.NewPCG(3, 4))
	for _, c := range []struct {
		kt            uint64
		ecb, cbc, pad uint64
	}{
		{ck.CKK_DES, ck.CKM_DES_ECB, ck.CKM_DES_CBC, ck.CKM_DES_CBC_PAD},
		{ck.CKK_DES2, ck.CKM_DES3_ECB, ck.CKM_DES3_CBC, ck.CKM_DES3_CBC_PAD},
		{ck.CKK_DES3, ck.CKM_DES3_ECB, ck.CKM_DES3_CBC, ck.CKM_DES3_CBC_PAD},
	} {
		k := make([]byte, mech.DESKeyLen[c.kt])
		rand.Read(k)
		key := mustSecret(t, m, sh, c.kt, k)
		var b cipher.Block
		switch len(k) {
		case 8:
			b, _ = des.NewCipher(k)
		case 16:
			b, _ = des.NewTripleDESCipher(append(append([]byte{}, k...), k[:8]...))
		default:
			b, _ = des.NewTripleDESCipher(k)
		}
		for i := 0; i < 12; i++ {
			n := r.IntN(60)
			msg := make([]byte, n)
			rand.Read(msg)
			iv := make([]byte, 8)
			rand.Read(iv)
			parts := []int{r.IntN(20), r.IntN(20)}
			p := 8 - n%8
			padded := append(append([]byte{}, msg...), bytes.Repeat([]byte{byte(p)}, p)...)
			want := make([]byte, len(padded))
			cipher.NewCBCEncrypter(b, iv).CryptBlocks(want, padded)
			checkBoth(t, m, sh, &Mechanism{Type: c.pad, Param: iv}, key, msg, want, parts)
			if n%8 == 0 {
				want = make([]byte, n)
				cipher.NewCBCEncrypter(b, iv).CryptBlocks(want, msg)
				checkBoth(t, m, sh, &Mechanism{Type: c.cbc, Param: iv}, key, msg, want, parts)
				for j := 0; j < n; j += 8 {
					b.Encrypt(want[j:j+8], msg[j:j+8])
				}
				checkBoth(t, m, sh, &Mechanism{Type: c.ecb}, key, msg, want, parts)
			}
		}
	}
}

// TestDES3CMACKnownAnswers: NIST SP 800-38B appendix D.4 (three-key TDEA)
// and D.5 (two-key) examples, also checked with `openssl mac -cipher
// DES-EDE3-CBC CMAC`.
func TestDES3CMACKnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	msg := sp38aPT
	cases := []struct {
		kt   uint64
		key  string
		n    int
		want string
	}{
		{ck.CKK_DES3, "8aa83bf8cbda10620bc1bf19fbb6cd58bc313d4a371ca8b5", 0, "b7a688e122ffaf95"},
		{ck.CKK_DES3, "8aa83bf8cbda10620bc1bf19fbb6cd58bc313d4a371ca8b5", 8, "8e8f293136283797"},
		{ck.CKK_DES3, "8aa83bf8cbda10620bc1bf19fbb6cd58bc313d4a371ca8b5", 20, "743ddbe0ce2dc2ed"},
		{ck.CKK_DES3, "8aa83bf8cbda10620bc1bf19fbb6cd58bc313d4a371ca8b5", 32, "33e6b1092400eae5"},
		{ck.CKK_DES2, "4cf15134a2850dd58a3d10ba80570d38", 0, "bd2ebf9a3ba00361"},
		{ck.CKK_DES2, "4cf15134a2850dd58a3d10ba80570d38", 8, "4ff2ab813c53ce83"},
		{ck.CKK_DES2, "4cf15134a2850dd58a3d10ba80570d38", 20, "62dd1b471902bd4e"},
		{ck.CKK_DES2, "4cf15134a2850dd58a3d10ba80570d38", 32, "31b1e431dabc4eb8"},
	}
	for _, c := range cases {
		key := mustSecret(t, m, sh, c.kt, mustHex(c.key))
		want := mustHex(c.want)
		for _, parts := range [][]int{nil, {1, 7}, {8}, {9, 8}} {
			var got []byte
			var err error
			if parts == nil {
				got, err = signOnce(m, sh, &Mechanism{Type: ck.CKM_DES3_CMAC}, key, msg[:c.n])
			} else {
				got, err = signParts(m, sh, &Mechanism{Type: ck.CKM_DES3_CMAC}, key, msg[:c.n], parts)
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, msg %d bytes, parts %v: %x, %v; want %x", ck.Name("CKK_", c.kt), c.n, parts, got, err, want)
			}
		}
		got, err := signOnce(m, sh, generalMech(ck.CKM_DES3_CMAC_GENERAL, 4), key, msg[:c.n])
		if err != nil || !bytes.Equal(got, want[:4]) {
			t.Fatalf("DES3_CMAC_GENERAL(4): %x, %v", got, err)
		}
		must(t, verifyOnce(m, sh, &Mechanism{Type: ck.CKM_DES3_CMAC}, key, msg[:c.n], want))
		wantRV(t, verifyOnce(m, sh, &Mechanism{Type: ck.CKM_DES3_CMAC}, key, msg[:c.n], want[:7]), ck.CKR_SIGNATURE_LEN_RANGE)
		bad := append([]byte{}, want...)
		bad[0] ^= 1
		wantRV(t, verifyOnce(m, sh, &Mechanism{Type: ck.CKM_DES3_CMAC}, key, msg[:c.n], bad), ck.CKR_SIGNATURE_INVALID)
		_, err = signOnce(m, sh, generalMech(ck.CKM_DES3_CMAC_GENERAL, 9), key, msg)
		wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	}
}

// TestDESErrors: key types the mechanisms refuse, IVs, lengths, the
// length-query and short-buffer conventions.
func TestDESErrors(t *testing.T) {
	m, _, sh := readyToken(t)
	desKey := mustSecret(t, m, sh, ck.CKK_DES, mustHex("0123456789abcdef"))
	des3Key := mustSecret(t, m, sh, ck.CKK_DES3, tdeaKey)
	aesKey := mustSecret(t, m, sh, ck.CKK_AES, sp38aKey)
	iv := tdeaIV
	for _, c := range []struct {
		mech *Mechanism
		key  uint64
	}{
		{&Mechanism{Type: ck.CKM_DES_ECB}, aesKey},
		{&Mechanism{Type: ck.CKM_DES_ECB}, des3Key},
		{&Mechanism{Type: ck.CKM_DES3_CBC, Param: iv}, desKey},
		{&Mechanism{Type: ck.CKM_AES_ECB}, des3Key},
		{&Mechanism{Type: ck.CKM_DES3_CMAC}, desKey},
	} {
		var err error
		if c.mech.Type == ck.CKM_DES3_CMAC {
			err = m.SignInit(sh, c.mech, c.key)
		} else {
			err = m.EncryptInit(sh, c.mech, c.key)
		}
		if !isRV(err, ck.CKR_KEY_TYPE_INCONSISTENT) {
			t.Fatalf("%s: %v, want CKR_KEY_TYPE_INCONSISTENT", ck.Name("CKM_", c.mech.Type), err)
		}
	}
	for _, p := range [][]byte{nil, make([]byte, 7), make([]byte, 16)} {
		wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES_CBC, Param: p}, desKey), ck.CKR_MECHANISM_PARAM_INVALID)
	}
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES3_ECB, Param: iv}, des3Key), ck.CKR_MECHANISM_PARAM_INVALID)

	// CBC_PAD lengths: n bytes encrypt to the next multiple of 8 above n.
	for n := 0; n <= 17; n++ {
		ct, err := cryptOnce(m, sh, mech.OpEncrypt, &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: iv}, des3Key, make([]byte, n))
		if err != nil || len(ct) != 8*(n/8+1) {
			t.Fatalf("CBC_PAD of %d bytes: %d bytes, %v", n, len(ct), err)
		}
	}
	_, err := cryptOnce(m, sh, mech.OpDecrypt, &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: iv}, des3Key, make([]byte, 12))
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_LEN_RANGE)
	_, err = cryptOnce(m, sh, mech.OpDecrypt, &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: iv}, des3Key, nil)
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_LEN_RANGE)
	_, err = cryptOnce(m, sh, mech.OpEncrypt, &Mechanism{Type: ck.CKM_DES_ECB}, desKey, make([]byte, 7))
	wantRV(t, err, ck.CKR_DATA_LEN_RANGE)
	_, err = cryptOnce(m, sh, mech.OpDecrypt, &Mechanism{Type: ck.CKM_DES_CBC, Param: iv}, desKey, make([]byte, 9))
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_LEN_RANGE)
	// A bad padding byte.
	ct, err := cryptOnce(m, sh, mech.OpEncrypt, &Mechanism{Type: ck.CKM_DES3_CBC, Param: iv}, des3Key, make([]byte, 8))
	must(t, err)
	_, err = cryptOnce(m, sh, mech.OpDecrypt, &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: iv}, des3Key, ct)
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_INVALID)

	// A short buffer keeps the operation: the same call then succeeds.
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: iv}, des3Key))
	_, need, err := m.Encrypt(sh, tdeaPT, Out{Query: true})
	if err != nil || need != 32 {
		t.Fatalf("length query: %d, %v", need, err)
	}
	_, _, err = m.Encrypt(sh, tdeaPT, Out{Cap: need - 1})
	wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
	out, _, err := m.Encrypt(sh, tdeaPT, Out{Cap: need})
	if err != nil || len(out) != 32 {
		t.Fatalf("after CKR_BUFFER_TOO_SMALL: %d bytes, %v", len(out), err)
	}
}

// TestDESWrapDerive: DES keys wrapped by AES key wrap and AES-CBC-PAD, keys
// wrapped by the DES modes, and the derivations by data encryption against
// crypto/cipher.
func TestDESWrapDerive(t *testing.T) {
	m, _, sh := readyTokenWith(t, standardPolicy)
	wrapping := func(kt uint64, v []byte) uint64 {
		h, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, kt),
			aBytes(ck.CKA_VALUE, v), aBool(ck.CKA_PRIVATE, false), aBool(ck.CKA_WRAP, true), aBool(ck.CKA_UNWRAP, true),
			aBool(ck.CKA_DERIVE, true)})
		must(t, err)
		return h
	}
	wrapped := func(kt uint64, v []byte) uint64 {
		h, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, kt),
			aBytes(ck.CKA_VALUE, v), aBool(ck.CKA_PRIVATE, false), aBool(ck.CKA_EXTRACTABLE, true)})
		must(t, err)
		return h
	}
	unwrapTmpl := func(kt uint64, extra ...Attribute) []Attribute {
		return append([]Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, kt),
			aBool(ck.CKA_PRIVATE, false), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)}, extra...)
	}
	aesW := wrapping(ck.CKK_AES, sp38aKey)
	des3W := wrapping(ck.CKK_DES3, tdeaKey)
	desW := wrapping(ck.CKK_DES, tdeaKey[:8])
	for _, c := range []struct {
		mech  *Mechanism
		wk    uint64
		kt    uint64
		value []byte
		extra []Attribute
		size  int
	}{
		{&Mechanism{Type: ck.CKM_AES_KEY_WRAP}, aesW, ck.CKK_DES3, tdeaKey, nil, 32},
		{&Mechanism{Type: ck.CKM_AES_KEY_WRAP_PAD}, aesW, ck.CKK_DES, tdeaKey[:8], nil, 16},
		{&Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: sp38aIV}, aesW, ck.CKK_DES2, tdeaKey[:16], nil, 32},
		{&Mechanism{Type: ck.CKM_DES3_ECB}, des3W, ck.CKK_DES3, tdeaKey, nil, 24},
		{&Mechanism{Type: ck.CKM_DES_ECB}, desW, ck.CKK_DES, tdeaKey[16:], nil, 8},
		{&Mechanism{Type: ck.CKM_DES_CBC_PAD, Param: tdeaIV}, desW, ck.CKK_DES2, tdeaKey[:16], nil, 24},
		{&Mechanism{Type: ck.CKM_DES3_CBC, Param: tdeaIV}, des3W, ck.CKK_AES, sp38aKey, nil, 16},
	} {
		name := ck.Name("CKM_", c.mech.Type) + " " + ck.Name("CKK_", c.kt)
		k := wrapped(c.kt, c.value)
		w, _, err := m.WrapKey(sh, c.mech, c.wk, k, Out{Cap: 4096})
		if err != nil || len(w) != c.size {
			t.Fatalf("%s: wrap: %d bytes, %v", name, len(w), err)
		}
		u, err := m.UnwrapKey(sh, c.mech, c.wk, w, unwrapTmpl(c.kt, c.extra...))
		if err != nil {
			t.Fatalf("%s: unwrap: %v", name, err)
		}
		if got := attrValue(t, m, sh, u, ck.CKA_VALUE); !bytes.Equal(got, c.value) {
			t.Fatalf("%s: unwrapped %x, want %x", name, got, c.value)
		}
	}
	// ECB and CBC wrap whole blocks, and secret keys only.
	_, _, err := m.WrapKey(sh, &Mechanism{Type: ck.CKM_DES3_CBC, Param: tdeaIV}, des3W, wrapped(ck.CKK_GENERIC_SECRET, []byte("abcde")), Out{Cap: 64})
	wantRV(t, err, ck.CKR_KEY_SIZE_RANGE)
	_, err = m.UnwrapKey(sh, &Mechanism{Type: ck.CKM_DES3_ECB}, des3W, make([]byte, 64),
		[]Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA)})
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
	_, err = m.UnwrapKey(sh, &Mechanism{Type: ck.CKM_DES3_ECB}, des3W, make([]byte, 12), unwrapTmpl(ck.CKK_DES))
	wantRV(t, err, ck.CKR_WRAPPED_KEY_LEN_RANGE)

	// Derivation by data encryption.
	b, _ := des.NewTripleDESCipher(tdeaKey)
	data := tdeaPT
	wantECB := make([]byte, len(data))
	for i := 0; i < len(data); i += 8 {
		b.Encrypt(wantECB[i:i+8], data[i:i+8])
	}
	wantCBC := make([]byte, len(data))
	cipher.NewCBCEncrypter(b, tdeaIV).CryptBlocks(wantCBC, data)
	for _, c := range []struct {
		mech  *Mechanism
		kt    uint64
		extra []Attribute
		want  []byte
	}{
		{&Mechanism{Type: ck.CKM_DES3_ECB_ENCRYPT_DATA, EncryptData: &EncryptDataParams{Data: data}}, ck.CKK_DES3, nil, wantECB},
		{&Mechanism{Type: ck.CKM_DES3_CBC_ENCRYPT_DATA, EncryptData: &EncryptDataParams{IV: tdeaIV, Data: data}}, ck.CKK_DES2, nil, wantCBC[:16]},
		{&Mechanism{Type: ck.CKM_DES3_CBC_ENCRYPT_DATA, EncryptData: &EncryptDataParams{IV: tdeaIV, Data: data}}, ck.CKK_AES, nil, wantCBC},
		{&Mechanism{Type: ck.CKM_DES3_CBC_ENCRYPT_DATA, EncryptData: &EncryptDataParams{IV: tdeaIV, Data: data}}, ck.CKK_AES,
			[]Attribute{aULong(ck.CKA_VALUE_LEN, 16)}, wantCBC[:16]},
	} {
		h, err := m.DeriveKey(sh, c.mech, des3W, unwrapTmpl(c.kt, c.extra...))
		if err != nil {
			t.Fatalf("%s: %v", ck.Name("CKM_", c.mech.Type), err)
		}
		if got := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(got, c.want) {
			t.Fatalf("%s: %x, want %x", ck.Name("CKM_", c.mech.Type), got, c.want)
		}
	}
	for _, p := range []*EncryptDataParams{{Data: data[:7]}, {Data: nil}, {IV: tdeaIV, Data: data}} {
		_, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_DES_ECB_ENCRYPT_DATA, EncryptData: p}, desW, unwrapTmpl(ck.CKK_DES))
		wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	}
	_, err = m.DeriveKey(sh, &Mechanism{Type: ck.CKM_DES_CBC_ENCRYPT_DATA, EncryptData: &EncryptDataParams{IV: make([]byte, 16), Data: data}},
		desW, unwrapTmpl(ck.CKK_DES))
	wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	h, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_DES_ECB_ENCRYPT_DATA, EncryptData: &EncryptDataParams{Data: data[:8]}},
		desW, unwrapTmpl(ck.CKK_DES))
	must(t, err)
	_, err = m.DeriveKey(sh, &Mechanism{Type: ck.CKM_DES3_ECB_ENCRYPT_DATA, EncryptData: &EncryptDataParams{Data: data}},
		des3W, unwrapTmpl(ck.CKK_DES2, aULong(ck.CKA_VALUE_LEN, 24)))
	wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
	h2, err := m.DeriveKey(sh, &Mechanism{Type: ck.CKM_DES3_ECB_ENCRYPT_DATA, EncryptData: &EncryptDataParams{Data: data}},
		des3W, unwrapTmpl(ck.CKK_DES2, aULong(ck.CKA_VALUE_LEN, 16)))
	must(t, err)
	if got := attrValue(t, m, sh, h2, ck.CKA_VALUE); !bytes.Equal(got, wantECB[:16]) {
		t.Fatalf("DES3_ECB_ENCRYPT_DATA to a DES2 key: %x", got)
	}
	bd, _ := des.NewCipher(tdeaKey[:8])
	want := make([]byte, 8)
	bd.Encrypt(want, data[:8])
	if got := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(got, want) {
		t.Fatalf("DES_ECB_ENCRYPT_DATA: %x, want %x", got, want)
	}
}

// TestSingleDESOff: the slot option single_des = false withdraws the
// single-DES mechanisms and keeps triple DES.
func TestSingleDESOff(t *testing.T) {
	testConfig(t, "single_des = false\n")
	m := load(t)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	list, err := m.MechanismList(slot)
	must(t, err)
	offered := map[uint64]bool{}
	for _, typ := range list {
		offered[typ] = true
	}
	for _, typ := range []uint64{ck.CKM_DES_KEY_GEN, ck.CKM_DES_ECB, ck.CKM_DES_CBC, ck.CKM_DES_CBC_PAD,
		ck.CKM_DES_ECB_ENCRYPT_DATA, ck.CKM_DES_CBC_ENCRYPT_DATA} {
		if offered[typ] {
			t.Errorf("%s offered", ck.Name("CKM_", typ))
		}
		_, err := m.MechanismInfo(slot, typ)
		wantRV(t, err, ck.CKR_MECHANISM_INVALID)
	}
	for _, typ := range []uint64{ck.CKM_DES2_KEY_GEN, ck.CKM_DES3_KEY_GEN, ck.CKM_DES3_CBC, ck.CKM_DES3_CMAC} {
		if !offered[typ] {
			t.Errorf("%s not offered", ck.Name("CKM_", typ))
		}
	}
	_, err = m.GenerateKey(sh, &Mechanism{Type: ck.CKM_DES_KEY_GEN}, nil)
	wantRV(t, err, ck.CKR_MECHANISM_INVALID)
	k := mustSecret(t, m, sh, ck.CKK_DES, tdeaKey[:8])
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES_ECB}, k), ck.CKR_MECHANISM_INVALID)
	k3 := mustSecret(t, m, sh, ck.CKK_DES3, tdeaKey)
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES3_ECB}, k3))
}
