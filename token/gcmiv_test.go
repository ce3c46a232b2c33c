package token

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// forgetGCMIVs empties m's window of caller GCM IVs. Only known-answer
// tests call it: they encrypt one vector (one key, one IV) more than once on
// purpose, to compare single- and multi-part results (docs/THREATS.md, GCM).
func forgetGCMIVs(m *Module) {
	m.gcmIVs.reset()
}

// TestGCMRepeatedIVRefused: a caller IV this key object already encrypted
// with is refused at C_EncryptInit (CKR_MECHANISM_PARAM_INVALID), for the
// same key object only; decryption with it stays allowed; the window
// forgets the oldest IV past gcmIVWindow.
func TestGCMRepeatedIVRefused(t *testing.T) {
	m, _, sh := readyToken(t)
	val := bytes.Repeat([]byte{7}, 16)
	key, err := secretKeyOf(m, sh, ck.CKK_AES, val)
	must(t, err)
	other, err := secretKeyOf(m, sh, ck.CKK_AES, val) // same value, another object
	must(t, err)
	b, _ := aes.NewCipher(val)
	g, _ := cipher.NewGCM(b)
	iv := []byte("twelve bytes")
	msg := []byte("attack at dawn")
	want := g.Seal(nil, iv, msg, nil)

	got, err := cryptOnce(m, sh, mech.OpEncrypt, gcmMech(iv, nil, 128), key, msg)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("first encryption: %x %v, want %x", got, err, want)
	}
	cases := []struct {
		name string
		kind mech.OpKind
		key  uint64
		iv   []byte
		rv   ck.Error
	}{
		{"same key, same IV", mech.OpEncrypt, key, iv, ck.CKR_MECHANISM_PARAM_INVALID},
		{"same key, same IV again", mech.OpEncrypt, key, iv, ck.CKR_MECHANISM_PARAM_INVALID},
		{"decrypt with the IV", mech.OpDecrypt, key, iv, 0},
		{"another object, same IV", mech.OpEncrypt, other, iv, 0},
		{"same key, another IV", mech.OpEncrypt, key, []byte("twelve bytez"), 0},
		{"same key, IV of another length", mech.OpEncrypt, key, iv[:11], 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.kind == mech.OpEncrypt {
				err = m.EncryptInit(sh, gcmMech(c.iv, nil, 128), c.key)
				if err == nil {
					_, _, err = m.Encrypt(sh, msg, Out{Cap: len(msg) + 16})
				}
			} else {
				var pt []byte
				pt, err = cryptOnce(m, sh, mech.OpDecrypt, gcmMech(c.iv, nil, 128), c.key, want)
				if err == nil && !bytes.Equal(pt, msg) {
					t.Fatalf("decrypted %x", pt)
				}
			}
			wantRV(t, err, c.rv)
			if err != nil {
				// Refused before any output: no operation is left.
				_, _, err := m.Encrypt(sh, msg, Out{Query: true})
				wantRV(t, err, ck.CKR_OPERATION_NOT_INITIALIZED)
			}
		})
	}
	// A length query and its retry are one encryption, not a repeat.
	fresh := []byte("fresh IV 12b")
	must(t, m.EncryptInit(sh, gcmMech(fresh, nil, 128), key))
	_, need, err := m.Encrypt(sh, msg, Out{Query: true})
	must(t, err)
	_, _, err = m.Encrypt(sh, msg, Out{Cap: need})
	must(t, err)

	// The window is bounded: after gcmIVWindow newer IVs the first is
	// forgotten, and one just inside the window is still refused.
	k2, err := secretKeyOf(m, sh, ck.CKK_AES, val)
	must(t, err)
	ivN := func(i int) []byte { return fmt.Appendf(nil, "%012d", i) }
	for i := range mech.GCMIVWindow + 1 {
		must(t, m.EncryptInit(sh, gcmMech(ivN(i), nil, 128), k2))
		must(t, m.SessionCancel(sh, ck.CKF_ENCRYPT))
	}
	err = m.EncryptInit(sh, gcmMech(ivN(1), nil, 128), k2)
	wantRV(t, err, ck.CKR_MECHANISM_PARAM_INVALID)
	must(t, m.EncryptInit(sh, gcmMech(ivN(0), nil, 128), k2))
	must(t, m.SessionCancel(sh, ck.CKF_ENCRYPT))
	if n := m.gcmIVs.held(gcmKeyID{slot: m.slots[0].id, handle: k2}); n != mech.GCMIVWindow {
		t.Fatalf("window holds %d IVs, want %d", n, mech.GCMIVWindow)
	}
}

// TestGCMWindowKeysBounded: at most gcmIVKeys keys are remembered; the one
// used least recently is forgotten first.
func TestGCMWindowKeysBounded(t *testing.T) {
	var w gcmIVs
	iv := []byte{1}
	for k := range uint64(gcmIVKeys) {
		if !w.use(gcmKeyID{handle: k}, iv) {
			t.Fatalf("key %d: fresh IV refused", k)
		}
	}
	if w.use(gcmKeyID{handle: 0}, iv) { // key 0 is now the most recent
		t.Fatal("repeat on key 0 accepted")
	}
	if !w.use(gcmKeyID{handle: gcmIVKeys}, iv) { // evicts key 1
		t.Fatal("new key refused")
	}
	if w.n != gcmIVKeys {
		t.Fatalf("%d keys remembered, want %d", w.n, gcmIVKeys)
	}
	if w.use(gcmKeyID{handle: 0}, iv) {
		t.Fatal("key 0 was evicted, want key 1")
	}
	if !w.use(gcmKeyID{handle: 1}, iv) {
		t.Fatal("key 1 still remembered")
	}
}

// TestGCMCallerIVSwitch: gcm_caller_iv = false refuses every caller IV for
// encryption at C_EncryptInit, fresh or not; decryption stays; the default
// takes a fresh caller IV.
func TestGCMCallerIVSwitch(t *testing.T) {
	val := bytes.Repeat([]byte{3}, 16)
	b, _ := aes.NewCipher(val)
	g, _ := cipher.NewGCM(b)
	iv, msg := []byte("twelve bytes"), []byte("attack at dawn")
	ct := g.Seal(nil, iv, msg, nil)
	for _, c := range []struct {
		name  string
		extra string
		encRV ck.Error
	}{
		{"default", "", 0},
		{"gcm_caller_iv = true", "gcm_caller_iv = true\n", 0},
		{"gcm_caller_iv = false", "gcm_caller_iv = false\n", ck.CKR_MECHANISM_PARAM_INVALID},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _, sh := readyTokenWith(t, c.extra)
			key, err := secretKeyOf(m, sh, ck.CKK_AES, val)
			must(t, err)
			out, err := cryptOnce(m, sh, mech.OpEncrypt, gcmMech(iv, nil, 128), key, msg)
			wantRV(t, err, c.encRV)
			if err == nil && !bytes.Equal(out, ct) {
				t.Fatalf("encrypted %x, want %x", out, ct)
			}
			pt, err := cryptOnce(m, sh, mech.OpDecrypt, gcmMech(iv, nil, 128), key, ct)
			must(t, err)
			if !bytes.Equal(pt, msg) {
				t.Fatalf("decrypted %x", pt)
			}
		})
	}
}
