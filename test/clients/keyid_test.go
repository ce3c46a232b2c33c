package clients

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// TestKeyIDLikeP11tool checks that modexp-token gives a key the ID p11tool
// gives it: p11tool --write (without --id) stores an openssl key on the
// token; its CKA_ID is the SHA-1 of the key's SubjectPublicKeyInfo (computed
// here from openssl's DER), and `modexp-token keys import` of the same file
// derives the same ID, so it refuses the import as a duplicate of p11tool's
// object.
func TestKeyIDLikeP11tool(t *testing.T) {
	t.Parallel()
	if moduleKind(t) != kindModExp {
		t.Skip("modexp-token administers our token only")
	}
	needTools(t, "p11tool", "openssl")
	tk := newToken(t)
	cli := ourCLI(t)
	pinEnv := []string{"MODEXP_TOKEN_PIN=" + userPIN}
	for _, k := range []struct{ name, alg string }{
		{"rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048"},
		{"ec", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256"},
	} {
		t.Run(k.name, func(t *testing.T) {
			tk := tk.with(t)
			key := tk.path(k.name + ".pem")
			tk.mustRun("openssl", append(append([]string{"genpkey"}, strings.Fields(k.alg)...), "-out", key)...)
			spki := tk.mustRun("openssl", "pkey", "-in", key, "-pubout", "-outform", "DER").stdout
			sum := sha1.Sum([]byte(spki))
			want := hex.EncodeToString(sum[:])

			label := "p11tool-" + k.name
			tk.gnutls("p11tool", "--provider", tk.module, "--login", "--write", "--load-privkey", key,
				"--label", label, "pkcs11:token="+tokenLabel)
			r := tk.runEnv(pinEnv, nil, cli, "keys", "list", "--json", "--label", label)
			if r.err != nil {
				t.Fatalf("keys list: %v\n%s", r.err, r.combined())
			}
			var objs []struct{ Class, ID string }
			if err := json.Unmarshal([]byte(r.stdout), &objs); err != nil {
				t.Fatalf("keys list --json: %v\n%s", err, r.stdout)
			}
			if len(objs) == 0 {
				t.Fatalf("p11tool's key not listed:\n%s", r.combined())
			}
			for _, o := range objs {
				if o.ID != want {
					t.Errorf("p11tool gave the %s object ID %s, want SHA-1(SPKI) %s", o.Class, o.ID, want)
				}
			}
			r = tk.runEnv(pinEnv, nil, cli, "keys", "import", "--file", key, "--label", "ours")
			if r.err == nil || !strings.Contains(r.stderr, "ID "+want+" is already used") || !strings.Contains(r.stderr, label) {
				t.Errorf("modexp-token keys import of the same key: %v, want a refusal naming ID %s and %s:\n%s",
					r.err, want, label, r.combined())
			}
		})
	}
}
