package rsapad

import (
	"bytes"
	"crypto"
	_ "crypto/md5" // the package does not link MD5; its DigestInfo test hashes
	"crypto/rand"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// fixedReader returns its bytes, then io.ErrUnexpectedEOF.
type fixedReader struct{ b []byte }

func (r *fixedReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

var errBroken = errors.New("broken reader")

type brokenReader struct{}

func (brokenReader) Read([]byte) (int, error) { return 0, errBroken }

func TestDigestInfo(t *testing.T) {
	t.Parallel()
	oids := map[crypto.Hash]asn1.ObjectIdentifier{
		crypto.SHA1:   {1, 3, 14, 3, 2, 26},
		crypto.SHA224: {2, 16, 840, 1, 101, 3, 4, 2, 4},
		crypto.SHA256: {2, 16, 840, 1, 101, 3, 4, 2, 1},
		crypto.SHA384: {2, 16, 840, 1, 101, 3, 4, 2, 2},
		crypto.SHA512: {2, 16, 840, 1, 101, 3, 4, 2, 3},
		// RFC 8702 §2.
		crypto.SHA3_224: {2, 16, 840, 1, 101, 3, 4, 2, 7},
		crypto.SHA3_256: {2, 16, 840, 1, 101, 3, 4, 2, 8},
		crypto.SHA3_384: {2, 16, 840, 1, 101, 3, 4, 2, 9},
		crypto.SHA3_512: {2, 16, 840, 1, 101, 3, 4, 2, 10},
	}
	type algID struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters asn1.RawValue
	}
	type digestInfo struct {
		Alg    algID
		Digest []byte
	}
	// MD5 (RFC 8017 §9.2 note 1), for CKM_MD5_RSA_PKCS: DigestInfo only.
	oids[crypto.MD5] = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 5}
	for _, h := range append(slices.Clone(allHashes), crypto.MD5) {
		digest := digestOf(h, []byte("abc"))
		want, err := asn1.Marshal(digestInfo{algID{oids[h], asn1.NullRawValue}, digest})
		if err != nil {
			t.Fatal(err)
		}
		got, err := DigestInfo(h, digest)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%v: DigestInfo = %x, %v; want %x", h, got, err, want)
		}
		for _, n := range []int{0, h.Size() - 1, h.Size() + 1} {
			if _, err := DigestInfo(h, make([]byte, n)); !errors.Is(err, ErrDigestLength) {
				t.Errorf("%v, %d-byte digest: err %v, want ErrDigestLength", h, n, err)
			}
		}
	}
	for _, h := range []crypto.Hash{0, crypto.MD4, crypto.BLAKE2b_256, crypto.SHA512_256} {
		if _, err := DigestInfo(h, make([]byte, 32)); !errors.Is(err, ErrHashUnsupported) {
			t.Errorf("%v: err %v, want ErrHashUnsupported", h, err)
		}
	}
}

func TestMechanismAndMGFHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mech, mgf uint64
		want      crypto.Hash
	}{
		{ck.CKM_SHA_1, ck.CKG_MGF1_SHA1, crypto.SHA1},
		{ck.CKM_SHA224, ck.CKG_MGF1_SHA224, crypto.SHA224},
		{ck.CKM_SHA256, ck.CKG_MGF1_SHA256, crypto.SHA256},
		{ck.CKM_SHA384, ck.CKG_MGF1_SHA384, crypto.SHA384},
		{ck.CKM_SHA512, ck.CKG_MGF1_SHA512, crypto.SHA512},
		{ck.CKM_SHA3_224, ck.CKG_MGF1_SHA3_224, crypto.SHA3_224},
		{ck.CKM_SHA3_256, ck.CKG_MGF1_SHA3_256, crypto.SHA3_256},
		{ck.CKM_SHA3_384, ck.CKG_MGF1_SHA3_384, crypto.SHA3_384},
		{ck.CKM_SHA3_512, ck.CKG_MGF1_SHA3_512, crypto.SHA3_512},
	}
	for _, tc := range tests {
		if got, err := MechanismHash(tc.mech); err != nil || got != tc.want {
			t.Errorf("MechanismHash(0x%x) = %v, %v; want %v", tc.mech, got, err, tc.want)
		}
		if got, err := MGFHash(tc.mgf); err != nil || got != tc.want {
			t.Errorf("MGFHash(0x%x) = %v, %v; want %v", tc.mgf, got, err, tc.want)
		}
	}
	for _, m := range []uint64{0, ck.CKM_MD5, ck.CKM_SHA256_RSA_PKCS, ck.CKM_SHA512_224, 1 << 40} {
		if _, err := MechanismHash(m); !errors.Is(err, ErrHashUnsupported) {
			t.Errorf("MechanismHash(0x%x): err %v, want ErrHashUnsupported", m, err)
		}
	}
	for _, m := range []uint64{0, 10, 0x100, ck.CKM_SHA256} {
		if _, err := MGFHash(m); !errors.Is(err, ErrHashUnsupported) {
			t.Errorf("MGFHash(0x%x): err %v, want ErrHashUnsupported", m, err)
		}
	}
}

func TestMGF1(t *testing.T) {
	t.Parallel()
	seed := []byte("seed for the mask")
	for _, h := range allHashes {
		// Lengths below, at and across hash-block boundaries.
		for _, n := range []int{0, 1, h.Size() - 1, h.Size(), h.Size() + 1, 3*h.Size() + 5, 600} {
			out := make([]byte, n)
			mgf1XOR(out, h, seed)
			if want := mgf1Ref(h, seed, n); !bytes.Equal(out, want) {
				t.Errorf("%v, %d bytes: mgf1XOR differs from reference", h, n)
			}
		}
	}
}

func TestPKCS1v15SignEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tLen, k int
		err     error
	}{
		{0, 11, nil},
		{1, 12, nil},
		{245, 256, nil},
		{246, 256, ErrMessageTooLong},
		{1, 11, ErrMessageTooLong},
		{0, 10, ErrKeyTooSmall},
		{0, 0, ErrKeyTooSmall},
		{0, -5, ErrKeyTooSmall},
	}
	for _, tc := range tests {
		msg := bytes.Repeat([]byte{0x77}, tc.tLen)
		em, err := EncodePKCS1v15Sign(msg, tc.k)
		if !errors.Is(err, tc.err) {
			t.Errorf("tLen %d, k %d: err %v, want %v", tc.tLen, tc.k, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		want := append(append([]byte{0, 1}, bytes.Repeat([]byte{0xff}, tc.k-tc.tLen-3)...), 0)
		want = append(want, msg...)
		if !bytes.Equal(em, want) {
			t.Errorf("tLen %d, k %d: em %x, want %x", tc.tLen, tc.k, em, want)
		}
		if err := VerifyPKCS1v15Sign(msg, em); err != nil {
			t.Errorf("tLen %d, k %d: verify: %v", tc.tLen, tc.k, err)
		}
	}
}

func TestPKCS1v15SignMalformed(t *testing.T) {
	t.Parallel()
	tb := []byte("digest info stand-in")
	valid, err := EncodePKCS1v15Sign(tb, 64)
	if err != nil {
		t.Fatal(err)
	}
	sep := 64 - len(tb) - 1
	mutate := func(f func(em []byte) []byte) []byte { return f(append([]byte{}, valid...)) }
	tests := []struct {
		name string
		em   []byte
	}{
		{"empty", nil},
		{"ten bytes", valid[:10]},
		{"first byte", mutate(func(em []byte) []byte { em[0] = 1; return em })},
		{"block type 2", mutate(func(em []byte) []byte { em[1] = 2; return em })},
		{"block type 0", mutate(func(em []byte) []byte { em[1] = 0; return em })},
		{"0xfe in padding", mutate(func(em []byte) []byte { em[5] = 0xfe; return em })},
		{"zero inside padding", mutate(func(em []byte) []byte { em[9] = 0; return em })},
		{"no separator", mutate(func(em []byte) []byte { em[sep] = 0xff; return em })},
		{"all 0xff", mutate(func(em []byte) []byte { return append(em[:2], bytes.Repeat([]byte{0xff}, 62)...) })},
		{"seven-byte padding", append([]byte{0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0}, tb...)},
		{"leading extra zero", append([]byte{0}, valid...)},
	}
	for _, tc := range tests {
		if err := VerifyPKCS1v15Sign(tb, tc.em); err == nil {
			t.Errorf("%s: VerifyPKCS1v15Sign accepted", tc.name)
		}
	}
	// Eight bytes of padding is the minimum and is valid.
	eight := append([]byte{0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0}, tb...)
	if err := VerifyPKCS1v15Sign(tb, eight); err != nil {
		t.Errorf("eight-byte padding: %v", err)
	}
}

func TestPKCS1v15EncryptEncoding(t *testing.T) {
	t.Parallel()
	for _, k := range []int{11, 12, 128, 257} {
		for _, n := range []int{0, min(1, k-11), k - 11} {
			msg := bytes.Repeat([]byte{0}, n) // zeros must not confuse the decoder
			em, err := EncodePKCS1v15Encrypt(msg, k, rand.Reader)
			if err != nil {
				t.Fatalf("k %d, len %d: %v", k, n, err)
			}
			if len(em) != k || em[0] != 0 || em[1] != 2 || em[k-n-1] != 0 || bytes.IndexByte(em[2:k-n-1], 0) >= 0 {
				t.Errorf("k %d, len %d: bad layout %x", k, n, em)
			}
			if got, err := DecodePKCS1v15Encrypt(em, k); err != nil || !bytes.Equal(got, msg) {
				t.Errorf("k %d, len %d: decode = %x, %v", k, n, got, err)
			}
		}
	}
	// Zero bytes from the random source are replaced, not used.
	zeros := &fixedReader{append(make([]byte, 50), bytes.Repeat([]byte{9}, 100)...)}
	em, err := EncodePKCS1v15Encrypt([]byte("m"), 64, zeros)
	if err != nil || bytes.IndexByte(em[2:64-2], 0) >= 0 {
		t.Errorf("zero random bytes: %x, %v", em, err)
	}

	errTests := []struct {
		name string
		n, k int
		r    io.Reader
		err  error
	}{
		{"too long", 54, 64, rand.Reader, ErrMessageTooLong},
		{"tiny modulus", 0, 10, rand.Reader, ErrKeyTooSmall},
		{"nil rand", 1, 64, nil, ErrInvalidParameter},
		{"broken rand", 1, 64, brokenReader{}, errBroken},
		{"short rand", 1, 64, &fixedReader{make([]byte, 10)}, io.ErrUnexpectedEOF},
	}
	for _, tc := range errTests {
		if _, err := EncodePKCS1v15Encrypt(make([]byte, tc.n), tc.k, tc.r); !errors.Is(err, tc.err) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.err)
		}
	}
}

func TestPKCS1v15DecryptMalformed(t *testing.T) {
	t.Parallel()
	const k = 64
	build := func(first, bt byte, psLen int, msg []byte) []byte {
		em := append([]byte{first, bt}, bytes.Repeat([]byte{0x33}, psLen)...)
		return append(append(em, 0), msg...)
	}
	tests := []struct {
		name string
		em   []byte
		want []byte // nil: must fail
	}{
		{"valid", build(0, 2, k-3-5, []byte("hello")), []byte("hello")},
		{"empty message", build(0, 2, k-3, nil), []byte{}},
		{"eight-byte PS", build(0, 2, 8, make([]byte, k-11)), make([]byte, k-11)},
		{"seven-byte PS", build(0, 2, 7, make([]byte, k-10)), nil},
		{"zero-byte PS", build(0, 2, 0, make([]byte, k-3)), nil},
		{"first byte", build(1, 2, k-3-5, []byte("hello")), nil},
		{"block type 1", build(0, 1, k-3-5, []byte("hello")), nil},
		{"no separator", append([]byte{0, 2}, bytes.Repeat([]byte{0x33}, k-2)...), nil},
		{"short", build(0, 2, k-4-5, []byte("hello")), nil},
		{"long", build(0, 2, k-2-5, []byte("hello")), nil},
	}
	for _, tc := range tests {
		in := append([]byte{}, tc.em...)
		got, err := DecodePKCS1v15Encrypt(tc.em, k)
		if !bytes.Equal(in, tc.em) {
			t.Errorf("%s: input modified", tc.name)
		}
		if tc.want == nil {
			if err != ErrDecryption || got != nil {
				t.Errorf("%s: got %x, %v; want ErrDecryption itself", tc.name, got, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: got %x, %v; want %x", tc.name, got, err, tc.want)
		}
		if len(got) > 0 && &got[0] == &tc.em[len(tc.em)-len(got)] {
			t.Errorf("%s: result aliases the input", tc.name)
		}
	}
	if _, err := DecodePKCS1v15Encrypt(make([]byte, 10), 10); !errors.Is(err, ErrKeyTooSmall) {
		t.Errorf("k 10: err %v, want ErrKeyTooSmall", err)
	}
}

// oaepRef builds an EME-OAEP encoding straight from RFC 8017 §7.1.1 with
// the reference MGF1, from a given data block and seed.
func oaepRef(db, seed []byte, mgf crypto.Hash) []byte {
	maskedDB := xorBytes(db, mgf1Ref(mgf, seed, len(db)))
	maskedSeed := xorBytes(seed, mgf1Ref(mgf, maskedDB, len(seed)))
	return append(append([]byte{0}, maskedSeed...), maskedDB...)
}

func TestOAEPEncoding(t *testing.T) {
	t.Parallel()
	const k = 256
	seedBytes := bytes.Repeat([]byte{0xc3, 0x1f, 0x80}, 30)
	for _, h := range allHashes {
		for _, mgf := range allHashes {
			hLen := h.Size()
			label := []byte("label")
			msg := []byte("message")
			seed := seedBytes[:hLen]
			db := append(digestOf(h, label), make([]byte, k-2*hLen-2-len(msg))...)
			db = append(append(db, 1), msg...)
			want := oaepRef(db, seed, mgf)

			em, err := EncodeOAEP(msg, label, k, h, mgf, &fixedReader{seed})
			if err != nil || !bytes.Equal(em, want) {
				t.Errorf("%v/%v: EncodeOAEP = %x, %v\nwant %x", h, mgf, em, err, want)
			}

			// Every way the padding can be wrong gives ErrDecryption itself.
			bad := map[string][]byte{}
			wrongFirst := append([]byte{}, want...)
			wrongFirst[0] = 1
			bad["first byte"] = wrongFirst
			wrongL := append([]byte{}, db...)
			wrongL[3] ^= 0x40
			bad["lHash"] = oaepRef(wrongL, seed, mgf)
			noOne := append([]byte{}, db...)
			noOne[len(db)-len(msg)-1] = 0
			copy(noOne[len(db)-len(msg):], make([]byte, len(msg)))
			bad["no 0x01"] = oaepRef(noOne, seed, mgf)
			junk := append([]byte{}, db...)
			junk[hLen+2] = 0x02
			bad["nonzero PS byte"] = oaepRef(junk, seed, mgf)
			bad["short"] = want[1:]
			bad["long"] = append([]byte{0}, want...)
			for name, em := range bad {
				if got, err := DecodeOAEP(em, label, k, h, mgf); err != ErrDecryption || got != nil {
					t.Errorf("%v/%v %s: %x, %v; want ErrDecryption itself", h, mgf, name, got, err)
				}
			}
			// The 0x01 right after lHash (longest message) and a message
			// that itself starts with 0x01 or 0x00.
			for _, m := range [][]byte{make([]byte, k-2*hLen-2), {1, 1, 0}, {0, 0, 1}} {
				em, err := EncodeOAEP(m, nil, k, h, mgf, rand.Reader)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := DecodeOAEP(em, nil, k, h, mgf); err != nil || !bytes.Equal(got, m) {
					t.Errorf("%v/%v: round trip of %x: %x, %v", h, mgf, m, got, err)
				}
			}
		}
	}
}

func TestOAEPParameters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		msgLen  int
		k       int
		h, mgf  crypto.Hash
		r       io.Reader
		err     error
		decoErr error // DecodeOAEP with the same k and hashes
	}{
		{"fits", 256 - 66, 256, crypto.SHA256, crypto.SHA256, rand.Reader, nil, ErrDecryption},
		{"one too long", 256 - 65, 256, crypto.SHA256, crypto.SHA256, rand.Reader, ErrMessageTooLong, ErrDecryption},
		{"SHA-512 on 1024 bits", 0, 128, crypto.SHA512, crypto.SHA1, rand.Reader, ErrKeyTooSmall, ErrKeyTooSmall},
		{"smallest modulus", 0, 2*20 + 2, crypto.SHA1, crypto.SHA1, rand.Reader, nil, ErrDecryption},
		{"below smallest", 0, 2*20 + 1, crypto.SHA1, crypto.SHA512, rand.Reader, ErrKeyTooSmall, ErrKeyTooSmall},
		{"MD5", 0, 256, crypto.MD5, crypto.SHA1, rand.Reader, ErrHashUnsupported, ErrHashUnsupported},
		{"MGF BLAKE2b", 0, 256, crypto.SHA256, crypto.BLAKE2b_256, rand.Reader, ErrHashUnsupported, ErrHashUnsupported},
		{"zero hash", 0, 256, 0, crypto.SHA256, rand.Reader, ErrHashUnsupported, ErrHashUnsupported},
		{"nil rand", 0, 256, crypto.SHA256, crypto.SHA256, nil, ErrInvalidParameter, ErrDecryption},
		{"broken rand", 0, 256, crypto.SHA256, crypto.SHA256, brokenReader{}, errBroken, ErrDecryption},
	}
	for _, tc := range tests {
		_, err := EncodeOAEP(make([]byte, tc.msgLen), nil, tc.k, tc.h, tc.mgf, tc.r)
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: EncodeOAEP err %v, want %v", tc.name, err, tc.err)
		}
		// All-zero em of the right length never decodes (lHash mismatch).
		if _, err := DecodeOAEP(make([]byte, max(tc.k, 0)), nil, tc.k, tc.h, tc.mgf); !errors.Is(err, tc.decoErr) {
			t.Errorf("%s: DecodeOAEP err %v, want %v", tc.name, err, tc.decoErr)
		}
	}
}

// pssRef builds an EMSA-PSS encoding straight from RFC 8017 §9.1.1 with
// the reference MGF1, from a given salt.
func pssRef(mHash, salt []byte, emBits int, h, mgf crypto.Hash) []byte {
	emLen := (emBits + 7) / 8
	mPrime := append(append(make([]byte, 8), mHash...), salt...)
	hh := digestOf(h, mPrime)
	ps := make([]byte, emLen-len(salt)-h.Size()-2)
	db := append(append(ps, 1), salt...)
	maskedDB := xorBytes(db, mgf1Ref(mgf, hh, len(db)))
	maskedDB[0] &= 0xff >> (8*emLen - emBits)
	return append(append(maskedDB, hh...), 0xbc)
}

func TestPSSEncoding(t *testing.T) {
	t.Parallel()
	saltBytes := bytes.Repeat([]byte{0x5e, 0xa1, 0x07}, 200)
	for _, emBits := range []int{1023, 1024, 1025, 1030, 2047} {
		emLen := (emBits + 7) / 8
		for _, h := range allHashes {
			for _, mgf := range []crypto.Hash{h, crypto.SHA1, crypto.SHA512} {
				mHash := digestOf(h, []byte("m"))
				maxSalt := emLen - h.Size() - 2
				for _, sLen := range []int{0, 1, h.Size(), maxSalt} {
					if sLen > maxSalt {
						continue
					}
					name := fmt.Sprintf("emBits %d %v/%v salt %d", emBits, h, mgf, sLen)
					salt := saltBytes[:sLen]
					want := pssRef(mHash, salt, emBits, h, mgf)
					em, err := EncodePSS(mHash, emBits, h, mgf, sLen, &fixedReader{salt})
					if err != nil || !bytes.Equal(em, want) {
						t.Errorf("%s: EncodePSS = %x, %v\nwant %x", name, em, err, want)
						continue
					}
					if err := VerifyPSS(mHash, em, emBits, h, mgf, sLen); err != nil {
						t.Errorf("%s: VerifyPSS: %v", name, err)
					}
					if err := VerifyPSS(mHash, append([]byte{0}, em...), emBits, h, mgf, sLen); err != nil {
						t.Errorf("%s: VerifyPSS of the modulus-length form: %v", name, err)
					}
					_, err = EncodePSS(mHash, emBits, h, mgf, maxSalt+1, rand.Reader)
					if !errors.Is(err, ErrKeyTooSmall) {
						t.Errorf("%s: salt %d: err %v, want ErrKeyTooSmall", name, maxSalt+1, err)
					}
				}
			}
		}
	}
}

func TestPSSMalformed(t *testing.T) {
	t.Parallel()
	const emBits = 1030 // two top bits cleared
	h, mgf := crypto.SHA256, crypto.SHA1
	mHash := digestOf(h, []byte("m"))
	salt := bytes.Repeat([]byte{0x42}, 20)
	valid := pssRef(mHash, salt, emBits, h, mgf)
	emLen := len(valid)
	dbLen := emLen - h.Size() - 1
	hh := valid[dbLen : emLen-1]
	mask := mgf1Ref(mgf, hh, dbLen)
	// remask rebuilds em from a modified plaintext data block.
	remask := func(f func(db []byte)) []byte {
		db := xorBytes(valid[:dbLen], mask)
		db[0] &= 0x03
		f(db)
		em := append(xorBytes(db, mask), valid[dbLen:]...)
		em[0] &= 0x03
		return em
	}
	mut := func(f func(em []byte)) []byte {
		em := append([]byte{}, valid...)
		f(em)
		return em
	}
	psLen := dbLen - len(salt) - 1
	tests := map[string][]byte{
		"trailer":              mut(func(em []byte) { em[emLen-1] = 0xbd }),
		"top bit set":          mut(func(em []byte) { em[0] |= 0x80 }),
		"bit 6 set":            mut(func(em []byte) { em[0] |= 0x40 }),
		"hash flipped":         mut(func(em []byte) { em[dbLen+3] ^= 1 }),
		"salt flipped":         mut(func(em []byte) { em[dbLen-1] ^= 1 }),
		"nonzero PS":           remask(func(db []byte) { db[5] = 1 }),
		"0x02 separator":       remask(func(db []byte) { db[psLen] = 2 }),
		"separator early":      remask(func(db []byte) { db[psLen-1] = 1 }),
		"short":                valid[1:],
		"two bytes long":       append([]byte{0, 0}, valid...),
		"modulus form nonzero": append([]byte{1}, valid...),
		"empty":                nil,
	}
	for name, em := range tests {
		if err := VerifyPSS(mHash, em, emBits, h, mgf, len(salt)); !errors.Is(err, ErrVerification) {
			t.Errorf("%s: err %v, want ErrVerification", name, err)
		}
	}
	if err := VerifyPSS(mHash, valid, emBits, h, mgf, len(salt)); err != nil {
		t.Fatalf("unmodified: %v", err)
	}

	paramTests := []struct {
		name   string
		mHash  []byte
		emBits int
		h, mgf crypto.Hash
		sLen   int
		err    error
	}{
		{"digest short", mHash[1:], emBits, h, mgf, 20, ErrDigestLength},
		{"digest of other hash", digestOf(crypto.SHA1, nil), emBits, h, mgf, 20, ErrDigestLength},
		{"negative salt", mHash, emBits, h, mgf, -1, ErrInvalidParameter},
		{"salt too long", mHash, emBits, h, mgf, emLen - 32 - 1, ErrKeyTooSmall},
		{"zero emBits", mHash, 0, h, mgf, 0, ErrKeyTooSmall},
		{"negative emBits", mHash, -9, h, mgf, 0, ErrKeyTooSmall},
		{"tiny", mHash, 8 * 33, h, mgf, 0, ErrKeyTooSmall},
		{"MD5", make([]byte, 16), emBits, crypto.MD5, mgf, 20, ErrHashUnsupported},
		{"MGF 0", mHash, emBits, h, 0, 20, ErrHashUnsupported},
	}
	for _, tc := range paramTests {
		if err := VerifyPSS(tc.mHash, valid, tc.emBits, tc.h, tc.mgf, tc.sLen); !errors.Is(err, tc.err) {
			t.Errorf("%s: VerifyPSS err %v, want %v", tc.name, err, tc.err)
		}
		if _, err := EncodePSS(tc.mHash, tc.emBits, tc.h, tc.mgf, tc.sLen, rand.Reader); !errors.Is(err, tc.err) {
			t.Errorf("%s: EncodePSS err %v, want %v", tc.name, err, tc.err)
		}
	}
	// The smallest encoding that fits: emLen = hLen + sLen + 2, with
	// seven of its top bits cleared.
	small, err := EncodePSS(mHash, 8*33+1, h, mgf, 0, nil)
	if err != nil {
		t.Errorf("smallest fitting encoding: %v", err)
	} else if err := VerifyPSS(mHash, small, 8*33+1, h, mgf, 0); err != nil {
		t.Errorf("smallest fitting encoding: verify: %v", err)
	}
	if _, err := EncodePSS(mHash, emBits, h, mgf, 1, nil); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("nil rand with salt: err %v, want ErrInvalidParameter", err)
	}
	if _, err := EncodePSS(mHash, emBits, h, mgf, 8, brokenReader{}); !errors.Is(err, errBroken) {
		t.Errorf("broken rand: err %v, want it wrapped", err)
	}
}

// TestErrorsWrapOneSentinel checks the package doc's promise that every
// error names its sentinel and carries the package prefix.
func TestErrorsWrapOneSentinel(t *testing.T) {
	t.Parallel()
	sentinels := []error{ErrHashUnsupported, ErrInvalidParameter, ErrDigestLength, ErrMessageTooLong, ErrKeyTooSmall, ErrVerification, ErrDecryption}
	_, e1 := DigestInfo(crypto.MD5, nil)
	_, e2 := EncodePKCS1v15Sign(make([]byte, 100), 64)
	e3 := VerifyPKCS1v15Sign([]byte("t"), make([]byte, 64))
	e4 := VerifyPSS(nil, nil, 2047, crypto.SHA256, crypto.SHA256, 0)
	_, e5 := EncodeOAEP(nil, nil, 10, crypto.SHA256, crypto.SHA256, rand.Reader)
	_, e6 := DecodeOAEP(nil, nil, 256, crypto.SHA256, crypto.SHA256)
	_, e7 := EncodePSS(make([]byte, 32), 2047, crypto.SHA256, crypto.SHA256, -3, rand.Reader)
	for i, err := range []error{e1, e2, e3, e4, e5, e6, e7} {
		n := 0
		for _, s := range sentinels {
			if errors.Is(err, s) {
				n++
			}
		}
		if n != 1 || len(err.Error()) < 8 || err.Error()[:8] != "rsapad: " {
			t.Errorf("error %d %q matches %d sentinels", i+1, err, n)
		}
	}
}
