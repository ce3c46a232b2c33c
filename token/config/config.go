// Package config reads the configuration of the ModExp Token PKCS#11 module:
// which slots exist, where each token file lives, which arithmetic engine
// serves each slot, and where the module logs.
//
// The package only parses and validates; it opens no engine and no token
// file, and it never prints. The token package turns a [Config] into slots.
//
// # Where the configuration comes from
//
// [FromEnv] reads the TOML file named by MODEXP_TOKEN_CONF. Without that
// variable the configuration is the built-in default: one slot labelled
// "ModExp Token", the software engine ("soft"), the token file
// $XDG_DATA_HOME/modexp-token/token.db (falling back to
// ~/.local/share/modexp-token/token.db when XDG_DATA_HOME is unset or not
// absolute). A named file that cannot be read or parsed is an error, never a
// silent default.
//
// Environment variables override the file:
//
//	MODEXP_TOKEN_CONF       path of the TOML file
//	MODEXP_TOKEN_ENGINE     engine spec for every slot (e.g. "soft", "chip:pukcc")
//	MODEXP_TOKEN_LOG        module log file (log/slog text lines, appended)
//	MODEXP_TOKEN_LOG_LEVEL  debug | info | warn | error (default info)
//
// # File format
//
//	# Module-wide log file and level (MODEXP_TOKEN_LOG / _LEVEL win).
//	log = "/var/log/modexp-token.log"
//	log_level = "info"
//
//	[[slot]]
//	id = 1                         # optional: fixed slot ID; default derived from token_file
//	label = "ModExp Token"         # label of the slot (and of the token until C_InitToken names it)
//	token_file = "/srv/token.db"   # relative paths are relative to this file; "~/" is expanded
//	engine = "soft"                # soft | chip:<profile> | device:unix:/path | device:tcp:host:port | pool:A|B
//	engines = ["device:unix:/a", "device:unix:/b"]  # instead of engine: spread the load over several
//	fallback = "fail"              # fail | soft: what happens when an engine result fails its check
//	exponent_blinding = true       # randomise the private exponent per operation (default true)
//	ecdsa_check = "relation"       # relation | verify: the check of each ECDSA signature before release
//	log = "/var/log/slot1.log"     # optional: this slot's own log file
//	max_pin_tries = 10             # wrong PINs before lockout (default: keystore's, 10)
//	lock_timeout = "5s"            # wait for the token file lock (default: keystore's, 5s)
//	kdf_time = 3                   # Argon2id passes for new PIN records (default: keystore's)
//	kdf_memory_kib = 65536         # Argon2id memory (default: keystore's); all three or none
//	kdf_threads = 4                # Argon2id lanes (default: keystore's)
//	kdf_insecure = false           # true: allow Argon2id below t=2, 19 MiB (tests only)
//	rsa_pkcs_decrypt = true        # CKM_RSA_PKCS decryption (implicit rejection); false: refused
//	gcm_caller_iv = true           # AES-GCM encryption with the caller's IV; false: refused
//	single_des = true              # the single-DES mechanisms (CKM_DES_*, 56-bit keys); false: not offered
//	key_policy = "safe"            # safe | standard: the key-management policy (docs/THREATS.md)
//
// max_pin_tries and the kdf_* parameters are stored in the token by
// C_InitToken (or `modexp-token init`, whose flags override them): they are
// the token's own policy. A later configuration can only make them
// stricter (fewer tries, a costlier Argon2id), never looser.
//
// Unknown keys are an error (a misspelt key must not be ignored). Two slots
// may not share a token file or a slot ID.
//
// `key_policy` is the key-management policy of the slot's keys
// (docs/THREATS.md, "Key-management policy"). "safe", the default,
// refuses the published ways to read a sensitive key through the API: a
// secret key that both wraps and decrypts or both unwraps and encrypts,
// usage flags turned on after creation, a self-wrap, a sensitive key
// wrapped under a key made outside the token or a weaker key, an
// unwrapped or derived key less protected than its source. "standard"
// allows all of it, as the PKCS#11 standard does, for the applications
// and test suites that rely on it.
//
// # Engines, pools and fallback
//
// `engine` names one engine. `engines` (a list, instead of `engine`) names
// several: the slot then runs on a pool (package engine/backend/pool) that sends
// each operation to the healthy member with the fewest operations in
// flight, so the two CRT halves of one RSA operation and concurrent
// sessions spread over the devices; a member that fails with a device
// error is skipped for a cool-down and the operation is retried on
// another; a member down at start joins when it comes up. A one-element
// list is the same as `engine`. Normalisation turns a longer list into the
// equivalent spec "pool:A|B|..." in Engine (which may also be written
// directly, or given in MODEXP_TOKEN_ENGINE, which replaces both keys).
//
// `fallback` is the policy when an engine's result fails the token's check
// before release (or the engine reports a device failure, or its
// known-answer test fails): "fail" answers CKR_DEVICE_ERROR; "soft" redoes
// the operation on the software engine and returns its checked result.
// Either way the fault is counted and logged, and a wrong result is never
// released. "none" is the old name of "fail" and is still accepted (it
// normalises to "fail").
//
// # Slot IDs
//
// A slot's ID is stable across runs and independent of the order of the
// slots: the configured id if given, otherwise derived from a hash of the
// token file's absolute path (31 bits, never 0).
package config

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Environment variables read by [FromEnv].
const (
	EnvConf     = "MODEXP_TOKEN_CONF"
	EnvEngine   = "MODEXP_TOKEN_ENGINE"
	EnvLog      = "MODEXP_TOKEN_LOG"
	EnvLogLevel = "MODEXP_TOKEN_LOG_LEVEL"
)

// Defaults.
const (
	DefaultLabel  = "ModExp Token"
	DefaultEngine = "soft"
	defaultFile   = "token.db"
	appDir        = "modexp-token"
)

// Fallback policies.
const (
	FallbackFail = "fail" // report a failing engine result as CKR_DEVICE_ERROR
	FallbackSoft = "soft" // redo the operation on the software engine
	// FallbackNone is the former name of FallbackFail, still accepted.
	FallbackNone = "none"
)

// Key-management policies (Slot.KeyPolicy).
const (
	KeyPolicySafe     = "safe"     // refuse the attacks on sensitive keys (default)
	KeyPolicyStandard = "standard" // the standard's permissive rules
)

// PoolSeparator separates the members of a pool spec ("pool:A|B").
const PoolSeparator = "|"

// ErrInvalid is wrapped by every validation error of a configuration.
var ErrInvalid = errors.New("config: invalid configuration")

// Config is the whole module configuration.
type Config struct {
	// Log is the module log file ("" = no log). MODEXP_TOKEN_LOG wins.
	Log string `toml:"log"`
	// LogLevel is the slog level name. MODEXP_TOKEN_LOG_LEVEL wins.
	LogLevel string `toml:"log_level"`
	// Slots, in the order of the file (the order of C_GetSlotList).
	Slots []Slot `toml:"slot"`

	// Source is the file the configuration was read from ("" = default).
	Source string `toml:"-"`
}

// Slot is one slot and its token.
type Slot struct {
	ID               uint64   `toml:"id"` // 0 = derive from TokenFile
	Label            string   `toml:"label"`
	TokenFile        string   `toml:"token_file"`
	Engine           string   `toml:"engine"`
	Engines          []string `toml:"engines"` // several engines: a pool (normalised into Engine)
	Fallback         string   `toml:"fallback"`
	ExponentBlinding *bool    `toml:"exponent_blinding"`
	Log              string   `toml:"log"`
	MaxPINTries      int      `toml:"max_pin_tries"`
	LockTimeout      Duration `toml:"lock_timeout"`
	// KDF: Argon2id parameters for PINs set through this slot (0 = the
	// keystore's defaults). Lowering them weakens PIN protection; tests use
	// kdf_time = 1, kdf_memory_kib = 64, kdf_threads = 1.
	KDFTime      uint32 `toml:"kdf_time"`
	KDFMemoryKiB uint32 `toml:"kdf_memory_kib"`
	KDFThreads   uint8  `toml:"kdf_threads"`
	// KDFInsecure allows Argon2id parameters below the keystore's floor
	// (keystore.MinKDFParams, t=2 and 19 MiB): for tests only.
	KDFInsecure bool `toml:"kdf_insecure"`
	// PINCache says where a right PIN is remembered after the login that
	// paid Argon2id, so that the same PIN again skips it (docs/THREATS.md
	// weighs each choice): "keyring" (the default) in the process and in
	// the kernel's user keyring (possessor-only, with a timeout: a new
	// process of the same user logs in in milliseconds; where keyctl is
	// refused, as in containers, the process only), "process" in the
	// process only, "off" nowhere (every login pays Argon2id).
	PINCache string `toml:"pin_cache"`
	// PINCacheLifetime is how long a right PIN is remembered after the
	// check that paid Argon2id (default 10m, gpg-agent's default cache
	// lifetime; at most 24h).
	PINCacheLifetime Duration `toml:"pin_cache_lifetime"`
	// ECDSACheck is the check of every ECDSA signature before release:
	// "relation" (the default: on P-256 k·G recomputed independently and
	// s·k ≡ e + r·d checked, the full verification on the other curves)
	// or "verify" (the full verification u1·G + u2·Q on every curve).
	ECDSACheck string `toml:"ecdsa_check"`
	// RSAPKCSDecrypt: CKM_RSA_PKCS decryption (and unwrapping) is offered
	// (default true). It answers a bad padding with a synthetic message
	// (implicit rejection, token/rsapad/implicit.go) rather than an error;
	// a deployment that needs no PKCS#1 v1.5 decryption turns it off, and
	// the mechanism then lists only sign, verify and encrypt.
	RSAPKCSDecrypt *bool `toml:"rsa_pkcs_decrypt"`
	// GCMCallerIV: CKM_AES_GCM encrypts with the IV the caller chose in
	// CK_GCM_PARAMS (default true, as the standard). false refuses a
	// caller IV for encryption (CKR_MECHANISM_PARAM_INVALID), so that
	// only IVs the token makes are used; decryption is unaffected.
	GCMCallerIV *bool `toml:"gcm_caller_iv"`
	// SingleDES: the single-DES mechanisms (CKM_DES_KEY_GEN, CKM_DES_ECB,
	// CKM_DES_CBC, CKM_DES_CBC_PAD and the DES derivations) are offered
	// (default true, as SoftHSMv2 and the clients and test suites that
	// make DES keys expect). A 56-bit key falls to exhaustive search: a
	// deployment that needs no DES turns it off. Triple DES stays.
	SingleDES *bool `toml:"single_des"`
	// KeyPolicy is the key-management policy: KeyPolicySafe (the
	// default, also written "") or KeyPolicyStandard (see the package
	// doc).
	KeyPolicy string `toml:"key_policy"`

	// The token in an etcd cluster instead of a file (docs/FLEET.md):
	// EtcdEndpoints (client URLs) with EtcdPrefix (the token's key
	// prefix: one token per prefix), and optional client TLS (CA bundle,
	// client certificate and key). token_file is then not used.
	EtcdEndpoints []string `toml:"etcd_endpoints"`
	EtcdPrefix    string   `toml:"etcd_prefix"`
	EtcdCA        string   `toml:"etcd_ca"`
	EtcdCert      string   `toml:"etcd_cert"`
	EtcdKey       string   `toml:"etcd_key"`
	// EtcdDialTimeout and EtcdRequestTimeout bound connecting and each
	// request (default 3s each): an unreachable cluster is an error
	// after them, never a hang.
	EtcdDialTimeout    Duration `toml:"etcd_dial_timeout"`
	EtcdRequestTimeout Duration `toml:"etcd_request_timeout"`
	// EtcdConnectBudget bounds the first contact with the cluster when the
	// module loads (default 1s, DefaultEtcdConnectBudget): a slot whose
	// cluster does not answer within it, or refuses access, is marked
	// unusable with its cause while the other slots load, and is tried
	// again in the background (docs/FLEET.md).
	EtcdConnectBudget Duration `toml:"etcd_connect_budget"`
}

// DefaultEtcdConnectBudget is etcd_connect_budget's default.
const DefaultEtcdConnectBudget = time.Second

// ConnectBudget is the slot's etcd_connect_budget, or its default.
func (s Slot) ConnectBudget() time.Duration {
	if s.EtcdConnectBudget.Duration > 0 {
		return s.EtcdConnectBudget.Duration
	}
	return DefaultEtcdConnectBudget
}

// Values of Slot.ECDSACheck.
const (
	ECDSACheckRelation = "relation"
	ECDSACheckVerify   = "verify"
)

// Values of Slot.PINCache, and the lifetime's default and bound.
const (
	PINCacheKeyring = "keyring"
	PINCacheProcess = "process"
	PINCacheOff     = "off"

	DefaultPINCacheLifetime = 10 * time.Minute
	MaxPINCacheLifetime     = 24 * time.Hour
)

// Etcd reports whether the slot's token is in an etcd cluster.
func (s Slot) Etcd() bool { return len(s.EtcdEndpoints) > 0 }

// StoreName names the slot's token store in messages: the token file, or
// etcd:PREFIX.
func (s Slot) StoreName() string {
	if s.Etcd() {
		return "etcd:" + s.EtcdPrefix
	}
	return s.TokenFile
}

// RSAPKCSDecryptOn reports whether CKM_RSA_PKCS decryption is offered
// (default true).
func (s Slot) RSAPKCSDecryptOn() bool { return s.RSAPKCSDecrypt == nil || *s.RSAPKCSDecrypt }

// GCMCallerIVOn reports whether AES-GCM encryption takes the caller's IV
// (default true).
func (s Slot) GCMCallerIVOn() bool { return s.GCMCallerIV == nil || *s.GCMCallerIV }

// StandardKeyPolicy reports whether the slot runs the standard's
// permissive key-management policy rather than the safe one (default).
func (s Slot) StandardKeyPolicy() bool { return s.KeyPolicy == KeyPolicyStandard }

// SingleDESOn reports whether the single-DES mechanisms are offered
// (default true).
func (s Slot) SingleDESOn() bool { return s.SingleDES == nil || *s.SingleDES }

// Blinding reports whether exponent blinding is on (default true).
func (s Slot) Blinding() bool { return s.ExponentBlinding == nil || *s.ExponentBlinding }

// Duration is a time.Duration written as a Go duration string ("5s").
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("config: duration %q: %w", b, err)
	}
	if v < 0 {
		return fmt.Errorf("%w: negative duration %q", ErrInvalid, b)
	}
	d.Duration = v
	return nil
}

// Level returns the slog level named by LogLevel (info when empty).
func (c *Config) Level() (slog.Level, error) {
	var l slog.Level
	if c.LogLevel == "" {
		return slog.LevelInfo, nil
	}
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return 0, fmt.Errorf("%w: log_level %q: %v", ErrInvalid, c.LogLevel, err)
	}
	return l, nil
}

// FromEnv builds the configuration from the environment (see the package
// doc): the file named by MODEXP_TOKEN_CONF or the default, then the
// environment overrides, then validation.
func FromEnv() (*Config, error) {
	var c *Config
	if path := os.Getenv(EnvConf); path != "" {
		var err error
		if c, err = Load(path); err != nil {
			return nil, err
		}
	} else {
		file, err := DefaultTokenFile()
		if err != nil {
			return nil, err
		}
		c = &Config{Slots: []Slot{{TokenFile: file}}}
	}
	if v := os.Getenv(EnvEngine); v != "" {
		for i := range c.Slots {
			c.Slots[i].Engine, c.Slots[i].Engines = v, nil
		}
	}
	if v := os.Getenv(EnvLog); v != "" {
		c.Log = v
	}
	if v := os.Getenv(EnvLogLevel); v != "" {
		c.LogLevel = v
	}
	if err := c.normalize(); err != nil {
		return nil, err
	}
	return c, nil
}

// Load reads and parses the TOML file at path, resolves relative token
// files against its directory and validates it. Environment overrides are
// not applied (see [FromEnv]).
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	c, err := Parse(b, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	c.Source = path
	return c, nil
}

// Parse parses a TOML configuration. Relative token and log paths are
// resolved against dir. The result is not yet normalised; FromEnv and Load
// callers get a validated Config.
func Parse(b []byte, dir string) (*Config, error) {
	var c Config
	md, err := toml.Decode(string(b), &c)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("%w: unknown keys: %s", ErrInvalid, strings.Join(keys, ", "))
	}
	if len(c.Slots) == 0 {
		return nil, fmt.Errorf("%w: no [[slot]]", ErrInvalid)
	}
	for i := range c.Slots {
		s := &c.Slots[i]
		if s.Etcd() {
			for _, f := range []*string{&s.EtcdCA, &s.EtcdCert, &s.EtcdKey} {
				if *f != "" {
					if *f, err = resolve(*f, dir); err != nil {
						return nil, err
					}
				}
			}
		} else {
			if s.TokenFile == "" {
				return nil, fmt.Errorf("%w: slot %d: token_file missing", ErrInvalid, i+1)
			}
			if s.TokenFile, err = resolve(s.TokenFile, dir); err != nil {
				return nil, err
			}
		}
		if s.Log != "" {
			if s.Log, err = resolve(s.Log, dir); err != nil {
				return nil, err
			}
		}
	}
	if c.Log != "" {
		if c.Log, err = resolve(c.Log, dir); err != nil {
			return nil, err
		}
	}
	if err := c.normalize(); err != nil {
		return nil, err
	}
	return &c, nil
}

// normalize fills defaults and validates. It is idempotent.
func (c *Config) normalize() error {
	if _, err := c.Level(); err != nil {
		return err
	}
	ids := map[uint64]int{}
	files := map[string]int{}
	for i := range c.Slots {
		s := &c.Slots[i]
		if s.Label == "" {
			s.Label = DefaultLabel
		}
		if len(s.Label) > 32 {
			return fmt.Errorf("%w: slot %d: label longer than 32 bytes", ErrInvalid, i+1)
		}
		if len(s.Engines) > 0 {
			if s.Engine != "" {
				return fmt.Errorf("%w: slot %d: engine and engines are exclusive", ErrInvalid, i+1)
			}
			for _, e := range s.Engines {
				if e == "" || strings.Contains(e, PoolSeparator) || strings.HasPrefix(e, "pool:") {
					return fmt.Errorf("%w: slot %d: engines: %q is not a single engine spec", ErrInvalid, i+1, e)
				}
			}
			if len(s.Engines) == 1 {
				s.Engine = s.Engines[0]
			} else {
				s.Engine = "pool:" + strings.Join(s.Engines, PoolSeparator)
			}
			s.Engines = nil
		}
		if s.Engine == "" {
			s.Engine = DefaultEngine
		}
		switch s.Fallback {
		case "", FallbackNone:
			s.Fallback = FallbackFail
		case FallbackFail, FallbackSoft:
		default:
			return fmt.Errorf("%w: slot %d: fallback %q (want fail or soft)", ErrInvalid, i+1, s.Fallback)
		}
		switch s.ECDSACheck {
		case "":
			s.ECDSACheck = ECDSACheckRelation
		case ECDSACheckRelation, ECDSACheckVerify:
		default:
			return fmt.Errorf("%w: slot %d: ecdsa_check %q (want relation or verify)", ErrInvalid, i+1, s.ECDSACheck)
		}
		switch s.PINCache {
		case "":
			s.PINCache = PINCacheKeyring
		case PINCacheKeyring, PINCacheProcess, PINCacheOff:
		default:
			return fmt.Errorf("%w: slot %d: pin_cache %q (want keyring, process or off)", ErrInvalid, i+1, s.PINCache)
		}
		switch d := s.PINCacheLifetime.Duration; {
		case d == 0:
			s.PINCacheLifetime.Duration = DefaultPINCacheLifetime
		case d < 0 || d > MaxPINCacheLifetime:
			return fmt.Errorf("%w: slot %d: pin_cache_lifetime %v (want 0 for the default %v, or up to %v)",
				ErrInvalid, i+1, d, DefaultPINCacheLifetime, MaxPINCacheLifetime)
		}
		switch s.KeyPolicy {
		case "":
			s.KeyPolicy = KeyPolicySafe
		case KeyPolicySafe, KeyPolicyStandard:
		default:
			return fmt.Errorf("%w: slot %d: key_policy %q (want safe or standard)", ErrInvalid, i+1, s.KeyPolicy)
		}
		if s.MaxPINTries < 0 {
			return fmt.Errorf("%w: slot %d: max_pin_tries %d", ErrInvalid, i+1, s.MaxPINTries)
		}
		if k := s.KDFTime != 0; k != (s.KDFMemoryKiB != 0) || k != (s.KDFThreads != 0) {
			return fmt.Errorf("%w: slot %d: kdf_time, kdf_memory_kib and kdf_threads go together", ErrInvalid, i+1)
		}
		if s.Etcd() {
			switch {
			case s.TokenFile != "":
				return fmt.Errorf("%w: slot %d: token_file and etcd_endpoints exclude each other", ErrInvalid, i+1)
			case s.EtcdPrefix == "":
				return fmt.Errorf("%w: slot %d: etcd_endpoints need an etcd_prefix (the token's keys)", ErrInvalid, i+1)
			case (s.EtcdCert == "") != (s.EtcdKey == ""):
				return fmt.Errorf("%w: slot %d: etcd_cert and etcd_key go together", ErrInvalid, i+1)
			}
		} else {
			if !filepath.IsAbs(s.TokenFile) {
				return fmt.Errorf("%w: slot %d: token_file %q is not absolute", ErrInvalid, i+1, s.TokenFile)
			}
			s.TokenFile = filepath.Clean(s.TokenFile)
		}
		store := s.StoreName()
		if j, dup := files[store]; dup {
			return fmt.Errorf("%w: slots %d and %d share token store %s", ErrInvalid, j, i+1, store)
		}
		files[store] = i + 1
		if s.ID == 0 {
			s.ID = DeriveSlotID(store)
		}
		if j, dup := ids[s.ID]; dup {
			return fmt.Errorf("%w: slots %d and %d share slot id 0x%x", ErrInvalid, j, i+1, s.ID)
		}
		ids[s.ID] = i + 1
	}
	return nil
}

// DeriveSlotID returns the stable slot ID of a token file: 31 bits of the
// FNV-1a hash of its cleaned absolute path, never 0.
func DeriveSlotID(tokenFile string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(filepath.Clean(tokenFile)))
	id := h.Sum64() & 0x7fffffff
	if id == 0 {
		id = 1
	}
	return id
}

// DefaultTokenFile is $XDG_DATA_HOME/modexp-token/token.db, or
// ~/.local/share/modexp-token/token.db when XDG_DATA_HOME is unset or
// relative (as the XDG base directory specification requires).
func DefaultTokenFile() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, appDir, defaultFile), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config: default token file: %w", err)
	}
	return filepath.Join(home, ".local", "share", appDir, defaultFile), nil
}

// resolve expands "~/" and makes p absolute relative to dir.
func resolve(p, dir string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("config: expand %q: %w", p, err)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if !filepath.IsAbs(p) {
		if dir == "" {
			dir = "."
		}
		abs, err := filepath.Abs(filepath.Join(dir, p))
		if err != nil {
			return "", fmt.Errorf("config: resolve %q: %w", p, err)
		}
		p = abs
	}
	return filepath.Clean(p), nil
}
