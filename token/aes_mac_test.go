package token

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestAESMACKnownAnswers: CKM_AES_MAC (8 bytes) and CKM_AES_MAC_GENERAL
// against NIST SP 800-38A appendix F: CBC-MAC with a zero IV of P1 is
// F.1.1's first ECB block, and of (P1 ⊕ IV) ‖ P2 ‖ P3 ‖ P4 F.2.1's last
// CBC block. Then crypto/cipher's CBC over zero-padded data of every
// length 0 to 50 (empty data: the zero block), in one part and in parts,
// and the parameter and verification errors.
func TestAESMACKnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, sp38aKey)
	aesMAC := &Mechanism{Type: ck.CKM_AES_MAC}
	chained := bytes.Clone(sp38aPT)
	subtle.XORBytes(chained[:16], chained[:16], sp38aIV)
	for _, c := range []struct {
		in   []byte
		want []byte
	}{
		{sp38aPT[:16], mustHex("3ad77bb40d7a3660a89ecaf32466ef97")},
		{chained, mustHex("3ff1caa1681fac09120eca307586e1a7")},
	} {
		got, err := signOnce(m, sh, aesMAC, key, c.in)
		if err != nil || !bytes.Equal(got, c.want[:8]) {
			t.Fatalf("AES_MAC of %d bytes: %x, %v; want %x", len(c.in), got, err, c.want[:8])
		}
		got, err = signParts(m, sh, generalMech(ck.CKM_AES_MAC_GENERAL, 16), key, c.in, []int{5, 16})
		if err != nil || !bytes.Equal(got, c.want) {
			t.Fatalf("AES_MAC_GENERAL(16) of %d bytes: %x, %v; want %x", len(c.in), got, err, c.want)
		}
		must(t, verifyParts(m, sh, aesMAC, key, c.in, c.want[:8]))
	}

	k := make([]byte, 32)
	rand.Read(k)
	key = mustSecret(t, m, sh, ck.CKK_AES, k)
	b, err := aes.NewCipher(k)
	must(t, err)
	msg := make([]byte, 50)
	rand.Read(msg)
	for n := 0; n <= len(msg); n++ {
		padded := make([]byte, (n+15)/16*16)
		copy(padded, msg[:n])
		want := make([]byte, 16)
		if len(padded) > 0 {
			ct := make([]byte, len(padded))
			cipher.NewCBCEncrypter(b, make([]byte, 16)).CryptBlocks(ct, padded)
			want = ct[len(ct)-16:]
		}
		got, err := signOnce(m, sh, aesMAC, key, msg[:n])
		if err != nil || !bytes.Equal(got, want[:8]) {
			t.Fatalf("AES_MAC of %d bytes: %x, %v; crypto/cipher %x", n, got, err, want[:8])
		}
		got, err = signParts(m, sh, generalMech(ck.CKM_AES_MAC_GENERAL, 13), key, msg[:n], []int{3, 17})
		if err != nil || !bytes.Equal(got, want[:13]) {
			t.Fatalf("AES_MAC_GENERAL(13) of %d bytes: %x, %v", n, got, err)
		}
		must(t, verifyOnce(m, sh, generalMech(ck.CKM_AES_MAC_GENERAL, 13), key, msg[:n], want[:13]))
	}
	good, err := signOnce(m, sh, aesMAC, key, msg)
	must(t, err)
	wantRV(t, verifyOnce(m, sh, aesMAC, key, msg, good[:7]), ck.CKR_SIGNATURE_LEN_RANGE)
	bad := bytes.Clone(good)
	bad[7] ^= 1
	wantRV(t, verifyOnce(m, sh, aesMAC, key, msg, bad), ck.CKR_SIGNATURE_INVALID)
	wantRV(t, m.SignInit(sh, generalMech(ck.CKM_AES_MAC_GENERAL, 17), key), ck.CKR_MECHANISM_PARAM_INVALID)
	wantRV(t, m.SignInit(sh, generalMech(ck.CKM_AES_MAC_GENERAL, 0), key), ck.CKR_MECHANISM_PARAM_INVALID)
	wantRV(t, m.SignInit(sh, generalMech(ck.CKM_AES_MAC, 8), key), ck.CKR_MECHANISM_PARAM_INVALID)
	hmacKey := mustSecret(t, m, sh, ck.CKK_GENERIC_SECRET, k)
	wantRV(t, m.SignInit(sh, aesMAC, hmacKey), ck.CKR_KEY_TYPE_INCONSISTENT)
}
