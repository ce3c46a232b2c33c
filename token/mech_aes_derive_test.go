package token

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestAESEncryptDataDerive checks CKM_AES_ECB_ENCRYPT_DATA and
// CKM_AES_CBC_ENCRYPT_DATA against NIST SP 800-38A F.1.1 and F.2.1
// (AES-128), and their refusals.
func TestAESEncryptDataDerive(t *testing.T) {
	m, _, sh := readyToken(t)
	key := unhex(t, "2b7e151628aed2a6abf7158809cf4f3c")
	pt := unhex(t, "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
	base, err := m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_AES),
		aBytes(ck.CKA_VALUE, key), aBool(ck.CKA_DERIVE, true), aBool(ck.CKA_TOKEN, false), aBool(ck.CKA_SENSITIVE, false), aBool(ck.CKA_EXTRACTABLE, true)})
	must(t, err)
	tmpl := func(kt, n uint64) []Attribute {
		a := []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, kt), aBool(ck.CKA_SENSITIVE, false),
			aBool(ck.CKA_EXTRACTABLE, true), aBool(ck.CKA_TOKEN, false)}
		if n != 0 {
			a = append(a, aULong(ck.CKA_VALUE_LEN, n))
		}
		return a
	}
	ecb := func(data []byte) *Mechanism {
		return &Mechanism{Type: ck.CKM_AES_ECB_ENCRYPT_DATA, EncryptData: &EncryptDataParams{Data: data}}
	}
	cbc := func(iv, data []byte) *Mechanism {
		return &Mechanism{Type: ck.CKM_AES_CBC_ENCRYPT_DATA, EncryptData: &EncryptDataParams{IV: iv, Data: data}}
	}
	iv := unhex(t, "000102030405060708090a0b0c0d0e0f")
	for _, c := range []struct {
		name string
		mech *Mechanism
		tmpl []Attribute
		want string
	}{
		{"ECB AES-128", ecb(pt[:16]), tmpl(ck.CKK_AES, 16), "3ad77bb40d7a3660a89ecaf32466ef97"},
		{"ECB leading 16 of 32", ecb(pt), tmpl(ck.CKK_AES, 16), "3ad77bb40d7a3660a89ecaf32466ef97"},
		{"ECB generic, no length", ecb(pt), tmpl(ck.CKK_GENERIC_SECRET, 0), "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"},
		{"ECB AES, no length: 32 bytes", ecb(pt), tmpl(ck.CKK_AES, 0), "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"},
		{"CBC AES-256", cbc(iv, pt), tmpl(ck.CKK_AES, 32), "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"},
		{"CBC generic 20", cbc(iv, pt), tmpl(ck.CKK_GENERIC_SECRET, 20), "7649abac8119b246cee98e9b12e9197d5086cb9b"},
	} {
		h, err := m.DeriveKey(sh, c.mech, base, c.tmpl)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := attrValue(t, m, sh, h, ck.CKA_VALUE); !bytes.Equal(got, unhex(t, c.want)) {
			t.Errorf("%s: %x, want %s", c.name, got, c.want)
		}
		if local := attrValue(t, m, sh, h, ck.CKA_LOCAL); !bytes.Equal(local, ck.Bool(false)) {
			t.Errorf("%s: CKA_LOCAL %x", c.name, local)
		}
	}
	for _, c := range []struct {
		name string
		mech *Mechanism
		tmpl []Attribute
		want ck.Error
	}{
		{"ECB 15 bytes", ecb(pt[:15]), tmpl(ck.CKK_AES, 16), ck.CKR_MECHANISM_PARAM_INVALID},
		{"ECB empty", ecb(nil), tmpl(ck.CKK_AES, 16), ck.CKR_MECHANISM_PARAM_INVALID},
		{"ECB key longer than data", ecb(pt[:16]), tmpl(ck.CKK_AES, 32), ck.CKR_MECHANISM_PARAM_INVALID},
		{"ECB with an IV", &Mechanism{Type: ck.CKM_AES_ECB_ENCRYPT_DATA, EncryptData: &EncryptDataParams{IV: iv, Data: pt}}, tmpl(ck.CKK_AES, 16), ck.CKR_MECHANISM_PARAM_INVALID},
		{"CBC 31 bytes", cbc(iv, pt[:31]), tmpl(ck.CKK_AES, 16), ck.CKR_MECHANISM_PARAM_INVALID},
		{"CBC short IV", cbc(iv[:15], pt), tmpl(ck.CKK_AES, 16), ck.CKR_MECHANISM_PARAM_INVALID},
		{"CBC no parameter", &Mechanism{Type: ck.CKM_AES_CBC_ENCRYPT_DATA}, tmpl(ck.CKK_AES, 16), ck.CKR_MECHANISM_PARAM_INVALID},
	} {
		_, err := m.DeriveKey(sh, c.mech, base, c.tmpl)
		if !isRV(err, c.want) {
			t.Errorf("%s: %v, want %s", c.name, err, ck.Name("CKR_", uint64(c.want)))
		}
	}
	// The base key needs CKA_DERIVE; an EC key is the wrong type.
	noDerive := mustSecret(t, m, sh, ck.CKK_AES, key)
	must(t, m.SetAttributeValue(sh, noDerive, []Attribute{aBool(ck.CKA_DERIVE, false)}))
	_, err = m.DeriveKey(sh, ecb(pt), noDerive, tmpl(ck.CKK_AES, 16))
	wantRV(t, err, ck.CKR_KEY_FUNCTION_NOT_PERMITTED)
	generic := mustSecret(t, m, sh, ck.CKK_GENERIC_SECRET, key)
	_, err = m.DeriveKey(sh, ecb(pt), generic, tmpl(ck.CKK_AES, 16))
	wantRV(t, err, ck.CKR_KEY_TYPE_INCONSISTENT)
}
