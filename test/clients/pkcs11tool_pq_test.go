package clients

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// montgomeryAndKEM exercises what pkcs11-tool 0.23 lists from the 3.2
// interface but cannot all drive: CKM_EC_MONTGOMERY_KEY_PAIR_GEN through
// pkcs11-tool itself (--key-type EC:curve25519), and CKM_ML_KEM_KEY_PAIR_GEN
// and CKM_ML_KEM (C_EncapsulateKey/C_DecapsulateKey, which neither
// pkcs11-tool nor miekg/pkcs11 has) on the same token through the token
// package in this process: a key pair, an encapsulation and a
// decapsulation to the same secret.
func (ex *p11Exercises) montgomeryAndKEM(t *testing.T) {
	t.Helper()
	if ex.has("EC-MONTGOMERY-KEY-PAIR-GEN", "generate_key_pair") {
		ex.tk.p11Login("--keypairgen", "--key-type", "EC:curve25519", "--usage-derive", "--id", "25", "--label", "x25519")
		if out := ex.tk.p11Login("--list-objects", "--type", "privkey").combined(); !strings.Contains(out, "x25519") {
			t.Fatalf("no X25519 private key after --keypairgen:\n%s", out)
		}
		ex.mark("EC-MONTGOMERY-KEY-PAIR-GEN", "generate_key_pair")
	}
	if !ex.has("mechtype-0xF", "generate_key_pair") && !ex.has("mechtype-0x17", "other flags=0x30000000") {
		return
	}
	for _, kv := range ex.tk.env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "MODEXP_TOKEN_") {
			t.Setenv(k, v)
		}
	}
	m, err := token.LoadFromEnv()
	if err != nil {
		t.Fatalf("the token in process: %v", err)
	}
	defer m.Close()
	sh, err := m.OpenSession(m.SlotList(true)[0], ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Login(sh, ck.CKU_USER, []byte(userPIN)); err != nil {
		t.Fatal(err)
	}
	pub, priv, err := m.GenerateKeyPair(sh, &token.Mechanism{Type: ck.CKM_ML_KEM_KEY_PAIR_GEN},
		[]token.Attribute{{Type: ck.CKA_PARAMETER_SET, Value: ck.ULong(ck.CKP_ML_KEM_768)}}, nil)
	if err != nil {
		t.Fatalf("CKM_ML_KEM_KEY_PAIR_GEN: %v", err)
	}
	ex.mark("mechtype-0xF", "generate_key_pair")
	open := []token.Attribute{{Type: ck.CKA_SENSITIVE, Value: ck.Bool(false)}, {Type: ck.CKA_EXTRACTABLE, Value: ck.Bool(true)}}
	mech := &token.Mechanism{Type: ck.CKM_ML_KEM}
	ct, _, h1, err := m.EncapsulateKey(sh, mech, pub, open, token.Out{Cap: 2048})
	if err != nil {
		t.Fatalf("C_EncapsulateKey: %v", err)
	}
	h2, err := m.DecapsulateKey(sh, mech, priv, open, ct)
	if err != nil {
		t.Fatalf("C_DecapsulateKey: %v", err)
	}
	r1, err1 := m.GetAttributeValue(sh, h1, []uint64{ck.CKA_VALUE})
	r2, err2 := m.GetAttributeValue(sh, h2, []uint64{ck.CKA_VALUE})
	if err1 != nil || err2 != nil || len(r1[0].Value) != 32 || !bytes.Equal(r1[0].Value, r2[0].Value) {
		t.Fatalf("ML-KEM-768: encapsulated %x, decapsulated %x (%v, %v)", r1[0].Value, r2[0].Value, err1, err2)
	}
	ex.mark("mechtype-0x17", "other flags=0x30000000") // CKF_ENCAPSULATE | CKF_DECAPSULATE
}
