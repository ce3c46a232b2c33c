package main

import (
	"os"
	"strings"
	"testing"
)

// TestConfigReference: the checked-in docs/CONFIG.md and
// modexp-token.toml(5) are what the generator makes of the configuration
// code now, and they name every key.
func TestConfigReference(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string
		key  func(name string) string
	}{
		{"../../docs/CONFIG.md", configMarkdown(), func(n string) string { return "| `" + n + "` |" }},
		{"../../dist/man/modexp-token.toml.5", configMan(), func(n string) string { return ".BR " + roff(n) + " " }},
	} {
		got, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatalf("%v (go generate ./cmd/modexp-token writes it)", err)
		}
		if string(got) != tc.want {
			t.Errorf("%s differs from what the configuration code gives: run go generate ./cmd/modexp-token", tc.path)
		}
		for _, k := range configKeys() {
			if !strings.Contains(tc.want, tc.key(k.Name)) {
				t.Errorf("%s does not list key %s", tc.path, k.Name)
			}
			if k.Default == "keystore" || k.Default == "" {
				t.Errorf("key %s has no default figure", k.Name)
			}
		}
	}
}
