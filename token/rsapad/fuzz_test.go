package rsapad

import (
	"bytes"
	"crypto"
	"testing"
)

// Fuzz targets for every decoder. Beyond never panicking, each checks that
// whatever it accepts is the one canonical encoding of what it returned:
// re-encoding the result (with the recovered seed or salt) gives em back.
// Seed corpora live in testdata/fuzz/.

// fuzzHash picks one of the supported hashes, or an unsupported one.
func fuzzHash(sel uint8) crypto.Hash {
	if int(sel) < len(allHashes) {
		return allHashes[sel]
	}
	return crypto.Hash(sel) // mostly unsupported; must be rejected cleanly
}

func FuzzDecodeOAEP(f *testing.F) {
	f.Add(make([]byte, 128), []byte{}, uint8(2), uint8(2), int8(0))
	f.Fuzz(func(t *testing.T, em, label []byte, hSel, mgfSel uint8, kDelta int8) {
		h, mgf := fuzzHash(hSel), fuzzHash(mgfSel)
		k := len(em) + int(kDelta%2)
		in := append([]byte{}, em...)
		msg, err := DecodeOAEP(em, label, k, h, mgf)
		if !bytes.Equal(in, em) {
			t.Fatal("input modified")
		}
		if err != nil {
			if msg != nil {
				t.Fatal("message returned with an error")
			}
			return
		}
		hLen := h.Size()
		if len(em) != k || len(msg) > k-2*hLen-2 {
			t.Fatalf("accepted %d bytes for k %d, message %d bytes", len(em), k, len(msg))
		}
		seed := xorBytes(em[1:1+hLen], mgf1Ref(mgf, em[1+hLen:], hLen))
		again, err := EncodeOAEP(msg, label, k, h, mgf, &fixedReader{seed})
		if err != nil || !bytes.Equal(again, em) {
			t.Fatalf("re-encoding differs: %x, %v", again, err)
		}
	})
}

func FuzzDecodePKCS1v15Encrypt(f *testing.F) {
	f.Add(append(append([]byte{0, 2}, bytes.Repeat([]byte{7}, 8)...), 0, 'm'), int8(0))
	f.Fuzz(func(t *testing.T, em []byte, kDelta int8) {
		k := len(em) + int(kDelta%2)
		in := append([]byte{}, em...)
		msg, err := DecodePKCS1v15Encrypt(em, k)
		if !bytes.Equal(in, em) {
			t.Fatal("input modified")
		}
		if err != nil {
			if msg != nil {
				t.Fatal("message returned with an error")
			}
			return
		}
		sep := k - len(msg) - 1
		if len(em) != k || sep < 10 || em[0] != 0 || em[1] != 2 || em[sep] != 0 ||
			bytes.IndexByte(em[2:sep], 0) >= 0 || !bytes.Equal(em[sep+1:], msg) {
			t.Fatalf("accepted malformed encoding %x as %x", em, msg)
		}
	})
}

// FuzzVerifyPKCS1v15Sign: whatever the inputs, a verification that passes
// means em is exactly the encoding of t.
func FuzzVerifyPKCS1v15Sign(f *testing.F) {
	f.Add([]byte("t"), append(append([]byte{0, 1}, bytes.Repeat([]byte{0xff}, 8)...), 0, 't'))
	f.Fuzz(func(t *testing.T, tb, em []byte) {
		in := append([]byte{}, em...)
		err := VerifyPKCS1v15Sign(tb, em)
		if !bytes.Equal(in, em) {
			t.Fatal("input modified")
		}
		if err != nil {
			return
		}
		again, eerr := EncodePKCS1v15Sign(tb, len(em))
		if eerr != nil || !bytes.Equal(again, em) {
			t.Fatalf("accepted %x for %x: re-encoding %x, %v", em, tb, again, eerr)
		}
	})
}

func FuzzVerifyPSS(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 128), 1023, uint8(2), uint8(2), 32)
	f.Fuzz(func(t *testing.T, mHash, em []byte, emBits int, hSel, mgfSel uint8, sLen int) {
		h, mgf := fuzzHash(hSel), fuzzHash(mgfSel)
		in := append([]byte{}, em...)
		err := VerifyPSS(mHash, em, emBits, h, mgf, sLen)
		if !bytes.Equal(in, em) {
			t.Fatal("input modified")
		}
		if err != nil {
			return
		}
		emLen := (emBits + 7) / 8
		if len(em) == emLen+1 {
			em = em[1:]
		}
		dbLen := emLen - h.Size() - 1
		db := xorBytes(em[:dbLen], mgf1Ref(mgf, em[dbLen:emLen-1], dbLen))
		salt := db[dbLen-sLen:]
		if want := pssRef(mHash, salt, emBits, h, mgf); !bytes.Equal(want, em) {
			t.Fatalf("accepted non-canonical %x, want %x", em, want)
		}
	})
}
