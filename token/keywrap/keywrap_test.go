package keywrap

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func block(t testing.TB, key []byte) cipher.Block {
	t.Helper()
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 3394 §4 (all six) and RFC 5649 §6 (both).
func TestRFCVectors(t *testing.T) {
	const kek = "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
	kw := []struct{ kek, key, ct string }{
		{kek[:32], "00112233445566778899AABBCCDDEEFF", "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"},
		{kek[:48], "00112233445566778899AABBCCDDEEFF", "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D"},
		{kek, "00112233445566778899AABBCCDDEEFF", "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"},
		{kek[:48], "00112233445566778899AABBCCDDEEFF0001020304050607", "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2"},
		{kek, "00112233445566778899AABBCCDDEEFF0001020304050607", "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1"},
		{kek, "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F", "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"},
	}
	for i, v := range kw {
		b := block(t, unhex(t, v.kek))
		ct, err := Wrap(b, nil, unhex(t, v.key))
		if err != nil || !bytes.Equal(ct, unhex(t, v.ct)) {
			t.Errorf("RFC 3394 #%d: wrap %x, %v", i+1, ct, err)
		}
		pt, err := Unwrap(b, nil, unhex(t, v.ct))
		if err != nil || !bytes.Equal(pt, unhex(t, v.key)) {
			t.Errorf("RFC 3394 #%d: unwrap %x, %v", i+1, pt, err)
		}
	}
	kwp := []struct{ key, ct string }{
		{"c37b7e6492584340bed12207808941155068f738", "138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a"},
		{"466f7250617369", "afbeb0f07dfbf5419200f2ccb50bb24f"},
	}
	b := block(t, unhex(t, "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8"))
	for i, v := range kwp {
		ct, err := WrapPad(b, nil, unhex(t, v.key))
		if err != nil || !bytes.Equal(ct, unhex(t, v.ct)) {
			t.Errorf("RFC 5649 #%d: wrap %x, %v", i+1, ct, err)
		}
		pt, err := UnwrapPad(b, nil, unhex(t, v.ct))
		if err != nil || !bytes.Equal(pt, unhex(t, v.key)) {
			t.Errorf("RFC 5649 #%d: unwrap %x, %v", i+1, pt, err)
		}
	}
}

type wycheFile struct {
	Algorithm  string `json:"algorithm"`
	TestGroups []struct {
		KeySize int `json:"keySize"`
		Tests   []struct {
			TcID    int      `json:"tcId"`
			Comment string   `json:"comment"`
			Key     string   `json:"key"`
			Msg     string   `json:"msg"`
			Ct      string   `json:"ct"`
			Result  string   `json:"result"`
			Flags   []string `json:"flags"`
		} `json:"tests"`
	} `json:"testGroups"`
}

// TestWycheproof runs Wycheproof's kw_test.json and kwp_test.json: every
// valid vector wraps to its ciphertext and unwraps back; every invalid one
// is refused by unwrap (and, if its message cannot be wrapped, by wrap);
// "acceptable" ones (small keys) are accepted.
func TestWycheproof(t *testing.T) {
	for _, c := range []struct {
		file         string
		wrap, unwrap func(b cipher.Block, iv, in []byte) ([]byte, error)
	}{
		{"testdata/kw_test.json", func(b cipher.Block, iv, in []byte) ([]byte, error) {
			return Wrap(b, iv, in)
		}, func(b cipher.Block, iv, in []byte) ([]byte, error) {
			return Unwrap(b, iv, in)
		}},
		{"testdata/kwp_test.json", func(b cipher.Block, iv, in []byte) ([]byte, error) {
			return WrapPad(b, iv, in)
		}, func(b cipher.Block, iv, in []byte) ([]byte, error) {
			return UnwrapPad(b, iv, in)
		}},
	} {
		raw, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		var f wycheFile
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range f.TestGroups {
			for _, v := range g.Tests {
				n++
				b := block(t, unhex(t, v.Key))
				msg, ct := unhex(t, v.Msg), unhex(t, v.Ct)
				pt, uerr := c.unwrap(b, nil, ct)
				switch v.Result {
				case "acceptable":
					// Small keys (an empty one): refusing them is allowed,
					// a success must give the message.
					if uerr == nil && !bytes.Equal(pt, msg) {
						t.Errorf("%s #%d (%s): unwrap %x", f.Algorithm, v.TcID, v.Comment, pt)
					}
					if got, err := c.wrap(b, nil, msg); err == nil && !bytes.Equal(got, ct) {
						t.Errorf("%s #%d (%s): wrap %x", f.Algorithm, v.TcID, v.Comment, got)
					}
				case "valid":
					if uerr != nil || !bytes.Equal(pt, msg) {
						t.Errorf("%s #%d (%s): unwrap %x, %v", f.Algorithm, v.TcID, v.Comment, pt, uerr)
					}
					got, err := c.wrap(b, nil, msg)
					if err != nil || !bytes.Equal(got, ct) {
						t.Errorf("%s #%d (%s): wrap %x, %v", f.Algorithm, v.TcID, v.Comment, got, err)
					}
				case "invalid":
					if uerr == nil {
						t.Errorf("%s #%d (%s): invalid ciphertext unwrapped to %x", f.Algorithm, v.TcID, v.Comment, pt)
					} else if !errors.Is(uerr, ErrIntegrity) && !errors.Is(uerr, ErrLength) {
						t.Errorf("%s #%d: unwrap error %v", f.Algorithm, v.TcID, uerr)
					}
				default:
					t.Fatalf("%s #%d: result %q", f.Algorithm, v.TcID, v.Result)
				}
			}
		}
		if n < 100 {
			t.Errorf("%s: only %d vectors", c.file, n)
		}
		t.Logf("%s: %d vectors", f.Algorithm, n)
	}
}

func TestRoundTripAndErrors(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	b := block(t, key)
	for n := 1; n <= 80; n++ {
		p := make([]byte, n)
		rand.Read(p)
		ct, err := WrapPad(b, nil, p)
		if err != nil || len(ct) != (n+7)&^7+8 {
			t.Fatalf("WrapPad(%d bytes): %d bytes, %v", n, len(ct), err)
		}
		got, err := UnwrapPad(b, nil, ct)
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("UnwrapPad(%d bytes): %v", n, err)
		}
		ct[len(ct)-1-n%len(ct)] ^= 0x40
		if _, err := UnwrapPad(b, nil, ct); !errors.Is(err, ErrIntegrity) {
			t.Fatalf("UnwrapPad of a modified wrap (%d bytes): %v", n, err)
		}
		if n%8 == 0 && n >= 16 {
			ct, err := Wrap(b, nil, p)
			if err != nil || len(ct) != n+8 {
				t.Fatalf("Wrap(%d bytes): %v", n, err)
			}
			if got, err := Unwrap(b, nil, ct); err != nil || !bytes.Equal(got, p) {
				t.Fatalf("Unwrap(%d bytes): %v", n, err)
			}
			// Another IV does not unwrap.
			if _, err := Unwrap(b, []byte("01234567"), ct); !errors.Is(err, ErrIntegrity) {
				t.Fatalf("Unwrap with another IV: %v", err)
			}
		} else if _, err := Wrap(b, nil, p); !errors.Is(err, ErrLength) {
			t.Fatalf("Wrap(%d bytes): %v, want ErrLength", n, err)
		}
	}
	// A KWP ciphertext of 16 bytes whose MLI claims more than 8 bytes,
	// and one whose padding is not zero, are refused.
	for _, p := range [][]byte{{0xA6, 0x59, 0x59, 0xA6, 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xA6, 0x59, 0x59, 0xA6, 0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xA6, 0x59, 0x59, 0xA6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{0xA6, 0x59, 0x59, 0xA6, 0x80, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7, 0}} {
		ct := make([]byte, 16)
		b.Encrypt(ct, p)
		if _, err := UnwrapPad(b, nil, ct); !errors.Is(err, ErrIntegrity) {
			t.Errorf("UnwrapPad(%x): %v", p, err)
		}
	}
	for _, n := range []int{0, 8, 15, 17} {
		if _, err := Unwrap(b, nil, make([]byte, n)); !errors.Is(err, ErrLength) {
			t.Errorf("Unwrap(%d bytes): %v", n, err)
		}
		if n != 0 && n != 8 {
			if _, err := UnwrapPad(b, nil, make([]byte, n)); !errors.Is(err, ErrLength) {
				t.Errorf("UnwrapPad(%d bytes): %v", n, err)
			}
		}
	}
	if _, err := WrapPad(b, nil, nil); !errors.Is(err, ErrLength) {
		t.Errorf("WrapPad(empty): %v", err)
	}
	if _, err := Wrap(b, []byte{1}, make([]byte, 16)); !errors.Is(err, ErrIV) {
		t.Errorf("Wrap with a 1-byte IV: %v", err)
	}
}

// TestOpenSSL cross-checks against `openssl enc -id-aesN-wrap(-pad)`.
func TestOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl not found (Debian package openssl)")
	}
	for _, keyLen := range []int{16, 24, 32} {
		key := make([]byte, keyLen)
		rand.Read(key)
		b := block(t, key)
		for _, n := range []int{5, 16, 24, 32, 100, 1217} {
			p := make([]byte, n)
			rand.Read(p)
			modes := []struct {
				cipher, iv string
				wrap       func() ([]byte, error)
			}{{"-id-aes%d-wrap-pad", "A65959A6", func() ([]byte, error) { return WrapPad(b, nil, p) }}}
			if n%8 == 0 && n >= 16 {
				modes = append(modes, struct {
					cipher, iv string
					wrap       func() ([]byte, error)
				}{"-id-aes%d-wrap", "A6A6A6A6A6A6A6A6", func() ([]byte, error) { return Wrap(b, nil, p) }})
			}
			for _, m := range modes {
				cipherName := fmt.Sprintf(m.cipher, keyLen*8)
				cmd := exec.Command("openssl", "enc", cipherName, "-K", hex.EncodeToString(key), "-iv", m.iv)
				cmd.Stdin = bytes.NewReader(p)
				want, err := cmd.Output()
				if err != nil {
					t.Fatalf("openssl enc %s: %v", cipherName, err)
				}
				got, err := m.wrap()
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s, %d bytes: ours %x (%v), openssl %x", cipherName, n, got, err, want)
				}
			}
		}
	}
}

// FuzzUnwrap: no input panics; what unwraps wraps back to the input.
func FuzzUnwrap(f *testing.F) {
	f.Add(unhex(f, "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"), false)
	f.Add(unhex(f, "afbeb0f07dfbf5419200f2ccb50bb24f"), true)
	f.Add(make([]byte, 16), true)
	f.Add(make([]byte, 24), false)
	b := block(f, unhex(f, "000102030405060708090A0B0C0D0E0F"))
	f.Fuzz(func(t *testing.T, ct []byte, pad bool) {
		if pad {
			p, err := UnwrapPad(b, nil, ct)
			if err == nil {
				if back, err := WrapPad(b, nil, p); err != nil || !bytes.Equal(back, ct) {
					t.Fatalf("UnwrapPad(%x) = %x does not wrap back", ct, p)
				}
			}
			return
		}
		p, err := Unwrap(b, nil, ct)
		if err == nil {
			if back, err := Wrap(b, nil, p); err != nil || !bytes.Equal(back, ct) {
				t.Fatalf("Unwrap(%x) = %x does not wrap back", ct, p)
			}
		}
	})
}
