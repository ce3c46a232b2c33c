package clients

import (
	"bytes"
	"testing"
)

// TestECDHOpenSSLEngine: OpenSSL derives an ECDH secret with a P-256 key on
// the token through libp11's engine (`openssl pkeyutl -derive -engine
// pkcs11`, which calls C_DeriveKey with CKM_ECDH1_DERIVE), and OpenSSL gets
// the same secret on the peer's side with the token's public key (as
// with SoftHSMv2).
func TestECDHOpenSSLEngine(t *testing.T) {
	tk := newToken(t)
	tk.p11Login("--keypairgen", "--key-type", "EC:prime256v1", "--usage-derive", "--id", "32", "--label", "ecdh")
	tokenPub, _ := tk.publicKey("32")
	peer := tk.path("peer.pem")
	tk.mustRun("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", peer)
	peerPub := tk.path("peer-pub.pem")
	tk.mustRun("openssl", "pkey", "-in", peer, "-pubout", "-out", peerPub)
	tk.mustRunEnv(tk.engineEnv(), "openssl", "pkeyutl", "-derive", "-engine", "pkcs11", "-keyform", "engine",
		"-inkey", tk.uri("ecdh", "private", true), "-peerkey", peerPub, "-out", tk.path("token.bin"))
	tk.mustRun("openssl", "pkeyutl", "-derive", "-inkey", peer, "-peerkey", tokenPub, "-out", tk.path("peer.bin"))
	got, want := tk.read("token.bin"), tk.read("peer.bin")
	if len(want) != 32 || !bytes.Equal(got, want) {
		t.Fatalf("the token's secret %x, OpenSSL's %x", got, want)
	}
}
