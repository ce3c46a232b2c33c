package token

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"math"
	"math/big"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/internal/dudect"
)

// pkcs1Ciphertexts returns n ciphertexts under pub with valid PKCS#1 v1.5
// padding (of msg) when valid, and with an invalid padding otherwise
// (block type, separator or PS length wrong in turn), built with the raw
// public operation.
func pkcs1Ciphertexts(t testing.TB, pub *rsa.PublicKey, msg []byte, valid bool, n int) [][]byte {
	t.Helper()
	k := pub.Size()
	var out [][]byte
	for i := range n {
		var ct []byte
		if valid {
			var err error
			if ct, err = rsa.EncryptPKCS1v15(rand.Reader, pub, msg); err != nil {
				t.Fatal(err)
			}
		} else {
			em := make([]byte, k)
			rand.Read(em)
			for j := 2; j < k; j++ {
				if em[j] == 0 {
					em[j] = 1
				}
			}
			em[0], em[1] = 0, 2
			switch i % 3 {
			case 0:
				em[1] = 1 // wrong block type
			case 1: // no separator
			case 2:
				em[2+i%8] = 0 // PS shorter than eight bytes
			}
			c := new(big.Int).Exp(new(big.Int).SetBytes(em), big.NewInt(int64(pub.E)), pub.N)
			ct = c.FillBytes(make([]byte, k))
		}
		out = append(out, ct)
	}
	return out
}

func decryptPKCS(t testing.TB, m *Module, sh, key uint64, ct []byte) ([]byte, error) {
	if err := m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, key); err != nil {
		return nil, err
	}
	out, _, err := m.Decrypt(sh, ct, Out{Cap: 1024})
	return out, err
}

// TestRSAPKCSDecryptNoOracle is issue 17's third attack: C_Decrypt with
// CKM_RSA_PKCS told valid padding (CKR_OK) from invalid
// (CKR_ENCRYPTED_DATA_INVALID). Now every ciphertext below the modulus
// answers CKR_OK; a valid one gives its message, an invalid one a
// synthetic message, the same every time, of a length (at most k−11)
// that varies from ciphertext to ciphertext as a real message's may.
func TestRSAPKCSDecryptNoOracle(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 2048, false, aBool(ck.CKA_DECRYPT, true))
	pub := publicKey(t, m, sh, pk)
	k := pub.Size()
	msg := []byte("a 48-byte TLS premaster secret, more or less...")
	for _, ct := range pkcs1Ciphertexts(t, pub, msg, true, 4) {
		got, err := decryptPKCS(t, m, sh, sk, ct)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("valid ciphertext: %q, %v", got, err)
		}
	}
	lengths := map[int]bool{}
	for i, ct := range pkcs1Ciphertexts(t, pub, nil, false, 30) {
		got, err := decryptPKCS(t, m, sh, sk, ct)
		if err != nil {
			t.Fatalf("invalid ciphertext %d: %v (an oracle)", i, err)
		}
		if len(got) > k-11 {
			t.Fatalf("invalid ciphertext %d: %d bytes", i, len(got))
		}
		again, err := decryptPKCS(t, m, sh, sk, ct)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("invalid ciphertext %d: not deterministic", i)
		}
		// Two-call convention: the length query agrees.
		must(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk))
		_, n, err := m.Decrypt(sh, ct, Out{Query: true})
		must(t, err)
		out, _, err := m.Decrypt(sh, ct, Out{Cap: n})
		if err != nil || !bytes.Equal(out, got) {
			t.Fatalf("invalid ciphertext %d: two-call result differs (%d, %v)", i, n, err)
		}
		lengths[len(got)] = true
	}
	if len(lengths) < 10 {
		t.Fatalf("synthetic lengths take only %d values over 30 ciphertexts", len(lengths))
	}
}

// TestRSAPKCSDecryptDisabled: rsa_pkcs_decrypt = false takes decryption
// out of CKM_RSA_PKCS (its info, C_DecryptInit); encryption stays.
func TestRSAPKCSDecryptDisabled(t *testing.T) {
	testConfig(t, "rsa_pkcs_decrypt = false\n")
	m := load(t)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	pk, sk := genKey(t, m, sh, 1024, false, aBool(ck.CKA_DECRYPT, true))
	info, err := m.MechanismInfo(slot, ck.CKM_RSA_PKCS)
	must(t, err)
	if info.Flags&ck.CKF_DECRYPT != 0 || info.Flags&ck.CKF_ENCRYPT == 0 {
		t.Fatalf("CKM_RSA_PKCS flags %#x", info.Flags)
	}
	wantRV(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk), ck.CKR_MECHANISM_INVALID)
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, pk))
	_, _, err = m.Encrypt(sh, []byte("x"), Out{Cap: 512})
	must(t, err)
	must(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, sk))
	must(t, m.SessionCancel(sh, ck.CKF_DECRYPT))
}

// TestRSAPKCSDecryptTiming is a dudect-style check (Reparaz, Balasch,
// Verbauwhede 2017): C_DecryptInit + C_Decrypt timed over valid and
// invalid PKCS#1 v1.5 ciphertexts, the two classes interleaved at random,
// and Welch's t computed over the two distributions (with the upper tail
// cropped at the 90th percentile, as dudect does). |t| above about 4.5
// over many samples suggests a leak. Long: set MODEXP_DUDECT=1 (5000
// samples per class, or =N); it prints t and fails above 10.
func TestRSAPKCSDecryptTiming(t *testing.T) {
	if os.Getenv("MODEXP_DUDECT") == "" {
		t.Skip("set MODEXP_DUDECT=1 (or a number of samples per class) to run the timing check")
	}
	n, _ := strconv.Atoi(os.Getenv("MODEXP_DUDECT"))
	if n < 100 {
		n = 5000
	}
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 2048, false, aBool(ck.CKA_DECRYPT, true))
	pub := publicKey(t, m, sh, pk)
	const pool = 64
	cts := [2][][]byte{
		pkcs1Ciphertexts(t, pub, bytes.Repeat([]byte{7}, 48), true, pool),
		pkcs1Ciphertexts(t, pub, nil, false, pool),
	}
	var samples [2][]float64
	order := make([]byte, 2*n)
	rand.Read(order)
	count := [2]int{}
	for i := range order {
		c := int(order[i] & 1)
		if count[c] >= n {
			c = 1 - c
		}
		count[c]++
		ct := cts[c][i%pool]
		start := time.Now()
		if _, err := decryptPKCS(t, m, sh, sk, ct); err != nil {
			t.Fatal(err)
		}
		samples[c] = append(samples[c], float64(time.Since(start).Nanoseconds()))
	}
	tv := dudect.WelchT(dudect.Crop(samples[0], 0.9), dudect.Crop(samples[1], 0.9))
	t.Logf("dudect: %d valid and %d invalid ciphertexts, Welch t = %.2f (|t| < 4.5: no leak detected)", count[0], count[1], tv)
	if math.Abs(tv) > 10 {
		t.Fatalf("timing differs between valid and invalid padding: t = %.2f", tv)
	}
}
