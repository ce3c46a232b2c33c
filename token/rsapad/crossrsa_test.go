package rsapad

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"testing"
)

// Cross-checks against crypto/rsa: encodings made here, raised to the
// private exponent with math/big, must verify or decrypt with crypto/rsa,
// and crypto/rsa's signatures and ciphertexts, run through math/big, must
// verify or decode here.

func TestCrossPKCS1v15Sign(t *testing.T) {
	t.Parallel()
	for bits, priv := range keys(t) {
		k := priv.Size()
		for _, h := range allHashes {
			t.Run(fmt.Sprintf("%d/%v", bits, h), func(t *testing.T) {
				t.Parallel()
				digest := digestOf(h, []byte("message to sign"))
				di, err := DigestInfo(h, digest)
				if err != nil {
					t.Fatal(err)
				}
				em, err := EncodePKCS1v15Sign(di, k)
				if err != nil {
					t.Fatal(err)
				}
				sig, err := rawPrivate(priv, em)
				if err != nil {
					t.Fatal(err)
				}
				if err := rsa.VerifyPKCS1v15(&priv.PublicKey, h, digest, sig); err != nil {
					t.Errorf("crypto/rsa rejects our signature: %v", err)
				}
				// The encoding is deterministic: crypto/rsa's signature
				// is the same number.
				theirs, err := rsa.SignPKCS1v15(nil, priv, h, digest)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(theirs, sig) {
					t.Errorf("signatures differ:\n ours   %x\n theirs %x", sig, theirs)
				}
				emTheirs, err := rawPublic(&priv.PublicKey, theirs)
				if err != nil {
					t.Fatal(err)
				}
				if err := VerifyPKCS1v15Sign(di, emTheirs); err != nil {
					t.Errorf("VerifyPKCS1v15Sign rejects crypto/rsa's signature: %v", err)
				}
				// Another message's DigestInfo must not verify.
				other, _ := DigestInfo(h, digestOf(h, []byte("another message")))
				if err := VerifyPKCS1v15Sign(other, emTheirs); err == nil {
					t.Error("signature verified for another message")
				}
			})
		}
		// CKM_RSA_PKCS: raw data, crypto/rsa's hash 0 mode.
		t.Run(fmt.Sprintf("%d/raw", bits), func(t *testing.T) {
			t.Parallel()
			for _, n := range []int{0, 1, 36, k - 11} {
				data := bytes.Repeat([]byte{0xa5}, n)
				sig, err := rsa.SignPKCS1v15(nil, priv, 0, data)
				if err != nil {
					t.Fatal(err)
				}
				em, err := rawPublic(&priv.PublicKey, sig)
				if err != nil {
					t.Fatal(err)
				}
				if err := VerifyPKCS1v15Sign(data, em); err != nil {
					t.Errorf("len %d: VerifyPKCS1v15Sign rejects crypto/rsa's signature: %v", n, err)
				}
				ours, err := EncodePKCS1v15Sign(data, k)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(ours, em) {
					t.Errorf("len %d: encodings differ", n)
				}
			}
		})
	}
}

// pssSaltLengths are the salt lengths tried for a key and hash, max being
// the largest the key allows.
func pssSaltLengths(hLen, maxSalt int) []int {
	var out []int
	for _, s := range []int{0, 20, 32, hLen, maxSalt} {
		if s <= maxSalt {
			out = append(out, s)
		}
	}
	return out
}

func TestCrossPSS(t *testing.T) {
	t.Parallel()
	for bits, priv := range keys(t) {
		emBits := bits - 1
		emLen := (emBits + 7) / 8
		for _, h := range allHashes {
			hLen := h.Size()
			maxSalt := emLen - hLen - 2
			for _, sLen := range pssSaltLengths(hLen, maxSalt) {
				t.Run(fmt.Sprintf("%d/%v/salt%d", bits, h, sLen), func(t *testing.T) {
					t.Parallel()
					digest := digestOf(h, []byte("PSS message"))
					// crypto/rsa reads SaltLength 0 as "auto" (detect on
					// verify, maximum on sign); salt 0 itself is covered
					// by detection, which accepts it.
					opts := &rsa.PSSOptions{SaltLength: sLen, Hash: h}
					if sLen == 0 {
						opts.SaltLength = rsa.PSSSaltLengthAuto
					}

					em, err := EncodePSS(digest, emBits, h, h, sLen, rand.Reader)
					if err != nil {
						t.Fatal(err)
					}
					if len(em) != emLen {
						t.Fatalf("EncodePSS: %d bytes, want %d", len(em), emLen)
					}
					sig, err := rawPrivate(priv, leftPad(em, priv.Size()))
					if err != nil {
						t.Fatal(err)
					}
					if err := rsa.VerifyPSS(&priv.PublicKey, h, digest, sig, opts); err != nil {
						t.Errorf("crypto/rsa rejects our signature: %v", err)
					}

					if sLen == 0 {
						return // crypto/rsa cannot sign with an empty salt
					}
					theirs, err := rsa.SignPSS(rand.Reader, priv, h, digest, opts)
					if err != nil {
						t.Fatal(err)
					}
					emK, err := rawPublic(&priv.PublicKey, theirs)
					if err != nil {
						t.Fatal(err)
					}
					// Both the modulus-length output and the emLen form.
					for _, in := range [][]byte{emK, emK[len(emK)-emLen:]} {
						if err := VerifyPSS(digest, in, emBits, h, h, sLen); err != nil {
							t.Errorf("VerifyPSS(%d bytes) rejects crypto/rsa's signature: %v", len(in), err)
						}
					}
					// The salt length is checked, not detected.
					for _, wrong := range []int{sLen - 1, sLen + 1} {
						if wrong < 0 || wrong > maxSalt {
							continue
						}
						if err := VerifyPSS(digest, emK, emBits, h, h, wrong); err == nil {
							t.Errorf("salt length %d accepted for a %d-byte salt", wrong, sLen)
						}
					}
					other := digestOf(h, []byte("other"))
					if err := VerifyPSS(other, emK, emBits, h, h, sLen); err == nil {
						t.Error("signature verified for another digest")
					}
				})
			}
		}
	}
}

func TestCrossOAEP(t *testing.T) {
	t.Parallel()
	for bits, priv := range keys(t) {
		k := priv.Size()
		for _, h := range allHashes {
			for _, mgf := range allHashes {
				if k < 2*h.Size()+2 {
					continue // TestOAEPParameters covers ErrKeyTooSmall
				}
				t.Run(fmt.Sprintf("%d/%v/mgf%v", bits, h, mgf), func(t *testing.T) {
					t.Parallel()
					maxMsg := k - 2*h.Size() - 2
					for _, tc := range []struct {
						msg, label []byte
					}{
						{nil, nil},
						{[]byte("secret"), nil},
						{[]byte("secret"), []byte("label")},
						{bytes.Repeat([]byte{1}, maxMsg), []byte{0}},
						{bytes.Repeat([]byte{0}, maxMsg), bytes.Repeat([]byte("L"), 300)},
					} {
						opts := &rsa.OAEPOptions{Hash: h, MGFHash: mgf, Label: tc.label}
						ct, err := rsa.EncryptOAEPWithOptions(rand.Reader, &priv.PublicKey, tc.msg, opts)
						if err != nil {
							t.Fatal(err)
						}
						em, err := rawPrivate(priv, ct)
						if err != nil {
							t.Fatal(err)
						}
						got, err := DecodeOAEP(em, tc.label, k, h, mgf)
						if err != nil || !bytes.Equal(got, tc.msg) {
							t.Errorf("len %d: DecodeOAEP of crypto/rsa's ciphertext = %x, %v", len(tc.msg), got, err)
						}
						if _, err := DecodeOAEP(em, append(tc.label, 'x'), k, h, mgf); err != ErrDecryption {
							t.Errorf("wrong label: err %v, want ErrDecryption", err)
						}

						em, err = EncodeOAEP(tc.msg, tc.label, k, h, mgf, rand.Reader)
						if err != nil {
							t.Fatal(err)
						}
						ct, err = rawPublic(&priv.PublicKey, em)
						if err != nil {
							t.Fatal(err)
						}
						got, err = priv.Decrypt(nil, ct, opts)
						if err != nil || !bytes.Equal(got, tc.msg) {
							t.Errorf("len %d: crypto/rsa decrypts ours to %x, %v", len(tc.msg), got, err)
						}
						if h == mgf {
							got, err = rsa.DecryptOAEP(h.New(), nil, priv, ct, tc.label)
							if err != nil || !bytes.Equal(got, tc.msg) {
								t.Errorf("len %d: rsa.DecryptOAEP = %x, %v", len(tc.msg), got, err)
							}
						}
					}
				})
			}
		}
	}
}

func TestCrossPKCS1v15Encrypt(t *testing.T) {
	t.Parallel()
	for bits, priv := range keys(t) {
		k := priv.Size()
		t.Run(fmt.Sprint(bits), func(t *testing.T) {
			t.Parallel()
			for _, n := range []int{0, 1, 16, 48, k - 11} {
				msg := bytes.Repeat([]byte{0x00, 0x5a}, n)[:n]
				ct, err := rsa.EncryptPKCS1v15(rand.Reader, &priv.PublicKey, msg)
				if err != nil {
					t.Fatal(err)
				}
				em, err := rawPrivate(priv, ct)
				if err != nil {
					t.Fatal(err)
				}
				got, err := DecodePKCS1v15Encrypt(em, k)
				if err != nil || !bytes.Equal(got, msg) {
					t.Errorf("len %d: DecodePKCS1v15Encrypt of crypto/rsa's ciphertext = %x, %v", n, got, err)
				}

				em, err = EncodePKCS1v15Encrypt(msg, k, rand.Reader)
				if err != nil {
					t.Fatal(err)
				}
				ct, err = rawPublic(&priv.PublicKey, em)
				if err != nil {
					t.Fatal(err)
				}
				got, err = rsa.DecryptPKCS1v15(nil, priv, ct)
				if err != nil || !bytes.Equal(got, msg) {
					t.Errorf("len %d: crypto/rsa decrypts ours to %x, %v", n, got, err)
				}
			}
		})
	}
}

// TestCrossHashMismatch checks that the hash choices matter: a PSS or OAEP
// encoding made with one (hash, MGF hash) pair fails with any other pair.
func TestCrossHashMismatch(t *testing.T) {
	t.Parallel()
	const emBits = 2047
	pairs := [][2]crypto.Hash{{crypto.SHA256, crypto.SHA256}, {crypto.SHA256, crypto.SHA1}, {crypto.SHA256, crypto.SHA512}, {crypto.SHA1, crypto.SHA256}}
	for _, enc := range pairs {
		for _, dec := range pairs {
			if enc[0].Size() != dec[0].Size() {
				continue // a digest-length error, tested elsewhere
			}
			digest := digestOf(enc[0], []byte("m"))
			em, err := EncodePSS(digest, emBits, enc[0], enc[1], 20, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			err = VerifyPSS(digest, em, emBits, dec[0], dec[1], 20)
			if (err == nil) != (enc == dec) {
				t.Errorf("PSS encoded with %v, verified with %v: %v", enc, dec, err)
			}
			em, err = EncodeOAEP([]byte("m"), nil, 256, enc[0], enc[1], rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeOAEP(em, nil, 256, dec[0], dec[1])
			if (err == nil) != (enc == dec) {
				t.Errorf("OAEP encoded with %v, decoded with %v: %v", enc, dec, err)
			}
		}
	}
}
