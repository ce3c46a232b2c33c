package clients

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"testing"
)

// TestEd25519GnuTLS: an Ed25519 key made by pkcs11-tool (CKA_EC_PARAMS the
// name "edwards25519") signs a self-signed certificate through GnuTLS's
// certtool; certtool and OpenSSL verify it, and its key is the token's.
// (p11tool 3.7.9 cannot generate Ed25519 keys on a token: it asks
// C_GenerateKeyPair for CKM_EDDSA, which SoftHSMv2 refuses too.)
func TestEd25519GnuTLS(t *testing.T) {
	needTools(t, "certtool")
	tk := newToken(t)
	tk.genEC("25", "ed-gnutls", "edwards25519")
	_, onToken := tk.publicKey("25")
	c := tk.certtoolSelfSigned(tk.uri("ed-gnutls", "private", false), "ed25519 test")
	pub, ok := c.PublicKey.(ed25519.PublicKey)
	if !ok || c.SignatureAlgorithm != x509.PureEd25519 || !bytes.Equal(pub, onToken.(ed25519.PublicKey)) {
		t.Fatalf("certificate: %v key %T, not the token's Ed25519 key", c.SignatureAlgorithm, c.PublicKey)
	}
}
