package rsa

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/test/vectors/wycheproof"

	_ "crypto/sha1"
	_ "crypto/sha256"
	_ "crypto/sha512"
)

// loadVectors reads one of the shared Wycheproof files (test/vectors/wycheproof,
// also read by token/rsapad's tests); a missing file fails.
func loadVectors(t *testing.T, name, schema string) *wycheproof.RSAFile {
	t.Helper()
	f, err := wycheproof.RSA(name, schema)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// num is a big-endian number of the vectors.
func num(b []byte) *big.Int { return new(big.Int).SetBytes(b) }

// DigestInfo prefixes of RFC 8017 §9.2, note 1.
var digestInfoPrefix = map[string]struct {
	h      crypto.Hash
	prefix []byte
}{
	"SHA-1":   {crypto.SHA1, []byte{0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14}},
	"SHA-224": {crypto.SHA224, []byte{0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04, 0x05, 0x00, 0x04, 0x1c}},
	"SHA-256": {crypto.SHA256, []byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}},
	"SHA-384": {crypto.SHA384, []byte{0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30}},
	"SHA-512": {crypto.SHA512, []byte{0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40}},
}

// emsaPKCS1 is EMSA-PKCS1-v1_5 encoding (RFC 8017 §9.2) of msg.
func emsaPKCS1(t *testing.T, sha string, msg []byte, size int) []byte {
	t.Helper()
	di, ok := digestInfoPrefix[sha]
	if !ok {
		t.Fatalf("unknown hash %q", sha)
	}
	h := di.h.New()
	h.Write(msg)
	T := append(append([]byte(nil), di.prefix...), h.Sum(nil)...)
	em := make([]byte, size)
	em[1] = 1
	for i := 2; i < size-len(T)-1; i++ {
		em[i] = 0xff
	}
	copy(em[size-len(T):], T)
	return em
}

// factorN recovers p and q from (n, e, d) (RFC 8017 does not carry them in
// the sig-gen vectors): write d·e − 1 = 2^s·t and look for a non-trivial
// square root of 1.
func factorN(t *testing.T, n *big.Int, e int, d *big.Int) (p, q *big.Int) {
	t.Helper()
	one := big.NewInt(1)
	k := new(big.Int).Mul(d, big.NewInt(int64(e)))
	k.Sub(k, one)
	s := 0
	for k.Bit(s) == 0 {
		s++
	}
	tt := new(big.Int).Rsh(k, uint(s))
	nm1 := new(big.Int).Sub(n, one)
	for g := int64(2); g < 1000; g++ {
		x := new(big.Int).Exp(big.NewInt(g), tt, n)
		for range s {
			y := new(big.Int).Mul(x, x)
			y.Mod(y, n)
			if y.Cmp(one) == 0 && x.Cmp(one) != 0 && x.Cmp(nm1) != 0 {
				p = new(big.Int).GCD(nil, nil, new(big.Int).Sub(x, one), n)
				return p, new(big.Int).Div(n, p)
			}
			x = y
		}
	}
	t.Fatal("factorN: no factor found")
	return nil, nil
}

// TestWycheproofSigGen signs every message of the PKCS#1 v1.5 generation
// vectors with Private and compares with the expected signature.
func TestWycheproofSigGen(t *testing.T) {
	f := loadVectors(t, "rsa_pkcs1_2048_sig_gen_test.json", "rsassa_pkcs1_generate_schema_v1.json")
	eng := soft.New()
	ctx := context.Background()
	count := 0
	for _, g := range f.TestGroups {
		n := num(g.PrivateKey.Modulus)
		e := int(num(g.PrivateKey.PublicExponent).Int64())
		d := num(g.PrivateKey.PrivateExponent)
		p, q := factorN(t, n, e, d)
		blinds := []bool{false, true}
		if raceEnabled {
			blinds = blinds[:1]
		}
		for _, blind := range blinds {
			k, err := NewKey(eng, &PrivateKey{N: n, E: e, D: d, P: p, Q: q}, Options{ExponentBlinding: blind})
			if err != nil {
				t.Fatalf("NewKey: %v", err)
			}
			for _, tc := range g.Tests {
				em := emsaPKCS1(t, g.SHA, tc.Msg, k.Size())
				got, _, err := k.Private(ctx, em)
				if err != nil {
					t.Fatalf("tcId %d: Private: %v", tc.TcID, err)
				}
				if want := []byte(tc.Sig); !bytes.Equal(got, want) {
					t.Fatalf("tcId %d (%s): signature %x…, want %x…", tc.TcID, g.SHA, got[:8], want[:8])
				}
				count++
			}
		}
	}
	if count == 0 {
		t.Fatal("no vectors run")
	}
}

// pkcs1v15Unpad removes EME-PKCS1-v1_5 padding (RFC 8017 §7.2.2); ok is
// false if the padding is invalid. Not constant time: tests only.
func pkcs1v15Unpad(em []byte) ([]byte, bool) {
	if len(em) < 11 || em[0] != 0 || em[1] != 2 {
		return nil, false
	}
	i := bytes.IndexByte(em[2:], 0)
	if i < 8 {
		return nil, false
	}
	return em[2+i+1:], true
}

// TestWycheproofDecrypt decrypts the PKCS#1 v1.5 encryption vectors with
// full CRT keys (Dp, Dq, Qinv given and validated): valid cases must give
// the message back; for every case the result raised to e must be the
// ciphertext.
func TestWycheproofDecrypt(t *testing.T) {
	f := loadVectors(t, "rsa_pkcs1_2048_test.json", "rsaes_pkcs1_decrypt_schema_v1.json")
	eng := soft.New()
	ctx := context.Background()
	valid := 0
	for _, g := range f.TestGroups {
		pk := g.PrivateKey
		priv := &PrivateKey{
			N: num(pk.Modulus), E: int(num(pk.PublicExponent).Int64()),
			D: num(pk.PrivateExponent), P: num(pk.Prime1), Q: num(pk.Prime2),
			Dp: num(pk.Exponent1), Dq: num(pk.Exponent2), Qinv: num(pk.Coefficient),
		}
		k, err := NewKey(eng, priv, Options{})
		if err != nil {
			t.Fatalf("NewKey: %v", err)
		}
		for _, tc := range g.Tests {
			ct := []byte(tc.Ct)
			em, _, err := k.Private(ctx, ct)
			if len(ct) > k.Size() || new(big.Int).SetBytes(ct).Cmp(priv.N) >= 0 {
				if !errors.Is(err, ErrInputRange) {
					t.Fatalf("tcId %d: ciphertext too long or ≥ n: error %v, want ErrInputRange", tc.TcID, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("tcId %d: Private: %v", tc.TcID, err)
			}
			back, err := Public(priv.N, priv.E, em)
			if err != nil || new(big.Int).SetBytes(back).Cmp(new(big.Int).SetBytes(ct)) != 0 {
				t.Fatalf("tcId %d: result^e ≠ ciphertext (%v)", tc.TcID, err)
			}
			msg, ok := pkcs1v15Unpad(em)
			switch tc.Result {
			case "valid":
				if !ok || !bytes.Equal(msg, tc.Msg) {
					t.Fatalf("tcId %d: decrypted %x, want %x", tc.TcID, msg, tc.Msg)
				}
				valid++
			case "invalid":
				if ok && bytes.Equal(msg, tc.Msg) && len(tc.Msg) != 0 {
					t.Fatalf("tcId %d: invalid ciphertext decrypted to the message", tc.TcID)
				}
			}
		}
	}
	if valid == 0 {
		t.Fatal("no valid vectors run")
	}
}

// TestWycheproofPublic verifies the PKCS#1 v1.5 signature vectors with
// Public: valid signatures give the expected encoded message; invalid ones
// do not (or are out of range).
func TestWycheproofPublic(t *testing.T) {
	f := loadVectors(t, "rsa_signature_2048_sha256_test.json", "rsassa_pkcs1_verify_schema_v1.json")
	var valid, invalid int
	for _, g := range f.TestGroups {
		n := num(g.PublicKey.Modulus)
		e := int(num(g.PublicKey.PublicExponent).Int64())
		size := (n.BitLen() + 7) / 8
		for _, tc := range g.Tests {
			sig := []byte(tc.Sig)
			em := emsaPKCS1(t, g.SHA, tc.Msg, size)
			got, err := Public(n, e, sig)
			ok := err == nil && len(sig) == size && bytes.Equal(got, em)
			switch tc.Result {
			case "valid":
				if !ok {
					t.Errorf("tcId %d: valid signature not verified (err %v)", tc.TcID, err)
				}
				valid++
			case "invalid":
				if ok {
					t.Errorf("tcId %d: invalid signature verified (flags %v)", tc.TcID, tc.Flags)
				}
				invalid++
			}
		}
	}
	if valid == 0 || invalid == 0 {
		t.Fatalf("vectors run: %d valid, %d invalid", valid, invalid)
	}
}
