package token

import (
	"bytes"
	"math/bits"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestDES3KnownAnswers: Triple DES ECB against NIST SP 800-67 rev. 1's
// example (appendix B), CBC and a two-key CBC_PAD against openssl enc
// (`openssl enc -des-ede3-cbc -K … -iv 0001020304050607 -nopad`, and
// -des-ede-cbc with padding), single- and multi-part, both ways.
func TestDES3KnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	k3 := unhex(t, "0123456789abcdef23456789abcdef01456789abcdef0123")
	pt := []byte("The qufck brown fox jump")
	iv := unhex(t, "0001020304050607")
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
			want := unhex(t, c.ct)
			got, err := cryptOnce(m, sh, opEncrypt, c.mech, key, pt)
			must(t, err)
			if !bytes.Equal(got, want) {
				t.Fatalf("encrypt: %x, want %x", got, want)
			}
			got, err = cryptParts(m, sh, opEncrypt, c.mech, key, pt, []int{3, 8, 5})
			must(t, err)
			if !bytes.Equal(got, want) {
				t.Fatalf("encrypt in parts: %x, want %x", got, want)
			}
			back, err := cryptOnce(m, sh, opDecrypt, c.mech, key, want)
			must(t, err)
			if !bytes.Equal(back, pt) {
				t.Fatalf("decrypt: %q", back)
			}
			back, err = cryptParts(m, sh, opDecrypt, c.mech, key, want, []int{9, 8})
			must(t, err)
			if !bytes.Equal(back, pt) {
				t.Fatalf("decrypt in parts: %q", back)
			}
		})
	}
	// The key check value: the first 3 bytes of ECB(key, 0^64).
	key := mustSecret(t, m, sh, ck.CKK_DES3, k3)
	zero, err := cryptOnce(m, sh, opEncrypt, &Mechanism{Type: ck.CKM_DES3_ECB}, key, make([]byte, 8))
	must(t, err)
	if kcv := attr(t, m, sh, key, ck.CKA_CHECK_VALUE); !bytes.Equal(kcv, zero[:3]) {
		t.Fatalf("CKA_CHECK_VALUE %x, want %x", kcv, zero[:3])
	}
}

// TestDESKeys: generation (odd parity, the type's length, no
// CKA_VALUE_LEN needed), import lengths, and what a key of each type may
// do: single DES encrypts nothing; two-key keys are imported only.
func TestDESKeys(t *testing.T) {
	m, _, sh := readyToken(t)
	for _, c := range []struct {
		gen, kt uint64
		n       int
	}{{ck.CKM_DES_KEY_GEN, ck.CKK_DES, 8}, {ck.CKM_DES3_KEY_GEN, ck.CKK_DES3, 24}} {
		t.Run(ck.Name("CKM_", c.gen), func(t *testing.T) {
			h, err := m.GenerateKey(sh, &Mechanism{Type: c.gen}, []Attribute{aBool(ck.CKA_PRIVATE, false),
				aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)})
			must(t, err)
			if kt, _ := ck.ParseULong(attr(t, m, sh, h, ck.CKA_KEY_TYPE)); kt != c.kt {
				t.Fatalf("CKA_KEY_TYPE %s", ck.Name("CKK_", kt))
			}
			v := attr(t, m, sh, h, ck.CKA_VALUE)
			if len(v) != c.n {
				t.Fatalf("value of %d bytes", len(v))
			}
			for _, b := range v {
				if bits.OnesCount8(b)%2 != 1 {
					t.Fatalf("byte %#02x of %x has even parity", b, v)
				}
			}
			if l, _ := ck.ParseULong(attr(t, m, sh, h, ck.CKA_VALUE_LEN)); l != uint64(c.n) {
				t.Fatalf("CKA_VALUE_LEN %d", l)
			}
			_, err = m.GenerateKey(sh, &Mechanism{Type: c.gen}, []Attribute{aBool(ck.CKA_PRIVATE, false), aULong(ck.CKA_VALUE_LEN, uint64(c.n))})
			must(t, err)
			_, err = m.GenerateKey(sh, &Mechanism{Type: c.gen}, []Attribute{aBool(ck.CKA_PRIVATE, false), aULong(ck.CKA_VALUE_LEN, 32)})
			wantRV(t, err, ck.CKR_TEMPLATE_INCONSISTENT)
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
	_, err := m.GenerateKey(sh, &Mechanism{Type: ck.CKM_DES2_KEY_GEN}, []Attribute{aBool(ck.CKA_PRIVATE, false)})
	wantRV(t, err, ck.CKR_MECHANISM_INVALID)
	_, err = secretKeyOf(m, sh, ck.CKK_DES2, make([]byte, 24))
	wantRV(t, err, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	des2 := mustSecret(t, m, sh, ck.CKK_DES2, make([]byte, 16))
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES3_ECB}, des2))
	must(t, m.SessionCancel(sh, ck.CKF_ENCRYPT))
	des := mustSecret(t, m, sh, ck.CKK_DES, unhex(t, "8001010101010101"))
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES_ECB}, des), ck.CKR_MECHANISM_INVALID)
	// C_DigestKey takes a DES key's value.
	must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
	must(t, m.DigestKey(sh, des))
	_, _, err = m.DigestFinal(sh, Out{Cap: 32})
	must(t, err)
	// Lengths and the IV.
	k := mustSecret(t, m, sh, ck.CKK_DES3, make([]byte, 24))
	_, err = cryptOnce(m, sh, opEncrypt, &Mechanism{Type: ck.CKM_DES3_ECB}, k, make([]byte, 7))
	wantRV(t, err, ck.CKR_DATA_LEN_RANGE)
	_, err = cryptOnce(m, sh, opDecrypt, &Mechanism{Type: ck.CKM_DES3_CBC, Param: make([]byte, 8)}, k, make([]byte, 12))
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_LEN_RANGE)
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_DES3_CBC, Param: make([]byte, 16)}, k), ck.CKR_MECHANISM_PARAM_INVALID)
	out, err := cryptOnce(m, sh, opEncrypt, &Mechanism{Type: ck.CKM_DES3_CBC_PAD, Param: make([]byte, 8)}, k, nil)
	must(t, err)
	if len(out) != 8 {
		t.Fatalf("CBC_PAD of nothing: %d bytes", len(out))
	}
}

func TestDESParity(t *testing.T) {
	for b := 0; b < 256; b++ {
		p := desParity(byte(b))
		if bits.OnesCount8(p)%2 != 1 || p&^1 != byte(b)&^1 {
			t.Fatalf("desParity(%#02x) = %#02x", b, p)
		}
	}
}
