package rsapad

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/internal/dudect"
)

// irKeyOf returns the draft's test key and its implicit-rejection key.
func irKeyOf(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	b, err := os.ReadFile("testdata/implicit_rejection_k2048.pem")
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	priv := k.(*rsa.PrivateKey)
	irKey, err := ImplicitRejectionKey(priv.D.Bytes(), priv.Size())
	if err != nil {
		t.Fatal(err)
	}
	return priv, irKey
}

// TestImplicitRejectionVectors: the known-answer tests of
// draft-irtf-cfrg-rsa-guidance Appendix B.1 (valid ciphertexts, and
// invalid ones with their synthetic messages).
func TestImplicitRejectionVectors(t *testing.T) {
	priv, irKey := irKeyOf(t)
	f, err := os.Open("testdata/implicit_rejection_k2048.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<16)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fields := strings.Fields(line)
		want := []byte{}
		if fields[1] != "-" {
			want, _ = hex.DecodeString(fields[1])
		}
		ct, _ := hex.DecodeString(fields[2])
		em, err := rawPrivate(priv, ct)
		if err != nil {
			t.Fatalf("%s: %v", fields[0], err)
		}
		got, err := DecodePKCS1v15EncryptImplicit(em, ct, irKey, priv.Size())
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: got %x, %v; want %x", fields[0], got, err, want)
		}
		n++
	}
	if n != 12 {
		t.Fatalf("%d vectors", n)
	}
}

// TestImplicitRejectionMatchesExplicit: on every valid padding the result
// is DecodePKCS1v15Encrypt's; on invalid ones a deterministic message of
// at most k−11 bytes that depends on the ciphertext.
func TestImplicitRejectionMatchesExplicit(t *testing.T) {
	priv, irKey := irKeyOf(t)
	k := priv.Size()
	seen := map[string]bool{}
	for i := range 200 {
		em := make([]byte, k)
		for j := range em {
			em[j] = byte(i*31 + j*7 + 1)
		}
		switch i % 4 {
		case 0: // valid
			em[0], em[1] = 0, 2
			em[k-1-i%50] = 0
		case 1: // bad type
			em[0], em[1] = 0, 1
		case 2: // short PS
			em[0], em[1], em[5] = 0, 2, 0
		}
		ct := []byte{byte(i), byte(i >> 8)} // any bytes: only the KDF reads them
		ct = append(make([]byte, k-len(ct)), ct...)
		got, err := DecodePKCS1v15EncryptImplicit(em, ct, irKey, k)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := DecodePKCS1v15EncryptImplicit(em, ct, irKey, k)
		if !bytes.Equal(got, again) || len(got) > k-11 {
			t.Fatalf("case %d: not deterministic or too long (%d)", i, len(got))
		}
		want, err := DecodePKCS1v15Encrypt(em, k)
		if err == nil {
			if !bytes.Equal(got, want) {
				t.Fatalf("case %d: valid padding gave %x, want %x", i, got, want)
			}
			continue
		}
		if seen[string(got)] {
			t.Fatalf("case %d: synthetic message repeated", i)
		}
		seen[string(got)] = true
	}
	if _, err := DecodePKCS1v15EncryptImplicit(make([]byte, k), make([]byte, k-1), irKey, k); err == nil {
		t.Fatal("short ciphertext accepted")
	}
	if _, err := ImplicitRejectionKey(make([]byte, k+1), k); err != nil {
		t.Fatalf("a leading zero byte refused: %v", err)
	}
}

// TestImplicitRejectionDecodeTiming is the dudect-style check of the
// decoding alone (no RSA operation to drown a leak in its noise): valid
// and invalid encoded messages interleaved at random, Welch's t over the
// times cropped at the 90th percentile. MODEXP_DUDECT=1 (100,000 samples
// per class, or =N) runs it; it prints t and fails above 10.
func TestImplicitRejectionDecodeTiming(t *testing.T) {
	if os.Getenv("MODEXP_DUDECT") == "" {
		t.Skip("set MODEXP_DUDECT=1 (or a number of samples per class) to run the timing check")
	}
	n, _ := strconv.Atoi(os.Getenv("MODEXP_DUDECT"))
	if n < 100 {
		n = 100000
	}
	priv, irKey := irKeyOf(t)
	k := priv.Size()
	ct := make([]byte, k)
	mk := func(valid bool, i int) []byte {
		em := make([]byte, k)
		for j := range em {
			em[j] = byte(j*13+i) | 1
		}
		em[0], em[1] = 0, 2
		if valid {
			em[k-49] = 0
		} else {
			em[1] = byte(3 + i%200)
		}
		return em
	}
	var ems [2][][]byte
	for i := range 64 {
		ems[0] = append(ems[0], mk(true, i))
		ems[1] = append(ems[1], mk(false, i))
	}
	var samples [2][]float64
	order := make([]byte, 2*n)
	rand.Read(order)
	for i, o := range order {
		c := int(o & 1)
		em := ems[c][i%64]
		start := time.Now()
		if _, err := DecodePKCS1v15EncryptImplicit(em, ct, irKey, k); err != nil {
			t.Fatal(err)
		}
		samples[c] = append(samples[c], float64(time.Since(start).Nanoseconds()))
	}
	tv := dudect.WelchT(dudect.Crop(samples[0], 0.9), dudect.Crop(samples[1], 0.9))
	t.Logf("dudect (decode only): %d valid and %d invalid, Welch t = %.2f (|t| < 4.5: no leak detected)", len(samples[0]), len(samples[1]), tv)
	if math.Abs(tv) > 10 {
		t.Fatalf("decoding time differs between valid and invalid padding: t = %.2f", tv)
	}
}

// FuzzImplicitRejection: any encoded message decodes without panic to what
// DecodePKCS1v15Encrypt gives when the padding is valid, and to at most
// k−11 bytes, the same each time, when not.
func FuzzImplicitRejection(f *testing.F) {
	f.Add(append([]byte{0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0}, "msg"...), []byte("ciphertext"))
	f.Add([]byte{0, 1, 0}, []byte{})
	irKey := make([]byte, 32)
	f.Fuzz(func(t *testing.T, em, ct []byte) {
		k := len(em)
		if k < 11 || k > 1024 {
			return
		}
		ct = append(make([]byte, k), ct...)[len(ct):]
		got, err := DecodePKCS1v15EncryptImplicit(em, ct, irKey, k)
		if err != nil {
			t.Fatal(err)
		}
		if want, err := DecodePKCS1v15Encrypt(em, k); err == nil && !bytes.Equal(got, want) {
			t.Fatalf("valid padding: %x, want %x", got, want)
		}
		again, _ := DecodePKCS1v15EncryptImplicit(em, ct, irKey, k)
		if len(got) > k-11 || !bytes.Equal(got, again) {
			t.Fatalf("%d bytes, or not deterministic", len(got))
		}
	})
}
