package token

// Conformance of the symmetric mechanisms (PKCS#11 3.0 Current Mechanisms
// §2.10 AES, §2.12 GCM, §2.20–2.25 HMAC; base §5.8–5.11): truthful
// C_GetMechanismInfo, parameters, the length rules of each mode, the
// Update output lengths and the two-call convention, key types and usage
// attributes, and "an error ends the operation".

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

func TestConformanceSymmetricMechanismInfo(t *testing.T) {
	m, slot, sh := readyToken(t)
	aesKey := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 32))
	macKey := mustSecret(t, m, sh, ck.CKK_GENERIC_SECRET, make([]byte, 32))
	iv := make([]byte, 16)
	crypt := uint64(ck.CKF_ENCRYPT | ck.CKF_DECRYPT)
	mac := uint64(ck.CKF_SIGN | ck.CKF_VERIFY)
	cases := []struct {
		mech     *Mechanism
		flags    uint64
		min, max uint64
		key      uint64
	}{
		{&Mechanism{Type: ck.CKM_AES_ECB}, crypt, 16, 32, aesKey},
		{&Mechanism{Type: ck.CKM_AES_CBC, Param: iv}, crypt, 16, 32, aesKey},
		{&Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv}, crypt, 16, 32, aesKey},
		{ctrMech(128, iv), crypt, 16, 32, aesKey},
		{gcmMech(iv[:12], nil, 128), crypt, 16, 32, aesKey},
		{&Mechanism{Type: ck.CKM_AES_CMAC}, mac, 16, 32, aesKey},
		{generalMech(ck.CKM_AES_CMAC_GENERAL, 8), mac, 16, 32, aesKey},
		{&Mechanism{Type: ck.CKM_SHA_1_HMAC}, mac, 1, mech.GenericMaxBytes, macKey},
		{&Mechanism{Type: ck.CKM_SHA224_HMAC}, mac, 1, mech.GenericMaxBytes, macKey},
		{&Mechanism{Type: ck.CKM_SHA256_HMAC}, mac, 1, mech.GenericMaxBytes, macKey},
		{&Mechanism{Type: ck.CKM_SHA384_HMAC}, mac, 1, mech.GenericMaxBytes, macKey},
		{&Mechanism{Type: ck.CKM_SHA512_HMAC}, mac, 1, mech.GenericMaxBytes, macKey},
		{generalMech(ck.CKM_SHA_1_HMAC_GENERAL, 10), mac, 1, mech.GenericMaxBytes, macKey},
		{generalMech(ck.CKM_SHA256_HMAC_GENERAL, 10), mac, 1, mech.GenericMaxBytes, macKey},
		{generalMech(ck.CKM_SHA512_HMAC_GENERAL, 10), mac, 1, mech.GenericMaxBytes, macKey},
	}
	list, err := m.MechanismList(slot)
	must(t, err)
	for _, c := range cases {
		t.Run(ck.Name("CKM_", c.mech.Type), func(t *testing.T) {
			info, err := m.MechanismInfo(slot, c.mech.Type)
			must(t, err)
			listed := false
			for _, l := range list {
				listed = listed || l == c.mech.Type
			}
			// Other helpers may add CKF_WRAP/CKF_UNWRAP/CKF_DERIVE; the
			// message flags are message_test.go's.
			if !listed || info.Flags&^(ck.CKF_WRAP|ck.CKF_UNWRAP|ck.CKF_DERIVE|mech.MessageMask) != c.flags || info.MinKeySize != c.min || info.MaxKeySize != c.max {
				t.Fatalf("listed %v, info %+v, want flags %#x sizes %d..%d", listed, info, c.flags, c.min, c.max)
			}
			kinds := []struct {
				flag uint64
				init func() error
			}{
				{ck.CKF_SIGN, func() error { return m.SignInit(sh, c.mech, c.key) }},
				{ck.CKF_VERIFY, func() error { return m.VerifyInit(sh, c.mech, c.key) }},
				{ck.CKF_ENCRYPT, func() error { return m.EncryptInit(sh, c.mech, c.key) }},
				{ck.CKF_DECRYPT, func() error { return m.DecryptInit(sh, c.mech, c.key) }},
				{ck.CKF_DIGEST, func() error { return m.DigestInit(sh, c.mech) }},
			}
			for _, k := range kinds {
				err := k.init()
				if info.Flags&k.flag != 0 {
					must(t, err)
					must(t, m.SessionCancel(sh, k.flag))
				} else {
					wantRV(t, err, ck.CKR_MECHANISM_INVALID)
				}
			}
		})
	}
}

func TestConformanceSymmetricParams(t *testing.T) {
	m, _, sh := readyToken(t)
	aesKey := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 16))
	macKey := mustSecret(t, m, sh, ck.CKK_GENERIC_SECRET, make([]byte, 16))
	iv := make([]byte, 16)
	gcm := func(iv, aad []byte, ivBits, tagBits uint64) *Mechanism {
		return &Mechanism{Type: ck.CKM_AES_GCM, GCM: &GCMParams{IV: iv, AAD: aad, IVBits: ivBits, TagBits: tagBits}}
	}
	cases := []struct {
		name string
		mech *Mechanism
		key  uint64
		rv   ck.Error
	}{
		{"ECB with a parameter", &Mechanism{Type: ck.CKM_AES_ECB, Param: iv}, aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CBC without IV", &Mechanism{Type: ck.CKM_AES_CBC}, aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CBC IV of 15 bytes", &Mechanism{Type: ck.CKM_AES_CBC, Param: iv[:15]}, aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CBC_PAD IV of 17 bytes", &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: append(iv, 0)}, aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CTR params short", &Mechanism{Type: ck.CKM_AES_CTR, Param: iv}, aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CTR 0 counter bits", ctrMech(0, iv), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CTR 129 counter bits", ctrMech(129, iv), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CTR 1 counter bit", ctrMech(1, iv), aesKey, 0},
		{"GCM raw bytes", &Mechanism{Type: ck.CKM_AES_GCM, Param: iv}, aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM empty IV", gcm(nil, nil, 0, 128), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM IV bits wrong (ignored: ulIvLen decides)", gcm(iv[:12], nil, 95, 128), aesKey, 0},
		{"GCM IV bits 0", gcm(iv[:12], nil, 0, 128), aesKey, 0},
		{"GCM 1-byte IV", gcm(iv[:1], nil, 8, 128), aesKey, 0},
		{"GCM tag 0", gcm(iv[:12], nil, 96, 0), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM tag 33", gcm(iv[:12], nil, 96, 33), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM tag 136", gcm(iv[:12], nil, 96, 136), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM tag 40", gcm(iv[:12], nil, 96, 40), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"GCM tag 32", gcm(iv[:12], nil, 96, 32), aesKey, 0},
		{"GCM tag 104", gcm(iv[:12], nil, 96, 104), aesKey, 0},
		{"CMAC with a parameter", &Mechanism{Type: ck.CKM_AES_CMAC, Param: ck.ULong(16)}, aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CMAC_GENERAL 0", generalMech(ck.CKM_AES_CMAC_GENERAL, 0), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CMAC_GENERAL 17", generalMech(ck.CKM_AES_CMAC_GENERAL, 17), aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"CMAC_GENERAL no parameter", &Mechanism{Type: ck.CKM_AES_CMAC_GENERAL}, aesKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"HMAC with a parameter", &Mechanism{Type: ck.CKM_SHA256_HMAC, Param: ck.ULong(32)}, macKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"HMAC_GENERAL 33", generalMech(ck.CKM_SHA256_HMAC_GENERAL, 33), macKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"HMAC_GENERAL 32", generalMech(ck.CKM_SHA256_HMAC_GENERAL, 32), macKey, 0},
		{"SHA-1 HMAC_GENERAL 21", generalMech(ck.CKM_SHA_1_HMAC_GENERAL, 21), macKey, ck.CKR_MECHANISM_PARAM_INVALID},
		{"HMAC_GENERAL 4 bytes", &Mechanism{Type: ck.CKM_SHA256_HMAC_GENERAL, Param: []byte{1, 0, 0, 0}}, macKey, ck.CKR_MECHANISM_PARAM_INVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.mech.Type == ck.CKM_AES_CMAC || c.mech.Type == ck.CKM_AES_CMAC_GENERAL || c.key == macKey {
				err = m.SignInit(sh, c.mech, c.key)
				_ = m.SessionCancel(sh, ck.CKF_SIGN)
			} else {
				forgetGCMIVs(m) // the cases share one key and IV on purpose
				err = m.EncryptInit(sh, c.mech, c.key)
				_ = m.SessionCancel(sh, ck.CKF_ENCRYPT)
			}
			wantRV(t, err, c.rv)
		})
	}
}

func TestConformanceSymmetricLengths(t *testing.T) {
	m, _, sh := readyToken(t)
	key := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 16))
	iv := make([]byte, 16)
	ecb := &Mechanism{Type: ck.CKM_AES_ECB}
	cbc := &Mechanism{Type: ck.CKM_AES_CBC, Param: iv}
	pad := &Mechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv}
	gcm := gcmMech(iv[:12], nil, 128)
	nearWrap := append(bytes.Repeat([]byte{0}, 15), 0xfe) // 8-bit counter: 2 blocks left
	cases := []struct {
		name string
		kind mech.OpKind
		mech *Mechanism
		n    int
		rv   ck.Error
		out  int
	}{
		{"ECB encrypt 0", mech.OpEncrypt, ecb, 0, 0, 0},
		{"ECB encrypt 32", mech.OpEncrypt, ecb, 32, 0, 32},
		{"ECB encrypt 15", mech.OpEncrypt, ecb, 15, ck.CKR_DATA_LEN_RANGE, 0},
		{"ECB decrypt 17", mech.OpDecrypt, ecb, 17, ck.CKR_ENCRYPTED_DATA_LEN_RANGE, 0},
		{"CBC encrypt 0", mech.OpEncrypt, cbc, 0, 0, 0},
		{"CBC encrypt 33", mech.OpEncrypt, cbc, 33, ck.CKR_DATA_LEN_RANGE, 0},
		{"CBC decrypt 31", mech.OpDecrypt, cbc, 31, ck.CKR_ENCRYPTED_DATA_LEN_RANGE, 0},
		{"CBC_PAD encrypt 0", mech.OpEncrypt, pad, 0, 0, 16},
		{"CBC_PAD encrypt 16", mech.OpEncrypt, pad, 16, 0, 32},
		{"CBC_PAD encrypt 17", mech.OpEncrypt, pad, 17, 0, 32},
		{"CBC_PAD decrypt 0", mech.OpDecrypt, pad, 0, ck.CKR_ENCRYPTED_DATA_LEN_RANGE, 0},
		{"CBC_PAD decrypt 15", mech.OpDecrypt, pad, 15, ck.CKR_ENCRYPTED_DATA_LEN_RANGE, 0},
		{"CBC_PAD decrypt 33", mech.OpDecrypt, pad, 33, ck.CKR_ENCRYPTED_DATA_LEN_RANGE, 0},
		{"GCM encrypt 0", mech.OpEncrypt, gcm, 0, 0, 16},
		{"GCM encrypt 5", mech.OpEncrypt, gcm, 5, 0, 21},
		{"GCM decrypt 15", mech.OpDecrypt, gcm, 15, ck.CKR_ENCRYPTED_DATA_LEN_RANGE, 0},
		{"CTR encrypt 7", mech.OpEncrypt, ctrMech(128, iv), 7, 0, 7},
		{"CTR 8-bit counter, 2 blocks left, 32 bytes", mech.OpEncrypt, ctrMech(8, nearWrap), 32, 0, 32},
		{"CTR 8-bit counter, 2 blocks left, 33 bytes", mech.OpEncrypt, ctrMech(8, nearWrap), 33, ck.CKR_DATA_LEN_RANGE, 0},
		{"CTR decrypt past the counter", mech.OpDecrypt, ctrMech(8, nearWrap), 33, ck.CKR_ENCRYPTED_DATA_LEN_RANGE, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forgetGCMIVs(m) // the cases share one key and IV on purpose
			out, err := cryptOnce(m, sh, c.kind, c.mech, key, make([]byte, c.n))
			wantRV(t, err, c.rv)
			if err == nil && len(out) != c.out {
				t.Fatalf("output of %d bytes, want %d", len(out), c.out)
			}
			if err != nil {
				// The error ended the operation.
				_, _, err := m.Encrypt(sh, nil, Out{Query: true})
				wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
				_, _, err = m.Decrypt(sh, nil, Out{Query: true})
				wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
			}
		})
	}
	// Update output lengths: CBC_PAD decryption holds the last block back.
	must(t, m.DecryptInit(sh, pad, key))
	for _, c := range []struct{ in, out int }{{5, 0}, {11, 0}, {16, 16}, {1, 16}, {15, 0}, {16, 16}} {
		_, need, err := m.DecryptUpdate(sh, make([]byte, c.in), Out{Query: true})
		must(t, err)
		if need != c.out {
			t.Fatalf("CBC_PAD DecryptUpdate(%d) announces %d, want %d", c.in, need, c.out)
		}
		// A short buffer leaves the operation as it was.
		if need > 0 {
			_, n2, err := m.DecryptUpdate(sh, make([]byte, c.in), Out{Cap: need - 1})
			wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
			if n2 != need {
				t.Fatalf("BUFFER_TOO_SMALL reports %d", n2)
			}
		}
		_, _, err = m.DecryptUpdate(sh, make([]byte, c.in), Out{Cap: need})
		must(t, err)
	}
	// 64 bytes in, 48 out: 16 held back; zeros do not unpad.
	_, _, err := m.DecryptFinal(sh, Out{Cap: 16})
	wantRV(t, err, ck.CKR_ENCRYPTED_DATA_INVALID)
	// C_Encrypt after C_EncryptUpdate is refused and ends the operation.
	must(t, m.EncryptInit(sh, ecb, key))
	_, _, err = m.EncryptUpdate(sh, make([]byte, 16), Out{Cap: 16})
	must(t, err)
	_, _, err = m.Encrypt(sh, make([]byte, 16), Out{Cap: 16})
	wantRV(t, err, ck.CKR_OPERATION_ACTIVE)
	_, _, err = m.EncryptFinal(sh, Out{Cap: 16})
	wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
	// Final's two-call convention: a query and a short buffer keep the
	// result.
	forgetGCMIVs(m) // the IV of the cases above, on purpose
	must(t, m.EncryptInit(sh, gcm, key))
	_, _, err = m.EncryptUpdate(sh, make([]byte, 10), Out{Cap: 0})
	must(t, err)
	_, need, err := m.EncryptFinal(sh, Out{Query: true})
	must(t, err)
	_, _, err = m.EncryptFinal(sh, Out{Cap: need - 1})
	wantRV(t, err, ck.CKR_BUFFER_TOO_SMALL)
	out, _, err := m.EncryptFinal(sh, Out{Cap: need})
	must(t, err)
	if len(out) != 26 {
		t.Fatalf("GCM final %d bytes", len(out))
	}
}

func TestConformanceSymmetricKeys(t *testing.T) {
	m, _, sh := readyToken(t)
	iv := make([]byte, 16)
	aesKey := mustSecret(t, m, sh, ck.CKK_AES, make([]byte, 16))
	hmacKey := mustSecret(t, m, sh, ck.CKK_SHA256_HMAC, make([]byte, 16))
	noEncrypt, err := m.CreateObject(sh, aesTmpl(make([]byte, 16), aBool(ck.CKA_ENCRYPT, false), aBool(ck.CKA_SIGN, false)))
	must(t, err)
	onlyGCM, err := m.CreateObject(sh, aesTmpl(make([]byte, 16), aBytes(ck.CKA_ALLOWED_MECHANISMS, ck.ULong(ck.CKM_AES_GCM))))
	must(t, err)
	pk, sk := genKey(t, m, sh, 1024, false)
	cbc := &Mechanism{Type: ck.CKM_AES_CBC, Param: iv}
	cases := []struct {
		name string
		init func() error
		rv   ck.Error
	}{
		{"AES with HMAC key", func() error { return m.EncryptInit(sh, cbc, hmacKey) }, ck.CKR_KEY_TYPE_INCONSISTENT},
		{"AES with RSA public key", func() error { return m.EncryptInit(sh, cbc, pk) }, ck.CKR_KEY_TYPE_INCONSISTENT},
		{"HMAC with AES key", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_HMAC}, aesKey) }, ck.CKR_KEY_TYPE_INCONSISTENT},
		{"HMAC with RSA private key", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_HMAC}, sk) }, ck.CKR_KEY_TYPE_INCONSISTENT},
		{"SHA-1 HMAC with SHA-256 HMAC key", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA_1_HMAC}, hmacKey) }, ck.CKR_KEY_TYPE_INCONSISTENT},
		{"CKA_ENCRYPT false", func() error { return m.EncryptInit(sh, cbc, noEncrypt) }, ck.CKR_KEY_FUNCTION_NOT_PERMITTED},
		{"CKA_SIGN false", func() error { return m.SignInit(sh, &Mechanism{Type: ck.CKM_AES_CMAC}, noEncrypt) }, ck.CKR_KEY_FUNCTION_NOT_PERMITTED},
		{"CKA_DECRYPT true", func() error { return m.DecryptInit(sh, cbc, noEncrypt) }, 0},
		{"not in CKA_ALLOWED_MECHANISMS", func() error { return m.EncryptInit(sh, cbc, onlyGCM) }, ck.CKR_MECHANISM_INVALID},
		{"in CKA_ALLOWED_MECHANISMS", func() error { return m.EncryptInit(sh, gcmMech(iv[:12], nil, 128), onlyGCM) }, 0},
		{"no such key", func() error { return m.EncryptInit(sh, cbc, 0xdead) }, ck.CKR_KEY_HANDLE_INVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantRV(t, c.init(), c.rv)
			must(t, m.SessionCancel(sh, ck.CKF_ENCRYPT|ck.CKF_DECRYPT|ck.CKF_SIGN|ck.CKF_VERIFY))
		})
	}
	// A private secret key: after logout its handle is gone and an
	// operation started before fails.
	priv, err := m.CreateObject(sh, aesTmpl(make([]byte, 16)))
	must(t, err)
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_AES_ECB}, priv))
	must(t, m.Logout(sh))
	_, _, err = m.Encrypt(sh, make([]byte, 16), Out{Cap: 16})
	wantRV(t, err, ck.CKR_USER_NOT_LOGGED_IN)
	wantRV(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_AES_ECB}, priv), ck.CKR_KEY_HANDLE_INVALID)
	// A public session key works without login.
	must(t, m.EncryptInit(sh, &Mechanism{Type: ck.CKM_AES_ECB}, aesKey))
	_, _, err = m.Encrypt(sh, make([]byte, 16), Out{Cap: 16})
	must(t, err)
}
