package token

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
	"github.com/modexp-token/modexp-token/token/symtest"
)

// wycheproofTally counts the outcomes of one file.
type wycheproofTally struct{ valid, rejected, acceptable int }

func loadVectors(t *testing.T, file string) []symtest.Vector {
	t.Helper()
	vs, err := symtest.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	return vs
}

// TestWycheproofAESGCM: every valid case encrypts to its ciphertext and
// tag and decrypts back (single-part and in two Updates); every invalid
// case is refused at C_DecryptInit (parameters), at key import (key
// size) or at C_Decrypt (CKR_ENCRYPTED_DATA_INVALID).
func TestWycheproofAESGCM(t *testing.T) {
	m, _, sh := readyToken(t)
	var n wycheproofTally
	for _, v := range loadVectors(t, symtest.GCM) {
		name := fmt.Sprintf("tcId %d (%s)", v.TcID, v.Comment)
		mc := gcmMech(v.IV, v.AAD, 8*len(v.Tag))
		ct := append(append([]byte{}, v.CT...), v.Tag...)
		key, kerr := secretKeyOf(m, sh, ck.CKK_AES, v.Key)
		switch {
		case kerr != nil && v.Valid:
			t.Fatalf("%s: key refused: %v", name, kerr)
		case kerr != nil:
			n.rejected++
			continue
		}
		pt, derr := cryptOnce(m, sh, mech.OpDecrypt, mc, key, ct)
		pt2, derr2 := cryptParts(m, sh, mech.OpDecrypt, mc, key, ct, []int{len(ct) / 3})
		switch {
		case v.Acceptable:
			n.acceptable++
		case v.Valid:
			if derr != nil || derr2 != nil || !bytes.Equal(pt, v.Msg) || !bytes.Equal(pt2, v.Msg) {
				t.Fatalf("%s: decrypt %x %v / %x %v, want %x", name, pt, derr, pt2, derr2, v.Msg)
			}
			// The vector's IV twice under its key, on purpose.
			forgetGCMIVs(m)
			enc, err := cryptOnce(m, sh, mech.OpEncrypt, mc, key, v.Msg)
			forgetGCMIVs(m)
			enc2, err2 := cryptParts(m, sh, mech.OpEncrypt, mc, key, v.Msg, []int{1, 7})
			if err != nil || err2 != nil || !bytes.Equal(enc, ct) || !bytes.Equal(enc2, ct) {
				t.Fatalf("%s: encrypt %x %v / %x %v, want %x", name, enc, err, enc2, err2, ct)
			}
			n.valid++
		default:
			if derr == nil || derr2 == nil {
				t.Fatalf("%s: invalid case decrypted to %x", name, pt)
			}
			if !isRV(derr, ck.CKR_ENCRYPTED_DATA_INVALID) && !isRV(derr, ck.CKR_MECHANISM_PARAM_INVALID) {
				t.Fatalf("%s: %v", name, derr)
			}
			n.rejected++
		}
		must(t, m.DestroyObject(sh, key))
	}
	t.Logf("AES-GCM: %d valid, %d invalid rejected, %d acceptable", n.valid, n.rejected, n.acceptable)
}

// TestWycheproofAESCBCPad: CKM_AES_CBC_PAD (PKCS#7 padding is PKCS#5's for
// AES) against every case: valid ones both ways, invalid ones (bad padding,
// bad length) refused by C_Decrypt.
func TestWycheproofAESCBCPad(t *testing.T) {
	m, _, sh := readyToken(t)
	var n wycheproofTally
	for _, v := range loadVectors(t, symtest.CBC) {
		name := fmt.Sprintf("tcId %d (%s)", v.TcID, v.Comment)
		mc := &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: v.IV}
		key := mustSecret(t, m, sh, ck.CKK_AES, v.Key)
		pt, derr := cryptOnce(m, sh, mech.OpDecrypt, mc, key, v.CT)
		pt2, derr2 := cryptParts(m, sh, mech.OpDecrypt, mc, key, v.CT, []int{5, 16, 3})
		if v.Valid {
			if derr != nil || derr2 != nil || !bytes.Equal(pt, v.Msg) || !bytes.Equal(pt2, v.Msg) {
				t.Fatalf("%s: decrypt %x %v / %x %v", name, pt, derr, pt2, derr2)
			}
			enc, err := cryptOnce(m, sh, mech.OpEncrypt, mc, key, v.Msg)
			enc2, err2 := cryptParts(m, sh, mech.OpEncrypt, mc, key, v.Msg, []int{15, 1, 17})
			if err != nil || err2 != nil || !bytes.Equal(enc, v.CT) || !bytes.Equal(enc2, v.CT) {
				t.Fatalf("%s: encrypt %x %v / %x %v", name, enc, err, enc2, err2)
			}
			n.valid++
		} else {
			if derr == nil || derr2 == nil {
				t.Fatalf("%s: invalid case decrypted", name)
			}
			if !isRV(derr, ck.CKR_ENCRYPTED_DATA_INVALID) && !isRV(derr, ck.CKR_ENCRYPTED_DATA_LEN_RANGE) {
				t.Fatalf("%s: %v", name, derr)
			}
			n.rejected++
		}
		must(t, m.DestroyObject(sh, key))
	}
	t.Logf("AES-CBC-PAD: %d valid, %d invalid rejected", n.valid, n.rejected)
}

// macVectors runs MAC vectors: valid cases sign to the tag (single- and
// multi-part) and verify; invalid ones fail to verify or have their key
// refused (CMAC with a key that is not an AES key).
func macVectors(t *testing.T, file string, kt, full, general uint64, fullBits int) {
	m, _, sh := readyToken(t)
	var n wycheproofTally
	for _, v := range loadVectors(t, file) {
		name := fmt.Sprintf("tcId %d (%s)", v.TcID, v.Comment)
		mc := &Mechanism{Type: full}
		if v.TagBits != fullBits {
			mc = generalMech(general, v.TagBits/8)
		}
		key, kerr := secretKeyOf(m, sh, kt, v.Key)
		switch {
		case kerr != nil && v.Valid:
			t.Fatalf("%s: key refused: %v", name, kerr)
		case kerr != nil:
			n.rejected++
			continue
		}
		verr := verifyOnce(m, sh, mc, key, v.Msg, v.Tag)
		verr2 := verifyParts(m, sh, mc, key, v.Msg, v.Tag)
		if v.Valid {
			sig, err := signOnce(m, sh, mc, key, v.Msg)
			sig2, err2 := signParts(m, sh, mc, key, v.Msg, []int{1, 63, 64})
			if verr != nil || verr2 != nil || err != nil || err2 != nil || !bytes.Equal(sig, v.Tag) || !bytes.Equal(sig2, v.Tag) {
				t.Fatalf("%s: verify %v/%v, sign %x %v / %x %v, want %x", name, verr, verr2, sig, err, sig2, err2, v.Tag)
			}
			n.valid++
		} else {
			if !isRV(verr, ck.CKR_SIGNATURE_INVALID) || !isRV(verr2, ck.CKR_SIGNATURE_INVALID) {
				t.Fatalf("%s: verify %v / %v, want CKR_SIGNATURE_INVALID", name, verr, verr2)
			}
			n.rejected++
		}
		must(t, m.DestroyObject(sh, key))
	}
	t.Logf("%s: %d valid, %d invalid rejected", file, n.valid, n.rejected)
}

func TestWycheproofAESCMAC(t *testing.T) {
	macVectors(t, symtest.CMAC, ck.CKK_AES, ck.CKM_AES_CMAC, ck.CKM_AES_CMAC_GENERAL, 128)
}

func TestWycheproofHMAC(t *testing.T) {
	for _, hm := range mech.HMACMechs {
		name := hm.Hash.String()
		file, ok := symtest.HMACFiles[name]
		if !ok {
			// Wycheproof has no HMAC-MD5 (RFC 2202 in md5_test.go); the
			// SHA-3 and SHA-512/t HMACs' vectors are in hmac_more_test.go.
			continue
		}
		t.Run(name, func(t *testing.T) {
			macVectors(t, file, ck.CKK_GENERIC_SECRET, hm.MAC, hm.General, 8*hm.Hash.Size())
		})
	}
}
