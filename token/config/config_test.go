package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		src     string
		wantErr bool
		check   func(t *testing.T, c *Config)
	}{
		{"minimal", "[[slot]]\ntoken_file = \"a.db\"\n", false, func(t *testing.T, c *Config) {
			s := c.Slots[0]
			if s.Label != DefaultLabel || s.Engine != "soft" || s.Fallback != FallbackFail || !s.Blinding() ||
				s.KeyPolicy != KeyPolicySafe || s.StandardKeyPolicy() {
				t.Fatalf("defaults: %+v", s)
			}
			if s.TokenFile != filepath.Join(dir, "a.db") || s.ID != DeriveSlotID(s.TokenFile) || s.ID == 0 {
				t.Fatalf("path/id: %+v", s)
			}
		}},
		{"full", `log = "m.log"
log_level = "debug"
[[slot]]
id = 7
label = "Chip"
token_file = "/abs/t.db"
engine = "chip:pukcc"
fallback = "soft"
exponent_blinding = false
log = "s.log"
max_pin_tries = 5
lock_timeout = "250ms"
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
`, false, func(t *testing.T, c *Config) {
			s := c.Slots[0]
			if s.ID != 7 || s.Engine != "chip:pukcc" || s.Fallback != FallbackSoft || s.Blinding() ||
				s.LockTimeout.Milliseconds() != 250 || s.Log != filepath.Join(dir, "s.log") || c.Log != filepath.Join(dir, "m.log") {
				t.Fatalf("%+v", s)
			}
		}},
		{"fallback fail", "[[slot]]\ntoken_file = \"a.db\"\nfallback = \"fail\"\n", false, func(t *testing.T, c *Config) {
			if c.Slots[0].Fallback != FallbackFail {
				t.Fatalf("fallback %q", c.Slots[0].Fallback)
			}
		}},
		{"fallback none is fail", "[[slot]]\ntoken_file = \"a.db\"\nfallback = \"none\"\n", false, func(t *testing.T, c *Config) {
			if c.Slots[0].Fallback != FallbackFail {
				t.Fatalf("fallback %q", c.Slots[0].Fallback)
			}
		}},
		{"engines pool", "[[slot]]\ntoken_file = \"a.db\"\nengines = [\"device:unix:/a\", \"device:unix:/b,timeout=2s\"]\n", false, func(t *testing.T, c *Config) {
			if s := c.Slots[0]; s.Engine != "pool:device:unix:/a|device:unix:/b,timeout=2s" || s.Engines != nil {
				t.Fatalf("engine %q engines %q", s.Engine, s.Engines)
			}
		}},
		{"engines one", "[[slot]]\ntoken_file = \"a.db\"\nengines = [\"chip:pukcc\"]\n", false, func(t *testing.T, c *Config) {
			if s := c.Slots[0]; s.Engine != "chip:pukcc" {
				t.Fatalf("engine %q", s.Engine)
			}
		}},
		{"key policy standard", "[[slot]]\ntoken_file = \"a.db\"\nkey_policy = \"standard\"\n", false, func(t *testing.T, c *Config) {
			if !c.Slots[0].StandardKeyPolicy() {
				t.Fatalf("key_policy %q", c.Slots[0].KeyPolicy)
			}
		}},
		{"key policy safe", "[[slot]]\ntoken_file = \"a.db\"\nkey_policy = \"safe\"\n", false, func(t *testing.T, c *Config) {
			if c.Slots[0].StandardKeyPolicy() {
				t.Fatalf("key_policy %q", c.Slots[0].KeyPolicy)
			}
		}},
		{"bad key policy", "[[slot]]\ntoken_file = \"a.db\"\nkey_policy = \"lax\"\n", true, nil},
		{"engine and engines", "[[slot]]\ntoken_file = \"a.db\"\nengine = \"soft\"\nengines = [\"chip:pukcc\"]\n", true, nil},
		{"engines nested pool", "[[slot]]\ntoken_file = \"a.db\"\nengines = [\"pool:soft|chip:pukcc\", \"soft\"]\n", true, nil},
		{"engines separator", "[[slot]]\ntoken_file = \"a.db\"\nengines = [\"soft|chip:pukcc\"]\n", true, nil},
		{"engines empty member", "[[slot]]\ntoken_file = \"a.db\"\nengines = [\"\", \"soft\"]\n", true, nil},
		{"no slots", `log_level = "info"`, true, nil},
		{"unknown key", "[[slot]]\ntoken_file = \"a.db\"\nengnie = \"soft\"\n", true, nil},
		{"missing token file", "[[slot]]\nlabel = \"x\"\n", true, nil},
		{"bad fallback", "[[slot]]\ntoken_file = \"a.db\"\nfallback = \"maybe\"\n", true, nil},
		{"bad level", "log_level = \"loud\"\n[[slot]]\ntoken_file = \"a.db\"\n", true, nil},
		{"shared file", "[[slot]]\ntoken_file = \"a.db\"\n[[slot]]\ntoken_file = \"./a.db\"\n", true, nil},
		{"shared id", "[[slot]]\nid = 3\ntoken_file = \"a.db\"\n[[slot]]\nid = 3\ntoken_file = \"b.db\"\n", true, nil},
		{"partial kdf", "[[slot]]\ntoken_file = \"a.db\"\nkdf_time = 1\n", true, nil},
		{"long label", "[[slot]]\ntoken_file = \"a.db\"\nlabel = \"123456789012345678901234567890123\"\n", true, nil},
		{"bad duration", "[[slot]]\ntoken_file = \"a.db\"\nlock_timeout = \"soon\"\n", true, nil},
		{"not toml", "[[slot", true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.src), dir)
			if c.wantErr {
				if err == nil {
					t.Fatalf("accepted: %+v", cfg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg)
		})
	}
}

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvConf, "")
	t.Setenv(EnvEngine, "")
	t.Setenv(EnvLog, "")
	t.Setenv(EnvLogLevel, "")
	t.Setenv("XDG_DATA_HOME", dir)
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Slots) != 1 || c.Slots[0].TokenFile != filepath.Join(dir, "modexp-token", "token.db") {
		t.Fatalf("default: %+v", c.Slots)
	}
	// Relative XDG_DATA_HOME is ignored (XDG spec): home fallback.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "relative")
	c, err = FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Slots[0].TokenFile != filepath.Join(home, ".local", "share", "modexp-token", "token.db") {
		t.Fatalf("fallback: %s", c.Slots[0].TokenFile)
	}
	conf := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(conf, []byte("[[slot]]\ntoken_file = \"a.db\"\n[[slot]]\ntoken_file = \"b.db\"\nengine = \"chip:x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvConf, conf)
	t.Setenv(EnvEngine, "device:unix:/run/x.sock")
	t.Setenv(EnvLogLevel, "warn")
	c, err = FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Slots {
		if s.Engine != "device:unix:/run/x.sock" {
			t.Fatalf("engine override: %s", s.Engine)
		}
	}
	if c.Slots[0].ID == c.Slots[1].ID {
		t.Fatal("slot ids collide")
	}
	t.Setenv(EnvConf, filepath.Join(dir, "missing.toml"))
	if _, err := FromEnv(); err == nil {
		t.Fatal("missing configuration file accepted")
	}
	t.Setenv(EnvConf, conf)
	t.Setenv(EnvLogLevel, "chatty")
	if _, err := FromEnv(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad level: %v", err)
	}
}

func TestSlotIDStable(t *testing.T) {
	a := DeriveSlotID("/x/token.db")
	if a != DeriveSlotID("/x/./token.db") || a == DeriveSlotID("/y/token.db") || a >= 1<<31 {
		t.Fatal("slot id derivation")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("[[slot]]\ntoken_file = \"a.db\"\n"))
	f.Add([]byte("log = \"x\"\n[[slot]]\nid = 1\ntoken_file = \"/a\"\nlock_timeout = \"1s\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b, "/base")
		if err != nil {
			return
		}
		if len(c.Slots) == 0 {
			t.Fatal("accepted without slots")
		}
		for _, s := range c.Slots {
			if s.ID == 0 || !filepath.IsAbs(s.TokenFile) || s.Engine == "" {
				t.Fatalf("unnormalised slot %+v", s)
			}
		}
	})
}

func TestParseEtcdSlot(t *testing.T) {
	dir := t.TempDir()
	c, err := Parse([]byte(`[[slot]]
etcd_endpoints = ["https://10.0.0.1:2379", "https://10.0.0.2:2379"]
etcd_prefix = "/tokens/signing/"
etcd_ca = "ca.pem"
etcd_cert = "client.pem"
etcd_key = "client-key.pem"
etcd_request_timeout = "2s"

[[slot]]
etcd_endpoints = ["https://10.0.0.1:2379"]
etcd_prefix = "/tokens/tls/"
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Slots[0]
	if !s.Etcd() || s.StoreName() != "etcd:/tokens/signing/" || s.EtcdCA != filepath.Join(dir, "ca.pem") ||
		s.EtcdRequestTimeout.Seconds() != 2 || s.ID != DeriveSlotID("etcd:/tokens/signing/") || s.ID == c.Slots[1].ID {
		t.Fatalf("etcd slot: %+v", s)
	}
	for name, src := range map[string]string{
		"no prefix":     "[[slot]]\netcd_endpoints = [\"http://127.0.0.1:2379\"]\n",
		"file and etcd": "[[slot]]\ntoken_file = \"a.db\"\netcd_endpoints = [\"http://127.0.0.1:2379\"]\netcd_prefix = \"/t/\"\n",
		"cert no key":   "[[slot]]\netcd_endpoints = [\"http://127.0.0.1:2379\"]\netcd_prefix = \"/t/\"\netcd_cert = \"c.pem\"\n",
		"same prefix":   "[[slot]]\netcd_endpoints = [\"http://a:2379\"]\netcd_prefix = \"/t/\"\n[[slot]]\netcd_endpoints = [\"http://b:2379\"]\netcd_prefix = \"/t/\"\n",
	} {
		if _, err := Parse([]byte(src), dir); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReferenceComplete: every key of Config and Slot is documented, and
// every documented key exists, so the generated reference (docs/CONFIG.md,
// modexp-token.toml(5)) lists exactly the keys Parse takes.
func TestReferenceComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Reference() {
		id := k.Section + "." + k.Name
		seen[id] = true
		if k.Doc == "" || k.Default == "" || k.Type == "" {
			t.Errorf("key %s: doc %q, default %q, type %q: add it to keyDocs (reference.go)", id, k.Doc, k.Default, k.Type)
		}
		if strings.HasPrefix(k.Type, "*") || strings.Contains(k.Type, ".") {
			t.Errorf("key %s: type %q has no TOML name (typeName)", id, k.Type)
		}
	}
	for id := range keyDocs {
		if !seen[id] {
			t.Errorf("keyDocs documents %s, which is no key", id)
		}
	}
}

// TestPINCacheKeys: pin_cache and pin_cache_lifetime, their defaults and
// their refusals.
func TestPINCacheKeys(t *testing.T) {
	cases := []struct {
		name, body string
		cache      string
		life       time.Duration
		bad        bool
	}{
		{"defaults", "", PINCacheKeyring, DefaultPINCacheLifetime, false},
		{"process", "pin_cache = \"process\"\npin_cache_lifetime = \"90s\"\n", PINCacheProcess, 90 * time.Second, false},
		{"off", "pin_cache = \"off\"\n", PINCacheOff, DefaultPINCacheLifetime, false},
		{"keyring, a day", "pin_cache = \"keyring\"\npin_cache_lifetime = \"24h\"\n", PINCacheKeyring, 24 * time.Hour, false},
		{"unknown mode", "pin_cache = \"yes\"\n", "", 0, true},
		{"negative lifetime", "pin_cache_lifetime = \"-1s\"\n", "", 0, true},
		{"lifetime too long", "pin_cache_lifetime = \"25h\"\n", "", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte("[[slot]]\ntoken_file = \"/tmp/x.db\"\n"+c.body), "")
			if c.bad {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("Parse: %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := cfg.Slots[0]; s.PINCache != c.cache || s.PINCacheLifetime.Duration != c.life {
				t.Fatalf("pin_cache %q, lifetime %v; want %q, %v", s.PINCache, s.PINCacheLifetime.Duration, c.cache, c.life)
			}
		})
	}
}

// TestECDSACheckKey: ecdsa_check, its default and its refusal.
func TestECDSACheckKey(t *testing.T) {
	cases := []struct {
		name, body, want string
		bad              bool
	}{
		{"default", "", ECDSACheckRelation, false},
		{"relation", "ecdsa_check = \"relation\"\n", ECDSACheckRelation, false},
		{"verify", "ecdsa_check = \"verify\"\n", ECDSACheckVerify, false},
		{"unknown", "ecdsa_check = \"none\"\n", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte("[[slot]]\ntoken_file = \"/tmp/x.db\"\n"+c.body), "")
			switch {
			case c.bad && !errors.Is(err, ErrInvalid):
				t.Fatalf("Parse: %v, want ErrInvalid", err)
			case c.bad:
			case err != nil:
				t.Fatal(err)
			case cfg.Slots[0].ECDSACheck != c.want:
				t.Fatalf("ecdsa_check %q, want %q", cfg.Slots[0].ECDSACheck, c.want)
			}
		})
	}
}
