package clients

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"testing"
)

// TestPkcs11toolWrap wraps and unwraps with pkcs11-tool (--wrap, --unwrap):
// an AES key under an imported AES key encryption key with
// CKM_AES_KEY_WRAP (RFC 3394) and CKM_AES_KEY_WRAP_PAD (0x210A, RFC 5649),
// each wrap checked against `openssl enc -id-aes256-wrap(-pad)` with the
// same KEK, and unwrapped back into a key of the same value.
func TestPkcs11toolWrap(t *testing.T) {
	if moduleKind(t) != kindModExp {
		// Measured: SoftHSMv2 2.6.1's wraps match openssl's, but it refuses
		// pkcs11-tool 0.23's unwrap template (CKR_ATTRIBUTE_READ_ONLY).
		t.Skip("SoftHSMv2 2.6 refuses pkcs11-tool's --unwrap template")
	}
	needTools(t, "pkcs11-tool", "openssl")
	tk := newToken(t)
	kek := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	tk.write("kek.bin", string(kek))
	tk.p11Login("--write-object", tk.path("kek.bin"), "--type", "secrkey", "--key-type", "AES:32", "--id", "20",
		"--label", "kek", "--usage-wrap")
	tk.p11Login("--keygen", "--key-type", "AES:16", "--id", "21", "--label", "target", "--extractable")
	tk.p11Login("--read-object", "--type", "secrkey", "--id", "21", "--output-file", tk.path("target.bin"))
	target := tk.read("target.bin")
	if len(target) != 16 {
		t.Fatalf("target key of %d bytes", len(target))
	}
	for i, c := range []struct{ mech, cipher, iv string }{
		{"AES-KEY-WRAP", "-id-aes256-wrap", "A6A6A6A6A6A6A6A6"},
		{"0x210A", "-id-aes256-wrap-pad", "A65959A6"},
	} {
		t.Run(c.mech, func(t *testing.T) {
			tk := tk.with(t)
			w := "wrapped-" + c.mech
			tk.p11Login("--wrap", "--mechanism", c.mech, "--id", "20", "--application-id", "21", "--output-file", tk.path(w))
			want := tk.mustRun("openssl", "enc", c.cipher, "-K", hex.EncodeToString(kek), "-iv", c.iv, "-in", tk.path("target.bin")).stdout
			if got := tk.read(w); !bytes.Equal(got, []byte(want)) {
				t.Fatalf("pkcs11-tool --wrap: %x, openssl: %x", got, want)
			}
			id := []string{"30", "31"}[i]
			tk.p11Login("--unwrap", "--mechanism", c.mech, "--id", "20", "--input-file", tk.path(w), "--key-type", "AES:16",
				"--application-id", id, "--application-label", "unwrapped", "--extractable")
			tk.p11Login("--read-object", "--type", "secrkey", "--id", id, "--output-file", tk.path("back-"+id))
			if got := tk.read("back-" + id); !bytes.Equal(got, target) {
				t.Fatalf("unwrapped key %x, want %x", got, target)
			}
		})
	}
}
