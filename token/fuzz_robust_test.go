package token

// Fuzz targets for what applications hand the token: attribute templates
// (C_CreateObject, C_GenerateKeyPair, C_FindObjectsInit,
// C_SetAttributeValue), mechanism parameters (PSS and OAEP through
// C_SignInit / C_EncryptInit), and imported key and certificate values.
// Each runs against one module with an initialised token and a user
// session, set up once per target. The invariants: no panic; every error
// carries a CK_RV that is not CKR_GENERAL_ERROR (the C layer's code for
// "the module failed"); an object that was accepted can be found and read.
// Commands: docs/FUZZING.md.

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

// fuzzToken loads a module on a fresh token with both PINs set and
// returns it with a logged-in R/W user session.
func fuzzToken(f *testing.F) (*Module, uint64) {
	f.Helper()
	dir := f.TempDir()
	body := `[[slot]]
label = "Fuzz"
token_file = "token.db"
engine = "soft"
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
`
	cfg, err := config.Parse([]byte(body), dir)
	if err != nil {
		f.Fatal(err)
	}
	m, err := Load(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { m.Close() })
	slot := m.SlotList(true)[0]
	if err := m.InitToken(slot, []byte(testSOPIN), "Fuzz"); err != nil {
		f.Fatal(err)
	}
	sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	if err != nil {
		f.Fatal(err)
	}
	for _, step := range []error{
		m.Login(sh, ck.CKU_SO, []byte(testSOPIN)), m.InitPIN(sh, []byte(testUserPIN)),
		m.Logout(sh), m.Login(sh, ck.CKU_USER, []byte(testUserPIN)),
	} {
		if step != nil {
			f.Fatal(step)
		}
	}
	return m, sh
}

// fuzzTypes are the attribute types a fuzzed template draws from (index
// byte < len), so inputs reach the schema checks instead of dying on
// unknown types; index 0xff takes the next 8 bytes as a raw type.
var fuzzTypes = []uint64{
	ck.CKA_CLASS, ck.CKA_TOKEN, ck.CKA_PRIVATE, ck.CKA_LABEL, ck.CKA_APPLICATION, ck.CKA_VALUE,
	ck.CKA_OBJECT_ID, ck.CKA_CERTIFICATE_TYPE, ck.CKA_ISSUER, ck.CKA_SERIAL_NUMBER, ck.CKA_SUBJECT,
	ck.CKA_TRUSTED, ck.CKA_KEY_TYPE, ck.CKA_ID, ck.CKA_SENSITIVE, ck.CKA_ENCRYPT, ck.CKA_DECRYPT,
	ck.CKA_SIGN, ck.CKA_VERIFY, ck.CKA_MODULUS, ck.CKA_MODULUS_BITS, ck.CKA_PUBLIC_EXPONENT,
	ck.CKA_PRIVATE_EXPONENT, ck.CKA_PRIME_1, ck.CKA_PRIME_2, ck.CKA_EXPONENT_1, ck.CKA_EXPONENT_2,
	ck.CKA_COEFFICIENT, ck.CKA_EXTRACTABLE, ck.CKA_LOCAL, ck.CKA_MODIFIABLE, ck.CKA_COPYABLE,
	ck.CKA_DESTROYABLE, ck.CKA_EC_PARAMS, ck.CKA_EC_POINT, ck.CKA_START_DATE, ck.CKA_END_DATE,
	ck.CKA_DERIVE, ck.CKA_WRAP, ck.CKA_UNWRAP, ck.CKA_SIGN_RECOVER, ck.CKA_ALWAYS_AUTHENTICATE,
	ck.CKA_KEY_GEN_MECHANISM, ck.CKA_ALWAYS_SENSITIVE, ck.CKA_NEVER_EXTRACTABLE,
}

// fuzzTemplate decodes a template: per attribute a type byte (see
// fuzzTypes), a length byte and the value. Short values of CK_ULONG
// attributes are made readable by a helper byte: length 0xfe means "the
// next byte as a CK_ULONG", 0xfd "the next byte as a CK_BBOOL".
func fuzzTemplate(data []byte) []Attribute {
	var tmpl []Attribute
	for len(data) >= 2 && len(tmpl) < 32 {
		var typ uint64
		idx := data[0]
		data = data[1:]
		if idx == 0xff && len(data) >= 8 {
			typ, data = binary.LittleEndian.Uint64(data), data[8:]
		} else {
			typ = fuzzTypes[int(idx)%len(fuzzTypes)]
		}
		if len(data) == 0 {
			break
		}
		n := int(data[0])
		data = data[1:]
		var v []byte
		switch {
		case n == 0xfe && len(data) >= 1:
			v, data = ck.ULong(uint64(data[0])), data[1:]
		case n == 0xfd && len(data) >= 1:
			v, data = []byte{data[0] & 1}, data[1:]
		default:
			n = min(n, len(data))
			v, data = data[:n], data[n:]
		}
		tmpl = append(tmpl, Attribute{Type: typ, Value: v})
	}
	return tmpl
}

// encodeTemplate is fuzzTemplate's inverse for seeds (values < 0xfd bytes).
func encodeTemplate(tmpl ...Attribute) []byte {
	var b []byte
	for _, a := range tmpl {
		idx := -1
		for i, t := range fuzzTypes {
			if t == a.Type {
				idx = i
			}
		}
		if idx < 0 {
			b = binary.LittleEndian.AppendUint64(append(b, 0xff), a.Type)
		} else {
			b = append(b, byte(idx))
		}
		b = append(append(b, byte(len(a.Value))), a.Value...)
	}
	return b
}

// checkRV fails on a panic-like or unclassified error.
func checkRV(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil && ck.RV(err) == uint64(ck.CKR_GENERAL_ERROR) {
		t.Fatalf("%s: error without a CK_RV: %v", what, err)
	}
}

// checkObject reads every attribute of the template back from an accepted
// object, finds it by class, and destroys it (keeping the token small).
func checkObject(t *testing.T, m *Module, sh, h uint64, tmpl []Attribute) {
	t.Helper()
	types := make([]uint64, len(tmpl))
	for i, a := range tmpl {
		types[i] = a.Type
	}
	if _, err := m.GetAttributeValue(sh, h, types); err != nil {
		t.Fatalf("GetAttributeValue of an accepted object: %v", err)
	}
	res, err := m.GetAttributeValue(sh, h, []uint64{ck.CKA_CLASS})
	if err != nil || res[0].Err != 0 {
		t.Fatalf("class of an accepted object: %+v, %v", res, err)
	}
	if err := m.FindObjectsInit(sh, []Attribute{{Type: ck.CKA_CLASS, Value: res[0].Value}}); err != nil {
		t.Fatal(err)
	}
	found := false
	for {
		hs, err := m.FindObjects(sh, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) == 0 {
			break
		}
		for _, x := range hs {
			found = found || x == h
		}
	}
	if err := m.FindObjectsFinal(sh); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("accepted object %d not found by its class", h)
	}
	if err := m.DestroyObject(sh, h); err != nil && ck.RV(err) != uint64(ck.CKR_ACTION_PROHIBITED) {
		t.Fatalf("destroy: %v", err)
	}
}

// FuzzCreateObjectTemplate: C_CreateObject with a random template, then
// C_SetAttributeValue and C_FindObjectsInit with the rest of the input.
func FuzzCreateObjectTemplate(f *testing.F) {
	data := encodeTemplate(aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, false), aStr(ck.CKA_LABEL, "d"),
		aStr(ck.CKA_VALUE, "value"))
	f.Add(data, encodeTemplate(aStr(ck.CKA_LABEL, "e")))
	f.Add(encodeTemplate(aULong(ck.CKA_CLASS, ck.CKO_DATA), aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_PRIVATE, true)),
		encodeTemplate(aBool(ck.CKA_MODIFIABLE, false)))
	f.Add(encodeTemplate(aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		aBytes(ck.CKA_MODULUS, []byte{0xc5, 1, 2, 3}), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1})),
		encodeTemplate(aBool(ck.CKA_VERIFY, false)))
	f.Add(encodeTemplate(aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY)), []byte{})
	f.Add(encodeTemplate(aBytes(ck.CKA_CLASS, []byte{1, 2, 3})), []byte{0xff, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0})
	m, sh := fuzzToken(f)
	f.Fuzz(func(t *testing.T, create, change []byte) {
		tmpl := fuzzTemplate(create)
		h, err := m.CreateObject(sh, tmpl)
		checkRV(t, "CreateObject", err)
		other := fuzzTemplate(change)
		fe := m.FindObjectsInit(sh, other)
		checkRV(t, "FindObjectsInit", fe)
		if fe == nil {
			_, err := m.FindObjects(sh, 10)
			checkRV(t, "FindObjects", err)
			checkRV(t, "FindObjectsFinal", m.FindObjectsFinal(sh))
		}
		if err != nil {
			return
		}
		checkRV(t, "SetAttributeValue", m.SetAttributeValue(sh, h, other))
		checkObject(t, m, sh, h, tmpl)
	})
}

// FuzzGenerateKeyPairTemplate: C_GenerateKeyPair with random public and
// private templates (RSA-1024 when they pass, so generation stays cheap).
func FuzzGenerateKeyPairTemplate(f *testing.F) {
	f.Add(encodeTemplate(aULong(ck.CKA_MODULUS_BITS, 1024), aBool(ck.CKA_TOKEN, false)),
		encodeTemplate(aBool(ck.CKA_SIGN, true), aBool(ck.CKA_TOKEN, false)))
	f.Add(encodeTemplate(aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{3})),
		encodeTemplate(aBool(ck.CKA_EXTRACTABLE, true)))
	f.Add(encodeTemplate(aULong(ck.CKA_MODULUS_BITS, 512)), []byte{})
	f.Add(encodeTemplate(aULong(ck.CKA_MODULUS_BITS, 1024), aBytes(ck.CKA_PUBLIC_EXPONENT, []byte{0, 0, 0, 2})),
		encodeTemplate(aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY)))
	m, sh := fuzzToken(f)
	f.Fuzz(func(t *testing.T, pub, priv []byte) {
		pt, qt := fuzzTemplate(pub), fuzzTemplate(priv)
		// Keep generation cheap: only 1024-bit requests reach the engine.
		for _, a := range pt {
			if a.Type == ck.CKA_MODULUS_BITS {
				if bits, ok := ck.ParseULong(a.Value); !ok || bits != 1024 {
					return
				}
			}
		}
		ph, qh, err := m.GenerateKeyPair(sh, &Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN}, pt, qt)
		checkRV(t, "GenerateKeyPair", err)
		if err != nil {
			return
		}
		checkObject(t, m, sh, ph, pt)
		checkObject(t, m, sh, qh, qt)
	})
}

// fuzzRSAKey is the RSA key the mechanism and import targets use.
var fuzzRSAKey = func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		panic(err)
	}
	k.Precompute()
	return k
}()

// rsaKeyTemplates are the templates of fuzzRSAKey as session objects.
func rsaKeyTemplates(k *rsa.PrivateKey) (priv, pub []Attribute) {
	n, e := k.N.Bytes(), big.NewInt(int64(k.E)).Bytes()
	priv = []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		aBool(ck.CKA_SIGN, true), aBool(ck.CKA_DECRYPT, true), aBool(ck.CKA_PRIVATE, true),
		aBytes(ck.CKA_MODULUS, n), aBytes(ck.CKA_PUBLIC_EXPONENT, e), aBytes(ck.CKA_PRIVATE_EXPONENT, k.D.Bytes()),
		aBytes(ck.CKA_PRIME_1, k.Primes[0].Bytes()), aBytes(ck.CKA_PRIME_2, k.Primes[1].Bytes()),
		aBytes(ck.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()), aBytes(ck.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
		aBytes(ck.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes())}
	pub = []Attribute{aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		aBool(ck.CKA_VERIFY, true), aBool(ck.CKA_ENCRYPT, true), aBytes(ck.CKA_MODULUS, n), aBytes(ck.CKA_PUBLIC_EXPONENT, e)}
	return priv, pub
}

// FuzzMechanismParams: C_SignInit and C_EncryptInit/C_DecryptInit with
// random mechanisms and PSS/OAEP parameters, then one operation.
func FuzzMechanismParams(f *testing.F) {
	f.Add(uint64(ck.CKM_RSA_PKCS_PSS), uint64(ck.CKM_SHA256), uint64(ck.CKG_MGF1_SHA256), uint64(32), []byte{}, []byte("01234567890123456789012345678901"))
	f.Add(uint64(ck.CKM_SHA256_RSA_PKCS_PSS), uint64(ck.CKM_SHA256), uint64(ck.CKG_MGF1_SHA1), uint64(200), []byte{}, []byte("msg"))
	f.Add(uint64(ck.CKM_RSA_PKCS_OAEP), uint64(ck.CKM_SHA_1), uint64(ck.CKG_MGF1_SHA1), uint64(ck.CKZ_DATA_SPECIFIED), []byte("label"), []byte("msg"))
	f.Add(uint64(ck.CKM_RSA_PKCS_OAEP), uint64(ck.CKM_SHA512), uint64(ck.CKG_MGF1_SHA512), uint64(0), []byte{}, []byte("msg"))
	f.Add(uint64(ck.CKM_RSA_PKCS), uint64(0), uint64(0), uint64(0), []byte{1}, []byte("msg"))
	m, sh := fuzzToken(f)
	priv, pub := rsaKeyTemplates(fuzzRSAKey)
	privH, err := m.CreateObject(sh, priv)
	if err != nil {
		f.Fatal(err)
	}
	pubH, err := m.CreateObject(sh, pub)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, mc, hash, mgf, third uint64, param, data []byte) {
		if len(data) > 4096 {
			return
		}
		pss := &Mechanism{Type: mc, PSS: &PSSParams{Hash: hash, MGF: mgf, SaltLen: third}}
		oaep := &Mechanism{Type: mc, OAEP: &OAEPParams{Hash: hash, MGF: mgf, Source: third, SourceData: param}}
		raw := &Mechanism{Type: mc, Param: param}
		for _, cm := range []*Mechanism{pss, oaep, raw} {
			err := m.SignInit(sh, cm, privH)
			checkRV(t, "SignInit", err)
			if err == nil {
				_, _, err = m.Sign(sh, data, Out{Cap: 512})
				checkRV(t, "Sign", err)
				if err != nil && ck.RV(err) == uint64(ck.CKR_BUFFER_TOO_SMALL) {
					t.Fatal("512-byte buffer too small for a 1024-bit signature")
				}
			}
			err = m.EncryptInit(sh, cm, pubH)
			checkRV(t, "EncryptInit", err)
			if err == nil {
				ct, _, err := m.Encrypt(sh, data, Out{Cap: 512})
				checkRV(t, "Encrypt", err)
				if err == nil {
					// What was encrypted decrypts to the same bytes.
					checkRV(t, "DecryptInit", m.DecryptInit(sh, cm, privH))
					pt, _, err := m.Decrypt(sh, ct, Out{Cap: 512})
					want := data
					if mc == ck.CKM_RSA_X_509 {
						// Raw RSA: the plaintext comes back as a
						// modulus-sized block, left-padded with zeros.
						pt, want = bytes.TrimLeft(pt, "\x00"), bytes.TrimLeft(data, "\x00")
					}
					if err != nil || string(pt) != string(want) {
						t.Fatalf("%s: decrypt(encrypt(%x)) = %x, %v", ck.Name("CKM_", mc), data, pt, err)
					}
				}
			}
			err = m.DecryptInit(sh, cm, privH)
			checkRV(t, "DecryptInit", err)
			if err == nil {
				_, _, err = m.Decrypt(sh, data, Out{Cap: 512})
				checkRV(t, "Decrypt", err)
			}
		}
	})
}

// FuzzImportRSAKey: C_CreateObject of an RSA private key whose values are
// replaced or altered by the input (the "DER" of imported keys: big-endian
// integers), then a signature: a key that was accepted and signs must give
// a signature that verifies with its own public values (the token checks
// before release, so a bad key must fail, not sign wrongly).
func FuzzImportRSAKey(f *testing.F) {
	f.Add(uint8(0), []byte{})
	f.Add(uint8(2), []byte{0})
	f.Add(uint8(3), []byte{1, 2, 3, 4})
	f.Add(uint8(4), fuzzRSAKey.Primes[1].Bytes())
	f.Add(uint8(7), []byte{0xff})
	m, sh := fuzzToken(f)
	base, _ := rsaKeyTemplates(fuzzRSAKey)
	f.Fuzz(func(t *testing.T, which uint8, value []byte) {
		tmpl := append([]Attribute{}, base...)
		i := 5 + int(which)%8 // one of the big-integer attributes
		if which&0x80 != 0 && len(value) > 0 {
			// Flip bytes of the real value instead of replacing it.
			v := append([]byte{}, tmpl[i].Value...)
			for j, b := range value {
				v[j%len(v)] ^= b
			}
			value = v
		}
		tmpl[i] = Attribute{Type: tmpl[i].Type, Value: value}
		h, err := m.CreateObject(sh, tmpl)
		checkRV(t, "CreateObject", err)
		if err != nil {
			return
		}
		defer m.DestroyObject(sh, h)
		err = m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, h)
		checkRV(t, "SignInit", err)
		if err != nil {
			return
		}
		sig, _, err := m.Sign(sh, []byte("fuzz"), Out{Cap: 4096})
		checkRV(t, "Sign", err)
		if err != nil {
			return
		}
		res, err := m.GetAttributeValue(sh, h, []uint64{ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT})
		if err != nil {
			t.Fatal(err)
		}
		pub, err := publicFromAttrs(res[0].Value, res[1].Value)
		if err != nil {
			t.Fatalf("key with unusable public values signed: %v", err)
		}
		if err := verifySHA256(pub, []byte("fuzz"), sig); err != nil {
			t.Fatalf("accepted key gave a bad signature: %v", err)
		}
	})
}

// FuzzCertificate: C_CreateObject of an X.509 certificate object with a
// random CKA_VALUE (and subject/issuer/serial).
func FuzzCertificate(f *testing.F) {
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "fuzz"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &fuzzRSAKey.PublicKey, fuzzRSAKey)
	if err != nil {
		f.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	f.Add(der, cert.RawSubject, []byte{2, 1, 7})
	f.Add(der[:len(der)/2], []byte{}, []byte{})
	f.Add([]byte{0x30, 0x80}, []byte{0x30, 0}, []byte{2, 0})
	m, sh := fuzzToken(f)
	f.Fuzz(func(t *testing.T, value, subject, serial []byte) {
		tmpl := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_CERTIFICATE), aULong(ck.CKA_CERTIFICATE_TYPE, ck.CKC_X_509),
			aBytes(ck.CKA_VALUE, value), aBytes(ck.CKA_SUBJECT, subject), aBytes(ck.CKA_SERIAL_NUMBER, serial),
			aStr(ck.CKA_LABEL, "cert")}
		h, err := m.CreateObject(sh, tmpl)
		checkRV(t, "CreateObject", err)
		if err == nil {
			checkObject(t, m, sh, h, tmpl)
		}
	})
}

// publicFromAttrs builds an RSA public key from CKA_MODULUS and
// CKA_PUBLIC_EXPONENT.
func publicFromAttrs(n, e []byte) (*rsa.PublicKey, error) {
	eb := new(big.Int).SetBytes(e)
	if len(n) == 0 || !eb.IsInt64() || eb.Int64() < 3 || eb.Int64() > 1<<31 {
		return nil, fmt.Errorf("modulus %d bytes, exponent %v", len(n), eb)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(eb.Int64())}, nil
}

// verifySHA256 checks a CKM_SHA256_RSA_PKCS signature in software.
func verifySHA256(pub *rsa.PublicKey, msg, sig []byte) error {
	d := sha256.Sum256(msg)
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig)
}
