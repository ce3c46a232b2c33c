package token

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"math/big"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

var hashMechs = []struct {
	name     string
	hashMech uint64
	mgf      uint64
	pkcs     uint64
	pss      uint64
	hash     crypto.Hash
}{
	{"SHA1", ck.CKM_SHA_1, ck.CKG_MGF1_SHA1, ck.CKM_SHA1_RSA_PKCS, ck.CKM_SHA1_RSA_PKCS_PSS, crypto.SHA1},
	{"SHA224", ck.CKM_SHA224, ck.CKG_MGF1_SHA224, ck.CKM_SHA224_RSA_PKCS, ck.CKM_SHA224_RSA_PKCS_PSS, crypto.SHA224},
	{"SHA256", ck.CKM_SHA256, ck.CKG_MGF1_SHA256, ck.CKM_SHA256_RSA_PKCS, ck.CKM_SHA256_RSA_PKCS_PSS, crypto.SHA256},
	{"SHA384", ck.CKM_SHA384, ck.CKG_MGF1_SHA384, ck.CKM_SHA384_RSA_PKCS, ck.CKM_SHA384_RSA_PKCS_PSS, crypto.SHA384},
	{"SHA512", ck.CKM_SHA512, ck.CKG_MGF1_SHA512, ck.CKM_SHA512_RSA_PKCS, ck.CKM_SHA512_RSA_PKCS_PSS, crypto.SHA512},
}

// genKey generates an RSA key pair on the token.
func genKey(t *testing.T, m *Module, sh uint64, bits uint64, token bool, extraPriv ...Attribute) (uint64, uint64) {
	t.Helper()
	pub := []Attribute{aULong(ck.CKA_MODULUS_BITS, bits), aBool(ck.CKA_TOKEN, token), aStr(ck.CKA_LABEL, "gen")}
	priv := append([]Attribute{aBool(ck.CKA_TOKEN, token), aStr(ck.CKA_LABEL, "gen")}, extraPriv...)
	pk, sk, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN}, pub, priv)
	must(t, err)
	return pk, sk
}

// publicKey reads a public key object as a crypto/rsa key.
func publicKey(t *testing.T, m *Module, sh, obj uint64) *rsa.PublicKey {
	t.Helper()
	n := new(big.Int).SetBytes(attrValue(t, m, sh, obj, ck.CKA_MODULUS))
	e := new(big.Int).SetBytes(attrValue(t, m, sh, obj, ck.CKA_PUBLIC_EXPONENT))
	return &rsa.PublicKey{N: n, E: int(e.Int64())}
}

func sign(t *testing.T, m *Module, sh uint64, mc *Mechanism, key uint64, data []byte) []byte {
	t.Helper()
	must(t, m.SignInit(sh, mc, key))
	sig, _, err := m.Sign(sh, data, Out{Cap: 4096})
	must(t, err)
	return sig
}

func verify(m *Module, sh uint64, mc *Mechanism, key uint64, data, sig []byte) error {
	if err := m.VerifyInit(sh, mc, key); err != nil {
		return err
	}
	return m.Verify(sh, data, sig)
}

func hashOf(h crypto.Hash, data []byte) []byte {
	d := h.New()
	d.Write(data)
	return d.Sum(nil)
}

func pssMech(typ, hashMech, mgf, salt uint64) *Mechanism {
	return &Mechanism{Type: typ, PSS: &PSSParams{Hash: hashMech, MGF: mgf, SaltLen: salt}}
}

func TestSignEveryMechanism(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	pub := publicKey(t, m, sh, pk)
	if pub.N.BitLen() != 1024 || pub.E != 65537 {
		t.Fatalf("generated key %d bits, e=%d", pub.N.BitLen(), pub.E)
	}
	data := []byte("the quick brown fox signs a message")
	type tc struct {
		name  string
		mech  *Mechanism
		input []byte
		check func(sig []byte) error // crypto/rsa verification (nil: module only)
	}
	var cases []tc
	for _, h := range hashMechs {
		digest := hashOf(h.hash, data)
		di := append(digestInfoPrefixForTest(h.hash), digest...)
		cases = append(cases,
			tc{"RSA_PKCS/" + h.name, &Mechanism{Type: ck.CKM_RSA_PKCS}, di,
				func(sig []byte) error { return rsa.VerifyPKCS1v15(pub, h.hash, digest, sig) }},
			tc{h.name + "_RSA_PKCS", &Mechanism{Type: h.pkcs}, data,
				func(sig []byte) error { return rsa.VerifyPKCS1v15(pub, h.hash, digest, sig) }},
			tc{"RSA_PKCS_PSS/" + h.name, pssMech(ck.CKM_RSA_PKCS_PSS, h.hashMech, h.mgf, 20), digest,
				func(sig []byte) error {
					return rsa.VerifyPSS(pub, h.hash, digest, sig, &rsa.PSSOptions{SaltLength: 20})
				}},
			tc{h.name + "_RSA_PKCS_PSS", pssMech(h.pss, h.hashMech, h.mgf, uint64(min(h.hash.Size(), 32))), data,
				func(sig []byte) error {
					return rsa.VerifyPSS(pub, h.hash, digest, sig, &rsa.PSSOptions{SaltLength: min(h.hash.Size(), 32)})
				}},
		)
	}
	sha256Digest := hashOf(crypto.SHA256, data)
	cases = append(cases,
		tc{"RSA_PKCS_PSS/salt0/mgf-sha1", pssMech(ck.CKM_RSA_PKCS_PSS, ck.CKM_SHA256, ck.CKG_MGF1_SHA1, 0), sha256Digest, nil},
		tc{"RSA_PKCS_PSS/max-salt", pssMech(ck.CKM_RSA_PKCS_PSS, ck.CKM_SHA256, ck.CKG_MGF1_SHA256, 128-32-2), sha256Digest,
			func(sig []byte) error {
				return rsa.VerifyPSS(pub, crypto.SHA256, sha256Digest, sig, &rsa.PSSOptions{SaltLength: 94})
			}},
		tc{"RSA_X_509", &Mechanism{Type: ck.CKM_RSA_X_509}, []byte{1, 2, 3, 4, 5},
			func(sig []byte) error {
				got := new(big.Int).Exp(new(big.Int).SetBytes(sig), big.NewInt(int64(pub.E)), pub.N)
				if got.Cmp(big.NewInt(0x0102030405)) != 0 {
					return rsa.ErrVerification
				}
				return nil
			}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sig := sign(t, m, sh, c.mech, sk, c.input)
			if len(sig) != 128 {
				t.Fatalf("signature of %d bytes", len(sig))
			}
			if c.check != nil {
				if err := c.check(sig); err != nil {
					t.Fatalf("crypto/rsa rejects the signature: %v", err)
				}
			}
			wantRV(t, verify(m, sh, c.mech, pk, c.input, sig), ck.CKR_OK)
			bad := bytes.Clone(sig)
			bad[len(bad)-1] ^= 1
			wantRV(t, verify(m, sh, c.mech, pk, c.input, bad), ck.CKR_SIGNATURE_INVALID)
			wantRV(t, verify(m, sh, c.mech, pk, c.input, sig[1:]), ck.CKR_SIGNATURE_LEN_RANGE)
			// Verify ends the operation whatever its outcome.
			wantRV(t, m.Verify(sh, c.input, sig), ck.CKR_OPERATION_NOT_INITIALIZED)
		})
	}
}

// digestInfoPrefixForTest builds the DigestInfo prefix independently of
// rsapad (from RFC 8017 §9.2 note 1).
func digestInfoPrefixForTest(h crypto.Hash) []byte {
	oids := map[crypto.Hash][]byte{
		crypto.SHA1:   {0x2b, 0x0e, 0x03, 0x02, 0x1a},
		crypto.SHA224: {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04},
		crypto.SHA256: {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01},
		crypto.SHA384: {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02},
		crypto.SHA512: {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03},
	}
	oid := oids[h]
	algID := append([]byte{0x30, byte(len(oid) + 4), 0x06, byte(len(oid))}, oid...)
	algID = append(algID, 0x05, 0x00)
	inner := append(algID, 0x04, byte(h.Size()))
	return append([]byte{0x30, byte(len(inner) + h.Size())}, inner...)
}

func TestSignErrors(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	digest := hashOf(crypto.SHA256, []byte("x"))
	cases := []struct {
		name string
		mech *Mechanism
		key  uint64
		init ck.Error
		data []byte
		sign ck.Error
	}{
		{"unknown mechanism", &Mechanism{Type: 0x7777}, sk, ck.CKR_MECHANISM_INVALID, nil, 0},
		{"digest mechanism", &Mechanism{Type: ck.CKM_SHA256}, sk, ck.CKR_MECHANISM_INVALID, nil, 0},
		{"OAEP cannot sign", &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: &OAEPParams{Hash: ck.CKM_SHA_1, MGF: ck.CKG_MGF1_SHA1, Source: ck.CKZ_DATA_SPECIFIED}}, sk, ck.CKR_MECHANISM_INVALID, nil, 0},
		{"public key", &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, pk, ck.CKR_KEY_TYPE_INCONSISTENT, nil, 0},
		{"bad handle", &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, 999999, ck.CKR_KEY_HANDLE_INVALID, nil, 0},
		{"param on RSA_PKCS", &Mechanism{Type: ck.CKM_RSA_PKCS, Param: []byte{1}}, sk, ck.CKR_MECHANISM_PARAM_INVALID, nil, 0},
		{"PSS without params", &Mechanism{Type: ck.CKM_RSA_PKCS_PSS}, sk, ck.CKR_MECHANISM_PARAM_INVALID, nil, 0},
		{"PSS bad hash", pssMech(ck.CKM_RSA_PKCS_PSS, 0x1234, ck.CKG_MGF1_SHA256, 0), sk, ck.CKR_MECHANISM_PARAM_INVALID, nil, 0},
		{"PSS bad mgf", pssMech(ck.CKM_RSA_PKCS_PSS, ck.CKM_SHA256, 0x99, 0), sk, ck.CKR_MECHANISM_PARAM_INVALID, nil, 0},
		{"PSS hash mismatch", pssMech(ck.CKM_SHA256_RSA_PKCS_PSS, ck.CKM_SHA_1, ck.CKG_MGF1_SHA1, 0), sk, ck.CKR_MECHANISM_PARAM_INVALID, nil, 0},
		{"PSS salt too long", pssMech(ck.CKM_RSA_PKCS_PSS, ck.CKM_SHA256, ck.CKG_MGF1_SHA256, 95), sk, ck.CKR_MECHANISM_PARAM_INVALID, nil, 0},
		{"PSS digest length", pssMech(ck.CKM_RSA_PKCS_PSS, ck.CKM_SHA256, ck.CKG_MGF1_SHA256, 32), sk, 0, digest[:31], ck.CKR_DATA_LEN_RANGE},
		{"RSA_PKCS too long", &Mechanism{Type: ck.CKM_RSA_PKCS}, sk, 0, make([]byte, 118), ck.CKR_DATA_LEN_RANGE},
		{"X_509 too long", &Mechanism{Type: ck.CKM_RSA_X_509}, sk, 0, make([]byte, 129), ck.CKR_DATA_LEN_RANGE},
		{"X_509 above modulus", &Mechanism{Type: ck.CKM_RSA_X_509}, sk, 0, bytes.Repeat([]byte{0xff}, 128), ck.CKR_DATA_INVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := m.SignInit(sh, c.mech, c.key)
			wantRV(t, err, c.init)
			if err != nil {
				// A failed Init leaves no operation.
				_, _, err = m.Sign(sh, []byte("x"), Out{Cap: 512})
				wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
				return
			}
			_, _, err = m.Sign(sh, c.data, Out{Cap: 512})
			wantRV(t, err, c.sign)
			// An error ends the operation.
			_, _, err = m.Sign(sh, c.data, Out{Cap: 512})
			wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
		})
	}
	// Operation already active; SignUpdate on single-part mechanisms.
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sk))
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sk), ck.CKR_OPERATION_ACTIVE)
	must(t, m.SignUpdate(sh, []byte("a")))
	_, _, err := m.Sign(sh, []byte("b"), Out{Cap: 512})
	wantRV(t, err, ck.CKR_OPERATION_ACTIVE)
	// C_Sign always ends the operation unless it reports a length.
	_, _, err = m.SignFinal(sh, Out{Cap: 512})
	wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk))
	wantRV(t, m.SignUpdate(sh, []byte("a")), ck.CKR_FUNCTION_NOT_SUPPORTED)
	wantRV(t, m.SignUpdate(sh, []byte("a")), ck.CKR_OPERATION_NOT_INITIALIZED)
}

func TestKeyUsagePolicy(t *testing.T) {
	m, _, sh := readyToken(t)
	_, noSign := genKey(t, m, sh, 1024, false, aBool(ck.CKA_SIGN, false))
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, noSign), ck.CKR_KEY_FUNCTION_NOT_PERMITTED)
	allowed := append(ck.ULong(ck.CKM_SHA256_RSA_PKCS), ck.ULong(ck.CKM_RSA_PKCS_PSS)...)
	_, only := genKey(t, m, sh, 1024, false, aBytes(ck.CKA_ALLOWED_MECHANISMS, allowed))
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA1_RSA_PKCS}, only), ck.CKR_MECHANISM_INVALID)
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, only))
	_, _, err := m.Sign(sh, []byte("x"), Out{Cap: 512})
	must(t, err)
	// CKA_ALWAYS_AUTHENTICATE: a context-specific login after each Init.
	_, aa := genKey(t, m, sh, 1024, false, aBool(ck.CKA_ALWAYS_AUTHENTICATE, true))
	wantRV(t, m.Login(sh, ck.CKU_CONTEXT_SPECIFIC, []byte(testUserPIN)), ck.CKR_OPERATION_NOT_INITIALIZED)
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, aa))
	_, _, err = m.Sign(sh, []byte("x"), Out{Cap: 512})
	wantRV(t, err, ck.CKR_USER_NOT_LOGGED_IN)
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, aa))
	wantRV(t, m.Login(sh, ck.CKU_CONTEXT_SPECIFIC, []byte("wrong-pin")), ck.CKR_PIN_INCORRECT)
	must(t, m.Login(sh, ck.CKU_CONTEXT_SPECIFIC, []byte(testUserPIN)))
	_, _, err = m.Sign(sh, []byte("x"), Out{Cap: 512})
	must(t, err)
	must(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, aa))
	_, _, err = m.Sign(sh, []byte("x"), Out{Cap: 512})
	wantRV(t, err, ck.CKR_USER_NOT_LOGGED_IN)
	// Logout in the middle of an operation ends the key's use.
	_, sk := genKey(t, m, sh, 1024, true)
	sh2 := openRW(t, m, m.SlotList(true)[0])
	must(t, m.SignInit(sh2, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sk))
	must(t, m.Logout(sh))
	_, _, err = m.Sign(sh2, []byte("x"), Out{Cap: 512})
	wantRV(t, err, ck.CKR_USER_NOT_LOGGED_IN)
	// The private key is invisible now.
	wantRV(t, m.SignInit(sh2, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sk), ck.CKR_KEY_HANDLE_INVALID)
}

func TestTwoCallConvention(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	digest := hashOf(crypto.SHA256, []byte("two calls"))
	mc := pssMech(ck.CKM_RSA_PKCS_PSS, ck.CKM_SHA256, ck.CKG_MGF1_SHA256, 32)
	must(t, m.SignInit(sh, mc, sk))
	data, need, err := m.Sign(sh, digest, Out{Query: true})
	must(t, err)
	if data != nil || need != 128 {
		t.Fatalf("query: %v, %d", data, need)
	}
	_, need, err = m.Sign(sh, digest, Out{Cap: 10})
	wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
	if need != 128 {
		t.Fatalf("need %d", need)
	}
	sig, need, err := m.Sign(sh, digest, Out{Cap: 128})
	must(t, err)
	if need != 128 || len(sig) != 128 {
		t.Fatalf("sig %d need %d", len(sig), need)
	}
	wantRV(t, verify(m, sh, mc, pk, digest, sig), ck.CKR_OK)
	_, _, err = m.Sign(sh, digest, Out{Cap: 128})
	wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)

	// Decrypt: the exact plaintext length after one private operation.
	pub := publicKey(t, m, sh, pk)
	msg := []byte("short secret")
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, pub, msg)
	must(t, err)
	must(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk))
	_, need, err = m.Decrypt(sh, ct, Out{Query: true})
	must(t, err)
	if need != len(msg) {
		t.Fatalf("decrypt need %d", need)
	}
	_, _, err = m.Decrypt(sh, ct, Out{Cap: need - 1})
	wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
	pt, _, err := m.Decrypt(sh, ct, Out{Cap: need})
	must(t, err)
	if !bytes.Equal(pt, msg) {
		t.Fatalf("decrypted %q", pt)
	}
}

func TestMultiPartEqualsSinglePart(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	data := bytes.Repeat([]byte("0123456789"), 50)
	for _, h := range hashMechs {
		t.Run(h.name, func(t *testing.T) {
			mc := &Mechanism{Type: h.pkcs}
			single := sign(t, m, sh, mc, sk, data)
			must(t, m.SignInit(sh, mc, sk))
			for _, part := range [][]byte{data[:7], data[7:300], nil, data[300:]} {
				must(t, m.SignUpdate(sh, part))
			}
			multi, _, err := m.SignFinal(sh, Out{Cap: 512})
			must(t, err)
			if !bytes.Equal(single, multi) {
				t.Fatal("multi-part signature differs")
			}
			must(t, m.VerifyInit(sh, mc, pk))
			must(t, m.VerifyUpdate(sh, data[:100]))
			must(t, m.VerifyUpdate(sh, data[100:]))
			must(t, m.VerifyFinal(sh, single))
			// Digest, single- and multi-part, against the standard library.
			dm := &Mechanism{Type: h.hashMech}
			must(t, m.DigestInit(sh, dm))
			d1, _, err := m.Digest(sh, data, Out{Cap: 64})
			must(t, err)
			must(t, m.DigestInit(sh, dm))
			must(t, m.DigestUpdate(sh, data[:33]))
			must(t, m.DigestUpdate(sh, data[33:]))
			d2, _, err := m.DigestFinal(sh, Out{Cap: 64})
			must(t, err)
			if !bytes.Equal(d1, d2) || !bytes.Equal(d1, hashOf(h.hash, data)) {
				t.Fatal("digest mismatch")
			}
		})
	}
	must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
	wantRV(t, m.DigestKey(sh, sk), ck.CKR_KEY_INDIGESTIBLE)
	wantRV(t, m.DigestUpdate(sh, nil), ck.CKR_OPERATION_NOT_INITIALIZED)
}

func TestDecrypt(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, true)
	pub := publicKey(t, m, sh, pk)
	msg := []byte("attack at dawn")
	label := []byte("the label")
	oaep := func(h, mgf uint64, label []byte) *Mechanism {
		return &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: &OAEPParams{Hash: h, MGF: mgf, Source: ck.CKZ_DATA_SPECIFIED, SourceData: label}}
	}
	must256 := func(label []byte) []byte {
		ct, err := rsa.EncryptOAEP(sha256.New(), rand.Reader, pub, msg, label)
		must(t, err)
		return ct
	}
	ct1, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, msg, nil)
	must(t, err)
	pkcs, err := rsa.EncryptPKCS1v15(rand.Reader, pub, msg)
	must(t, err)
	cases := []struct {
		name string
		mech *Mechanism
		ct   []byte
		want ck.Error
	}{
		{"OAEP SHA256 label", oaep(ck.CKM_SHA256, ck.CKG_MGF1_SHA256, label), must256(label), 0},
		{"OAEP SHA1 no label", oaep(ck.CKM_SHA_1, ck.CKG_MGF1_SHA1, nil), ct1, 0},
		{"OAEP wrong label", oaep(ck.CKM_SHA256, ck.CKG_MGF1_SHA256, []byte("other")), must256(label), ck.CKR_ENCRYPTED_DATA_INVALID},
		{"OAEP wrong hash", oaep(ck.CKM_SHA384, ck.CKG_MGF1_SHA384, label), must256(label), ck.CKR_ENCRYPTED_DATA_INVALID},
		{"PKCS#1 v1.5", &Mechanism{Type: ck.CKM_RSA_PKCS}, pkcs, 0},
		{"short ciphertext", &Mechanism{Type: ck.CKM_RSA_PKCS}, pkcs[1:], ck.CKR_ENCRYPTED_DATA_LEN_RANGE},
		{"OAEP of PKCS#1", oaep(ck.CKM_SHA256, ck.CKG_MGF1_SHA256, nil), pkcs, ck.CKR_ENCRYPTED_DATA_INVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must(t, m.DecryptInit(sh, c.mech, sk))
			pt, _, err := m.Decrypt(sh, c.ct, Out{Cap: 256})
			wantRV(t, err, c.want)
			if c.want == 0 && !bytes.Equal(pt, msg) {
				t.Fatalf("plaintext %q", pt)
			}
		})
	}
	// Raw: X_509 round trip through the module's public operation.
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, pk))
	ct, _, err := m.Encrypt(sh, msg, Out{Cap: 256})
	must(t, err)
	must(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, sk))
	raw, _, err := m.Decrypt(sh, ct, Out{Cap: 256})
	must(t, err)
	if !bytes.Equal(bytes.TrimLeft(raw, "\x00"), msg) {
		t.Fatal("raw round trip")
	}
	// Module OAEP encryption with a label, module decryption.
	// SHA-512 OAEP needs k ≥ 2·64+2 = 130 bytes: too much for 1024 bits.
	wantRV(t, m.EncryptInit(sh, oaep(ck.CKM_SHA512, ck.CKG_MGF1_SHA1, label), pk), ck.CKR_KEY_SIZE_RANGE)
	mc := oaep(ck.CKM_SHA384, ck.CKG_MGF1_SHA1, label)
	must(t, m.EncryptInit(sh, mc, pk))
	ct, _, err = m.Encrypt(sh, msg, Out{Cap: 256})
	must(t, err)
	must(t, m.DecryptInit(sh, mc, sk))
	pt, _, err := m.Decrypt(sh, ct, Out{Cap: 256})
	must(t, err)
	if !bytes.Equal(pt, msg) {
		t.Fatal("OAEP round trip")
	}
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, pk))
	_, _, err = m.Encrypt(sh, make([]byte, 118), Out{Cap: 256})
	wantRV(t, err, ck.CKR_DATA_LEN_RANGE)
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, pk))
	_, _, err = m.EncryptUpdate(sh, msg, Out{Cap: 256})
	wantRV(t, err, ck.CKR_FUNCTION_NOT_SUPPORTED)
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk), ck.CKR_KEY_TYPE_INCONSISTENT)
}

func TestParallelSigning(t *testing.T) {
	m, slot, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, true)
	pub := publicKey(t, m, sh, pk)
	const sessions, rounds = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, sessions*rounds)
	for i := 0; i < sessions; i++ {
		s, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION)
		must(t, err)
		wg.Add(1)
		go func(s uint64, i int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				data := []byte{byte(i), byte(r)}
				if err := m.SignInit(s, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sk); err != nil {
					errs <- err
					return
				}
				sig, _, err := m.Sign(s, data, Out{Cap: 256})
				if err != nil {
					errs <- err
					return
				}
				if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, hashOf(crypto.SHA256, data), sig); err != nil {
					errs <- err
				}
			}
		}(s, i)
	}
	// Meanwhile: searches and token info on the main session.
	for i := 0; i < 5; i++ {
		find(t, m, sh)
		if _, err := m.TokenInfo(slot); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestRandom(t *testing.T) {
	m, slot := newModule(t)
	sh := openRO(t, m, slot)
	b, err := m.GenerateRandom(sh, 32)
	must(t, err)
	if len(b) != 32 || bytes.Equal(b, make([]byte, 32)) {
		t.Fatal("random bytes")
	}
	must(t, m.SeedRandom(sh, []byte("seed")))
	_, err = m.GenerateRandom(sh+1000, 1)
	wantRV(t, err, ck.CKR_SESSION_HANDLE_INVALID)
}
