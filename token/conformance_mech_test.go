package token

// Conformance of the mechanisms (PKCS#11 3.0 §5.8–5.14 and the RSA
// mechanisms of PKCS#11 3.0 Current Mechanisms §2.1): truthful
// C_GetMechanismInfo, key generation parameters, PSS and OAEP parameter
// combinations, raw RSA ranges, digests, randomness, the two-call
// convention for every output, and "an error ends the operation".

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

func TestConformanceMechanismInfo(t *testing.T) {
	m, slot, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	oaep := &OAEPParams{Hash: ck.CKM_SHA_1, MGF: ck.CKG_MGF1_SHA1, Source: ck.CKZ_DATA_SPECIFIED}
	pss := &PSSParams{Hash: ck.CKM_SHA256, MGF: ck.CKG_MGF1_SHA256, SaltLen: 32}
	sign := uint64(ck.CKF_SIGN | ck.CKF_VERIFY)
	all := sign | ck.CKF_ENCRYPT | ck.CKF_DECRYPT
	wrap := uint64(ck.CKF_WRAP | ck.CKF_UNWRAP)
	cases := []struct {
		mech     *Mechanism
		flags    uint64
		min, max uint64
	}{
		{&Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN}, ck.CKF_GENERATE_KEY_PAIR, 1024, 8192},
		{&Mechanism{Type: ck.CKM_RSA_PKCS}, all | wrap, 1024, 8192},
		{&Mechanism{Type: ck.CKM_RSA_X_509}, all, 1024, 8192},
		{&Mechanism{Type: ck.CKM_RSA_PKCS_PSS, PSS: pss}, sign, 1024, 8192},
		{&Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: oaep}, ck.CKF_ENCRYPT | ck.CKF_DECRYPT | wrap, 1024, 8192},
		{&Mechanism{Type: ck.CKM_SHA1_RSA_PKCS}, sign, 1024, 8192},
		{&Mechanism{Type: ck.CKM_SHA224_RSA_PKCS}, sign, 1024, 8192},
		{&Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sign, 1024, 8192},
		{&Mechanism{Type: ck.CKM_SHA384_RSA_PKCS}, sign, 1024, 8192},
		{&Mechanism{Type: ck.CKM_SHA512_RSA_PKCS}, sign, 1024, 8192},
		{&Mechanism{Type: ck.CKM_SHA256_RSA_PKCS_PSS, PSS: pss}, sign, 1024, 8192},
		{&Mechanism{Type: ck.CKM_SHA_1}, ck.CKF_DIGEST, 0, 0},
		{&Mechanism{Type: ck.CKM_SHA224}, ck.CKF_DIGEST, 0, 0},
		{&Mechanism{Type: ck.CKM_SHA256}, ck.CKF_DIGEST, 0, 0},
		{&Mechanism{Type: ck.CKM_SHA384}, ck.CKF_DIGEST, 0, 0},
		{&Mechanism{Type: ck.CKM_SHA512}, ck.CKF_DIGEST, 0, 0},
	}
	list, err := m.MechanismList(slot)
	must(t, err)
	for _, c := range cases {
		t.Run(ck.Name("CKM_", c.mech.Type), func(t *testing.T) {
			listed := false
			for _, l := range list {
				listed = listed || l == c.mech.Type
			}
			info, err := m.MechanismInfo(slot, c.mech.Type)
			must(t, err)
			if !listed || info.Flags&^mech.MessageMask != c.flags || info.MinKeySize != c.min || info.MaxKeySize != c.max {
				t.Fatalf("listed %v, info %+v, want flags %#x (and the message flags) sizes %d..%d", listed, info, c.flags, c.min, c.max)
			}
			// Each flag is true: the Init of that kind works, and the Init
			// of a kind without the flag is CKR_MECHANISM_INVALID.
			kinds := []struct {
				flag uint64
				init func() error
				end  func()
			}{
				{ck.CKF_SIGN, func() error { return m.SignInit(sh, c.mech, sk) }, func() { must(t, m.SessionCancel(sh, ck.CKF_SIGN)) }},
				{ck.CKF_VERIFY, func() error { return m.VerifyInit(sh, c.mech, pk) }, func() { must(t, m.SessionCancel(sh, ck.CKF_VERIFY)) }},
				{ck.CKF_ENCRYPT, func() error { return m.EncryptInit(sh, c.mech, pk) }, func() { must(t, m.SessionCancel(sh, ck.CKF_ENCRYPT)) }},
				{ck.CKF_DECRYPT, func() error { return m.DecryptInit(sh, c.mech, sk) }, func() { must(t, m.SessionCancel(sh, ck.CKF_DECRYPT)) }},
				{ck.CKF_DIGEST, func() error { return m.DigestInit(sh, c.mech) }, func() { must(t, m.SessionCancel(sh, ck.CKF_DIGEST)) }},
			}
			for _, k := range kinds {
				err := k.init()
				if info.Flags&k.flag != 0 {
					must(t, err)
					k.end()
				} else {
					wantRV(t, err, ck.CKR_MECHANISM_INVALID)
				}
			}
		})
	}
	_, err = m.MechanismInfo(slot, 0x7FFF1234)
	wantRV(t, err, ck.CKR_MECHANISM_INVALID)
	_, err = m.MechanismInfo(slot+1, ck.CKM_RSA_PKCS)
	wantRV(t, err, ck.CKR_SLOT_ID_INVALID)
}

func TestConformanceRSAKeyGenParams(t *testing.T) {
	m, _, sh := readyToken(t)
	gen := func(pub ...Attribute) (uint64, uint64, error) {
		return m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN}, pub, []Attribute{aBool(ck.CKA_SIGN, true)})
	}
	cases := []struct {
		name string
		pub  []Attribute
		rv   ck.Error
		e    int64
	}{
		{"default exponent", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024)}, 0, 65537},
		{"e = 3", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{3})}, 0, 3},
		{"e = 17", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{17})}, 0, 17},
		{"e = 0x00010001", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{0, 1, 0, 1})}, 0, 65537},
		{"e = 0x000003", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{0, 0, 3})}, 0, 3},
		{"odd bit count", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1025)}, 0, 65537},
		{"even exponent", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 0})}, ck.CKR_ATTRIBUTE_VALUE_INVALID, 0},
		{"e = 1", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{1})}, ck.CKR_ATTRIBUTE_VALUE_INVALID, 0},
		{"no modulus bits", nil, ck.CKR_TEMPLATE_INCOMPLETE, 0},
		{"1023 bits", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1023)}, ck.CKR_KEY_SIZE_RANGE, 0},
		{"8193 bits", []Attribute{aULong(ck.CKA_MODULUS_BITS, 8193)}, ck.CKR_KEY_SIZE_RANGE, 0},
		{"malformed bits", []Attribute{{Type: ck.CKA_MODULUS_BITS, Value: []byte{4}}}, ck.CKR_ATTRIBUTE_VALUE_INVALID, 0},
		{"modulus given", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_MODULUS, []byte{1})}, ck.CKR_ATTRIBUTE_READ_ONLY, 0},
		{"wrong class", []Attribute{aULong(ck.CKA_MODULUS_BITS, 1024), aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY)}, ck.CKR_TEMPLATE_INCONSISTENT, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pk, sk, err := gen(c.pub...)
			wantRV(t, err, c.rv)
			if err != nil {
				return
			}
			pub := publicKey(t, m, sh, pk)
			bits, _ := ck.ParseULong(c.pub[0].Value)
			if int64(pub.E) != c.e || uint64(pub.N.BitLen()) != bits {
				t.Fatalf("e = %d, %d bits; want e = %d, %d bits", pub.E, pub.N.BitLen(), c.e, bits)
			}
			// The key works and verifies outside the token.
			sig := sign(t, m, sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sk, []byte("keygen"))
			must(t, rsa.VerifyPKCS1v15(pub, crypto.SHA256, hashOf(crypto.SHA256, []byte("keygen")), sig))
		})
	}
}

// TestConformancePSSCombinations: every hash with every MGF1, salts from 0
// to the largest the key takes; one byte more is CKR_MECHANISM_PARAM_INVALID.
func TestConformancePSSCombinations(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	pub := publicKey(t, m, sh, pk)
	emLen := (pub.N.BitLen() - 1 + 7) / 8
	for _, h := range hashMechs {
		for _, g := range hashMechs {
			maxSalt := emLen - h.hash.Size() - 2
			var salts []int
			for _, s := range []int{0, 1, h.hash.Size(), maxSalt} {
				if s <= maxSalt {
					salts = append(salts, s)
				}
			}
			if h.hash == crypto.SHA256 && g.hash == crypto.SHA256 {
				salts = nil
				for s := 0; s <= maxSalt; s++ {
					salts = append(salts, s)
				}
			}
			t.Run(h.name+"/MGF1-"+g.name, func(t *testing.T) {
				digest := hashOf(h.hash, []byte("pss "+h.name+g.name))
				for _, salt := range salts {
					for _, typ := range []uint64{ck.CKM_RSA_PKCS_PSS, h.pss} {
						mc := pssMech(typ, h.hashMech, g.mgf, uint64(salt))
						in := digest
						if typ != ck.CKM_RSA_PKCS_PSS {
							in = []byte("pss " + h.name + g.name)
						}
						sig := sign(t, m, sh, mc, sk, in)
						if err := verify(m, sh, mc, pk, in, sig); err != nil {
							t.Fatalf("%s salt %d: %v", ck.Name("CKM_", typ), salt, err)
						}
						if h.hash == g.hash {
							must(t, rsa.VerifyPSS(pub, h.hash, digest, sig, &rsa.PSSOptions{SaltLength: salt, Hash: h.hash}))
						}
						// A different salt length does not verify.
						wrong := pssMech(typ, h.hashMech, g.mgf, uint64(salt+1)%uint64(maxSalt+1))
						if salt+1 <= maxSalt {
							wantRV(t, verify(m, sh, wrong, pk, in, sig), ck.CKR_SIGNATURE_INVALID)
						}
					}
				}
				wantRV(t, m.SignInit(sh, pssMech(ck.CKM_RSA_PKCS_PSS, h.hashMech, g.mgf, uint64(maxSalt+1)), sk), ck.CKR_MECHANISM_PARAM_INVALID)
				wantRV(t, m.VerifyInit(sh, pssMech(ck.CKM_RSA_PKCS_PSS, h.hashMech, g.mgf, uint64(maxSalt+1)), pk), ck.CKR_MECHANISM_PARAM_INVALID)
			})
		}
	}
}

// TestConformanceOAEP: every hash with every MGF1 and labels, decrypted on
// the token after encryption outside it; parameter and ciphertext errors.
func TestConformanceOAEP(t *testing.T) {
	m, _, sh := readyToken(t)
	k := testKey(t, 2048)
	sk := importRSA(t, m, sh, k)
	pk, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		aBytes(ck.CKA_MODULUS, k.N.Bytes()), aBytes(ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(k.E)).Bytes())})
	must(t, err)
	oaep := func(h, g uint64, label []byte) *Mechanism {
		return &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: &OAEPParams{Hash: h, MGF: g, Source: ck.CKZ_DATA_SPECIFIED, SourceData: label}}
	}
	labels := [][]byte{nil, []byte("L"), bytes.Repeat([]byte("label"), 40)}
	for _, h := range hashMechs {
		for _, g := range hashMechs {
			t.Run(h.name+"/MGF1-"+g.name, func(t *testing.T) {
				ls := labels
				if h.hash != g.hash {
					ls = labels[1:2] // labels are hash-independent: all of them on the diagonal
				}
				for _, label := range ls {
					msg := []byte("oaep " + h.name + g.name)
					ct, err := rsa.EncryptOAEPWithOptions(rand.Reader, &k.PublicKey, msg, &rsa.OAEPOptions{Hash: h.hash, MGFHash: g.hash, Label: label})
					must(t, err)
					must(t, m.DecryptInit(sh, oaep(h.hashMech, g.mgf, label), sk))
					pt, _, err := m.Decrypt(sh, ct, Out{Cap: 256})
					must(t, err)
					if !bytes.Equal(pt, msg) {
						t.Fatalf("decrypted %q", pt)
					}
					// The token's own encryption round-trips outside.
					must(t, m.EncryptInit(sh, oaep(h.hashMech, g.mgf, label), pk))
					ct2, _, err := m.Encrypt(sh, msg, Out{Cap: 256})
					must(t, err)
					pt2, err := k.Decrypt(nil, ct2, &rsa.OAEPOptions{Hash: h.hash, MGFHash: g.hash, Label: label})
					must(t, err)
					if !bytes.Equal(pt2, msg) {
						t.Fatal("token OAEP encryption")
					}
					// The wrong label is garbage.
					must(t, m.DecryptInit(sh, oaep(h.hashMech, g.mgf, append(label, 'x')), sk))
					_, _, err = m.Decrypt(sh, ct, Out{Cap: 256})
					wantRV(t, err, ck.CKR_ENCRYPTED_DATA_INVALID)
				}
				// Longest message: k − 2·hLen − 2.
				max := 256 - 2*h.hash.Size() - 2
				must(t, m.EncryptInit(sh, oaep(h.hashMech, g.mgf, nil), pk))
				_, _, err := m.Encrypt(sh, make([]byte, max), Out{Cap: 256})
				must(t, err)
				must(t, m.EncryptInit(sh, oaep(h.hashMech, g.mgf, nil), pk))
				_, _, err = m.Encrypt(sh, make([]byte, max+1), Out{Cap: 256})
				wantRV(t, err, ck.CKR_DATA_LEN_RANGE)
			})
		}
	}
	params := []struct {
		name string
		p    *OAEPParams
	}{
		{"unknown source", &OAEPParams{Hash: ck.CKM_SHA_1, MGF: ck.CKG_MGF1_SHA1, Source: 2}},
		{"source 0 with data", &OAEPParams{Hash: ck.CKM_SHA_1, MGF: ck.CKG_MGF1_SHA1, Source: 0, SourceData: []byte("x")}},
		{"unknown hash", &OAEPParams{Hash: 0x7777, MGF: ck.CKG_MGF1_SHA1, Source: ck.CKZ_DATA_SPECIFIED}},
		{"unknown MGF", &OAEPParams{Hash: ck.CKM_SHA_1, MGF: 0x77, Source: ck.CKZ_DATA_SPECIFIED}},
	}
	for _, p := range params {
		t.Run(p.name, func(t *testing.T) {
			wantRV(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: p.p}, sk), ck.CKR_MECHANISM_PARAM_INVALID)
			wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: p.p}, pk), ck.CKR_MECHANISM_PARAM_INVALID)
		})
	}
	wantRV(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP}, sk), ck.CKR_MECHANISM_PARAM_INVALID)
	// Source 0 without data: the empty label (accepted from clients that
	// leave the source unset).
	must(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: &OAEPParams{Hash: ck.CKM_SHA_1, MGF: ck.CKG_MGF1_SHA1}}, sk))
	must(t, m.SessionCancel(sh, ck.CKF_DECRYPT))
}

// TestConformanceRSARanges: input lengths and values against the modulus,
// for every raw and padded mechanism, and the end of the operation after
// each error.
func TestConformanceRSARanges(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	pub := publicKey(t, m, sh, pk)
	kb := 128
	nBytes := pub.N.Bytes()
	aboveN := new(big.Int).Add(pub.N, big.NewInt(1)).Bytes()
	if len(aboveN) != kb {
		t.Fatal("test modulus")
	}
	garbage := make([]byte, kb)
	copy(garbage[1:], bytes.Repeat([]byte{0x5a}, kb-1)) // below n, not a padded block
	oaep := &Mechanism{Type: ck.CKM_RSA_PKCS_OAEP, OAEP: &OAEPParams{Hash: ck.CKM_SHA_1, MGF: ck.CKG_MGF1_SHA1, Source: ck.CKZ_DATA_SPECIFIED}}
	cases := []struct {
		name string
		init func() error
		in   []byte
		do   func(in []byte) func(Out) ([]byte, int, error)
		rv   ck.Error
	}{
		{"X_509 encrypt, short input", func() error { return m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, pk) }, []byte{2}, encryptCall(m, sh), 0},
		{"X_509 encrypt, k+1 bytes", func() error { return m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, pk) }, make([]byte, kb+1), encryptCall(m, sh), ck.CKR_DATA_LEN_RANGE},
		{"X_509 encrypt, = n", func() error { return m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, pk) }, nBytes, encryptCall(m, sh), ck.CKR_DATA_INVALID},
		{"X_509 encrypt, > n", func() error { return m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, pk) }, aboveN, encryptCall(m, sh), ck.CKR_DATA_INVALID},
		{"X_509 sign, = n", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, sk) }, nBytes, signCall(m, sh), ck.CKR_DATA_INVALID},
		{"X_509 sign, k+1 bytes", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, sk) }, make([]byte, kb+1), signCall(m, sh), ck.CKR_DATA_LEN_RANGE},
		{"X_509 decrypt, = n", func() error { return m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, sk) }, nBytes, decryptCall(m, sh), ck.CKR_ENCRYPTED_DATA_INVALID},
		{"X_509 decrypt, k−1 bytes", func() error { return m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, sk) }, make([]byte, kb-1), decryptCall(m, sh), ck.CKR_ENCRYPTED_DATA_LEN_RANGE},
		{"PKCS encrypt, k−11 bytes", func() error { return m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, pk) }, make([]byte, kb-11), encryptCall(m, sh), 0},
		{"PKCS encrypt, k−10 bytes", func() error { return m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, pk) }, make([]byte, kb-10), encryptCall(m, sh), ck.CKR_DATA_LEN_RANGE},
		{"PKCS sign, k−11 bytes", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk) }, make([]byte, kb-11), signCall(m, sh), 0},
		{"PKCS sign, k−10 bytes", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk) }, make([]byte, kb-10), signCall(m, sh), ck.CKR_DATA_LEN_RANGE},
		// Implicit rejection: a bad padding is CKR_OK with a synthetic message.
		{"PKCS decrypt, garbage", func() error { return m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk) }, garbage, decryptCall(m, sh), 0},
		{"PKCS decrypt, k+1 bytes", func() error { return m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk) }, make([]byte, kb+1), decryptCall(m, sh), ck.CKR_ENCRYPTED_DATA_LEN_RANGE},
		{"OAEP decrypt, garbage", func() error { return m.DecryptInit(sh, oaep, sk) }, garbage, decryptCall(m, sh), ck.CKR_ENCRYPTED_DATA_INVALID},
		{"OAEP decrypt, > n", func() error { return m.DecryptInit(sh, oaep, sk) }, aboveN, decryptCall(m, sh), ck.CKR_ENCRYPTED_DATA_INVALID},
		{"OAEP decrypt, empty", func() error { return m.DecryptInit(sh, oaep, sk) }, nil, decryptCall(m, sh), ck.CKR_ENCRYPTED_DATA_LEN_RANGE},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must(t, c.init())
			out, _, err := c.do(c.in)(Out{Cap: 512})
			wantRV(t, err, c.rv)
			if err == nil && len(out) != kb && c.name != "PKCS decrypt, garbage" {
				t.Fatalf("output of %d bytes", len(out))
			}
			// Success and error alike end the operation.
			_, _, err = c.do(c.in)(Out{Cap: 512})
			wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
		})
	}
	// Raw round trip keeps leading zeros as a full-length block.
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, pk))
	ct, _, err := m.Encrypt(sh, []byte{0, 0, 7}, Out{Cap: kb})
	must(t, err)
	must(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_X_509}, sk))
	pt, _, err := m.Decrypt(sh, ct, Out{Cap: kb})
	must(t, err)
	if len(pt) != kb || new(big.Int).SetBytes(pt).Int64() != 7 {
		t.Fatalf("raw decrypt %x", pt)
	}
}

func encryptCall(m *Module, sh uint64) func([]byte) func(Out) ([]byte, int, error) {
	return func(in []byte) func(Out) ([]byte, int, error) {
		return func(o Out) ([]byte, int, error) { return m.Encrypt(sh, in, o) }
	}
}

func decryptCall(m *Module, sh uint64) func([]byte) func(Out) ([]byte, int, error) {
	return func(in []byte) func(Out) ([]byte, int, error) {
		return func(o Out) ([]byte, int, error) { return m.Decrypt(sh, in, o) }
	}
}

func signCall(m *Module, sh uint64) func([]byte) func(Out) ([]byte, int, error) {
	return func(in []byte) func(Out) ([]byte, int, error) {
		return func(o Out) ([]byte, int, error) { return m.Sign(sh, in, o) }
	}
}

// TestConformanceTwoCallEveryOutput: for every output (C_Sign, C_SignFinal,
// C_Encrypt, C_Decrypt, C_Digest, C_DigestFinal) a NULL buffer gives the
// length, a short one CKR_BUFFER_TOO_SMALL, both keep the operation, and the
// full call returns the same bytes and ends it.
func TestConformanceTwoCallEveryOutput(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	pub := publicKey(t, m, sh, pk)
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, pub, []byte("two-call secret"))
	must(t, err)
	cases := []struct {
		name  string
		init  func() error
		final func(Out) ([]byte, int, error)
		check func(out []byte) error
	}{
		{"C_Sign", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, sk) },
			func(o Out) ([]byte, int, error) { return m.Sign(sh, []byte("data"), o) },
			func(out []byte) error {
				return rsa.VerifyPKCS1v15(pub, crypto.SHA256, hashOf(crypto.SHA256, []byte("data")), out)
			}},
		{"C_SignFinal", func() error {
			if err := m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS_PSS, PSS: &PSSParams{Hash: ck.CKM_SHA256, MGF: ck.CKG_MGF1_SHA256, SaltLen: 32}}, sk); err != nil {
				return err
			}
			return m.SignUpdate(sh, []byte("data"))
		}, func(o Out) ([]byte, int, error) { return m.SignFinal(sh, o) },
			func(out []byte) error {
				return rsa.VerifyPSS(pub, crypto.SHA256, hashOf(crypto.SHA256, []byte("data")), out, &rsa.PSSOptions{SaltLength: 32})
			}},
		{"C_Encrypt", func() error { return m.EncryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, pk) },
			func(o Out) ([]byte, int, error) { return m.Encrypt(sh, []byte("plain"), o) },
			func(out []byte) error {
				must(t, m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk))
				pt, _, err := m.Decrypt(sh, out, Out{Cap: 128})
				if err == nil && string(pt) != "plain" {
					t.Fatalf("round trip %q", pt)
				}
				return err
			}},
		{"C_Decrypt", func() error { return m.DecryptInit(sh, &Mechanism{Type: ck.CKM_RSA_PKCS}, sk) },
			func(o Out) ([]byte, int, error) { return m.Decrypt(sh, ct, o) },
			func(out []byte) error {
				if string(out) != "two-call secret" {
					t.Fatalf("decrypted %q", out)
				}
				return nil
			}},
		{"C_Digest", func() error { return m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA384}) },
			func(o Out) ([]byte, int, error) { return m.Digest(sh, []byte("data"), o) },
			func(out []byte) error {
				if !bytes.Equal(out, hashOf(crypto.SHA384, []byte("data"))) {
					t.Fatal("digest")
				}
				return nil
			}},
		{"C_DigestFinal", func() error {
			if err := m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA_1}); err != nil {
				return err
			}
			return m.DigestUpdate(sh, []byte("data"))
		}, func(o Out) ([]byte, int, error) { return m.DigestFinal(sh, o) },
			func(out []byte) error {
				if !bytes.Equal(out, hashOf(crypto.SHA1, []byte("data"))) {
					t.Fatal("digest")
				}
				return nil
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must(t, c.init())
			data, need, err := c.final(Out{Query: true})
			must(t, err)
			if data != nil || need <= 0 {
				t.Fatalf("query: %d bytes, need %d", len(data), need)
			}
			for _, short := range []int{0, need - 1} {
				_, n2, err := c.final(Out{Cap: short})
				wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
				if n2 != need {
					t.Fatalf("need %d then %d", need, n2)
				}
			}
			out, n3, err := c.final(Out{Cap: need + 100})
			must(t, err)
			if n3 != need || len(out) != need {
				t.Fatalf("final %d bytes, need %d", len(out), need)
			}
			must(t, c.check(out))
			_, _, err = c.final(Out{Cap: need})
			wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
		})
	}
}

// TestConformanceSinglePartAfterUpdate: C_Sign, C_Verify and C_Digest after
// an Update are refused and, like every error but a length report, end
// the operation (PKCS#11 3.0 §5.10–5.12).
func TestConformanceSinglePartAfterUpdate(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	mc := &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}
	cases := []struct {
		name   string
		start  func() error
		single func() error
		final  func() error
	}{
		{"sign", func() error {
			must(t, m.SignInit(sh, mc, sk))
			return m.SignUpdate(sh, []byte("a"))
		}, func() error { _, _, err := m.Sign(sh, []byte("b"), Out{Cap: 512}); return err },
			func() error { _, _, err := m.SignFinal(sh, Out{Cap: 512}); return err }},
		{"verify", func() error {
			must(t, m.VerifyInit(sh, mc, pk))
			return m.VerifyUpdate(sh, []byte("a"))
		}, func() error { return m.Verify(sh, []byte("b"), make([]byte, 128)) },
			func() error { return m.VerifyFinal(sh, make([]byte, 128)) }},
		{"digest", func() error {
			must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
			return m.DigestUpdate(sh, []byte("a"))
		}, func() error { _, _, err := m.Digest(sh, []byte("b"), Out{Cap: 64}); return err },
			func() error { _, _, err := m.DigestFinal(sh, Out{Cap: 64}); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must(t, c.start())
			wantRV(t, c.single(), ck.CKR_OPERATION_ACTIVE)
			wantRV(t, c.final(), ck.CKR_OPERATION_NOT_INITIALIZED)
		})
	}
}

func TestConformanceDigest(t *testing.T) {
	m, _, sh := readyToken(t)
	pk, sk := genKey(t, m, sh, 1024, false)
	data := bytes.Repeat([]byte("digest me "), 50)
	for _, h := range hashMechs {
		t.Run(h.name, func(t *testing.T) {
			want := hashOf(h.hash, data)
			must(t, m.DigestInit(sh, &Mechanism{Type: h.hashMech}))
			one, _, err := m.Digest(sh, data, Out{Cap: 64})
			must(t, err)
			must(t, m.DigestInit(sh, &Mechanism{Type: h.hashMech}))
			for i := 0; i < len(data); i += 7 {
				must(t, m.DigestUpdate(sh, data[i:min(i+7, len(data))]))
			}
			multi, _, err := m.DigestFinal(sh, Out{Cap: 64})
			must(t, err)
			if !bytes.Equal(one, want) || !bytes.Equal(multi, want) {
				t.Fatal("digest differs from the reference")
			}
		})
	}
	// C_DigestKey: asymmetric keys are indigestible; an error ends the digest.
	for _, c := range []struct {
		name string
		key  uint64
		rv   ck.Error
	}{
		{"public key", pk, ck.CKR_KEY_INDIGESTIBLE},
		{"private key", sk, ck.CKR_KEY_INDIGESTIBLE},
		{"bad handle", 0xdead, ck.CKR_KEY_HANDLE_INVALID},
	} {
		t.Run("DigestKey "+c.name, func(t *testing.T) {
			must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
			wantRV(t, m.DigestKey(sh, c.key), c.rv)
			_, _, err := m.DigestFinal(sh, Out{Cap: 64})
			wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
		})
	}
	wantRV(t, m.DigestKey(sh, pk), ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRV(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256, Param: []byte{1}}), ck.CKR_MECHANISM_PARAM_INVALID)
	must(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}))
	wantRV(t, m.DigestInit(sh, &Mechanism{Type: ck.CKM_SHA256}), ck.CKR_OPERATION_ACTIVE)
}

func TestConformanceRandom(t *testing.T) {
	m, _, sh := readyToken(t)
	cases := []struct {
		n  int
		rv ck.Error
	}{{0, 0}, {1, 0}, {33, 0}, {4096, 0}, {maxRandom, 0}, {maxRandom + 1, ck.CKR_ARGUMENTS_BAD}, {-1, ck.CKR_ARGUMENTS_BAD}}
	for _, c := range cases {
		b, err := m.GenerateRandom(sh, c.n)
		wantRV(t, err, c.rv)
		if err == nil && len(b) != c.n {
			t.Fatalf("%d bytes for %d", len(b), c.n)
		}
		if c.n >= 33 && err == nil {
			b2, _ := m.GenerateRandom(sh, c.n)
			if bytes.Equal(b, b2) {
				t.Fatal("repeated output")
			}
		}
	}
	_, err := m.GenerateRandom(0xdead, 8)
	wantRV(t, err, ck.CKR_SESSION_HANDLE_INVALID)
	must(t, m.SeedRandom(sh, []byte("seed")))
}
