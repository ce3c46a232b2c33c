package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/keystore"
)

// TestInitPINCost: --pin-cost stores its profile's Argon2id parameters in
// the token; an unknown profile, or one beside --kdf-*, is a usage error
// that changes nothing.
func TestInitPINCost(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want keystore.KDFParams
	}{
		{"floor", []string{"--pin-cost", "floor"}, 0, keystore.MinKDFParams},
		{"rfc9106", []string{"--pin-cost", "rfc9106"}, 0, keystore.RFC9106KDFParams},
		{"unknown", []string{"--pin-cost", "cheap"}, exitUsage, keystore.KDFParams{}},
		{"with --kdf-time", []string{"--pin-cost", "floor", "--kdf-time", "3", "--kdf-memory-kib", "65536", "--kdf-threads", "1"}, exitUsage, keystore.KDFParams{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "modexp-token.toml")
			// No kdf_* in the configuration: the profile alone decides.
			if err := os.WriteFile(conf, []byte("[[slot]]\nlabel = \"test\"\ntoken_file = \"token.db\"\nengine = \"soft\"\npin_cache = \"off\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("MODEXP_TOKEN_CONF", conf)
			t.Setenv("MODEXP_TOKEN_SO_PIN", "87654321")
			t.Setenv("MODEXP_TOKEN_PIN", "123456")
			t.Setenv("HOME", dir)
			ttyPath = os.DevNull + "/no-tty"
			var out, errOut bytes.Buffer
			code := run(append([]string{"init", "--label", "cost"}, c.args...), &out, &errOut)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out.String(), errOut.String())
			}
			st, err := keystore.Open(filepath.Join(dir, "token.db"), keystore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			info, err := st.Token()
			if c.code != 0 {
				if err == nil {
					t.Fatalf("token initialised by a refused init: %+v", info)
				}
				if !strings.Contains(errOut.String(), "--pin-cost") {
					t.Errorf("usage error does not name --pin-cost:\n%s", errOut.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.Policy.KDF != c.want {
				t.Fatalf("stored KDF %+v, want %+v", info.Policy.KDF, c.want)
			}
		})
	}
}
