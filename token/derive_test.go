package token

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestDeriveKeyRefusals checks the answers of C_DeriveKey that come before
// any mechanism's work.
func TestDeriveKeyRefusals(t *testing.T) {
	m, _, sh := readyToken(t)
	_, priv := genEC(t, m, sh, "P-256", false)
	_, err := m.DeriveKey(sh, nil, priv, nil)
	wantRV(t, err, ck.CKR_ARGUMENTS_BAD)
	_, err = m.DeriveKey(sh, &Mechanism{Type: ck.CKM_SHA256}, priv, nil)
	wantRV(t, err, ck.CKR_MECHANISM_INVALID)
	_, err = m.DeriveKey(sh, &Mechanism{Type: ck.CKM_ECDSA}, priv, nil)
	wantRV(t, err, ck.CKR_MECHANISM_INVALID)
	_, err = m.DeriveKey(sh+100, &Mechanism{Type: ck.CKM_ECDSA}, priv, nil)
	wantRV(t, err, ck.CKR_SESSION_HANDLE_INVALID)
}
