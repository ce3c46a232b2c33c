package config

// The reference of the configuration keys: docs/CONFIG.md and the
// modexp-token.toml(5) man page are generated from Reference (go generate
// ./cmd/modexp-token), and a test fails when a field of Config or Slot has
// no entry in keyDocs, so a new key cannot go undocumented.

import (
	"fmt"
	"reflect"
	"strings"
)

// Key is one key of the configuration file, as the reference lists it.
type Key struct {
	Section string // "" for the top level, "slot" for [[slot]]
	Name    string // the TOML key: "token_file"
	Type    string // "string", "integer", "boolean", "duration", "list of strings"
	Default string // what an absent key means
	Env     string // the environment variable that overrides it, if any
	Doc     string // what it does: sentences, plain text
}

// keyDoc is the hand-written part of a Key.
type keyDoc struct {
	def, env, doc string
}

// keyDocs documents every key by "section.name" ("" section: ".log").
// Defaults that are the keystore's (max_pin_tries, lock_timeout, kdf_*)
// say "keystore" here: the reference's generator fills in the figures.
var keyDocs = map[string]keyDoc{
	".log": {def: "none: warnings and errors go to the system log, or without one to $XDG_STATE_HOME/modexp-token/module.log", env: EnvLog,
		doc: "The module's log file (log/slog text lines, appended). A relative path is relative to the configuration file; \"~/\" is expanded."},
	".log_level": {def: "info", env: EnvLogLevel,
		doc: "The lowest level logged: debug, info, warn or error."},
	".slot": {def: "one slot, as without a file",
		doc: "One [[slot]] table per slot, in the order C_GetSlotList lists them. At least one."},
	"slot.id": {def: "derived from the token file (31 bits of a hash of its absolute path, never 0)",
		doc: "The slot's fixed ID. Two slots may not share one."},
	"slot.label": {def: DefaultLabel,
		doc: "The slot's label, and the token's until C_InitToken names it. At most 32 bytes."},
	"slot.token_file": {def: "required, unless etcd_endpoints is set",
		doc: "The token file. A relative path is relative to the configuration file; \"~/\" is expanded. Two slots may not share one."},
	"slot.engine": {def: DefaultEngine, env: EnvEngine,
		doc: "The arithmetic engine: soft, chip:PROFILE, device:unix:/PATH, device:tcp:HOST:PORT or pool:A|B|... (modexp-token engine list shows them)."},
	"slot.engines": {def: "none",
		doc: "Instead of engine: several engines, a pool that sends each operation to the healthy member with the fewest in flight; a failed member is skipped for a cool-down."},
	"slot.fallback": {def: FallbackFail,
		doc: "What happens when an engine's result fails its check (or the engine fails): fail answers CKR_DEVICE_ERROR, soft redoes the operation on the software engine. A wrong result is never released."},
	"slot.exponent_blinding": {def: "true",
		doc: "Randomise the RSA private exponent per operation."},
	"slot.ecdsa_check": {def: ECDSACheckRelation,
		doc: "The check of every ECDSA signature before release: relation (on P-256, k·G recomputed by an independent implementation and s·k = e + r·d checked in independent arithmetic; the full verification on the other curves) or verify (the full verification u1·G + u2·Q on every curve). Either refuses a faulted result (docs/THREATS.md)."},
	"slot.log": {def: "the module's log",
		doc: "This slot's own log file."},
	"slot.max_pin_tries": {def: "keystore",
		doc: "Consecutive wrong PINs before the PIN locks. Stored in the token at initialisation; a later configuration can only lower it."},
	"slot.lock_timeout": {def: "keystore",
		doc: "How long to wait for the token file's lock, as a Go duration (\"5s\")."},
	"slot.pin_cache": {def: "keyring",
		doc: "Where a right PIN is remembered after a login that paid the PIN KDF, so that the next login of the same PIN within pin_cache_lifetime costs about a millisecond: \"keyring\" (the process and the user's kernel keyring: new processes of the same user too), \"process\" (this process only) or \"off\" (every login pays the KDF). A wrong PIN always pays the KDF and is counted (docs/THREATS.md, Logins)."},
	"slot.pin_cache_lifetime": {def: "10m",
		doc: "How long a remembered PIN stays valid, as a Go duration; at most 24h."},
	"slot.kdf_time": {def: "keystore",
		doc: "Argon2id passes of new PIN records. kdf_time, kdf_memory_kib and kdf_threads go together; stored in the token at initialisation, a later configuration can only raise them."},
	"slot.kdf_memory_kib": {def: "keystore",
		doc: "Argon2id memory of new PIN records, in KiB."},
	"slot.kdf_threads": {def: "keystore",
		doc: "Argon2id lanes of new PIN records."},
	"slot.kdf_insecure": {def: "false",
		doc: "Allow Argon2id parameters below the floor (kdf_time 2, 19 MiB): for tests only."},
	"slot.rsa_pkcs_decrypt": {def: "true",
		doc: "Offer CKM_RSA_PKCS decryption and unwrapping (with implicit rejection of bad padding); false leaves the mechanism sign, verify and encrypt only."},
	"slot.gcm_caller_iv": {def: "true",
		doc: "Let CKM_AES_GCM encryption use the IV the caller chose (the standard's behaviour; a repeat on one key within the last 4096 IVs is refused either way). false refuses caller IVs for encryption with CKR_MECHANISM_PARAM_INVALID, so only token-made IVs are used: encryption then goes through C_EncryptMessage with an ivGenerator other than CKG_NO_GENERATE (docs/USAGE.md). Decryption is unaffected."},
	"slot.single_des": {def: "true",
		doc: "Offer the single-DES mechanisms (56-bit keys); triple DES stays either way."},
	"slot.etcd_endpoints": {def: "none: the token is in token_file",
		doc: "The client URLs of an etcd cluster holding the token instead of a file (docs/FLEET.md). Needs etcd_prefix; excludes token_file."},
	"slot.etcd_prefix": {def: "required with etcd_endpoints",
		doc: "The key prefix of the token in etcd: one token per prefix."},
	"slot.etcd_ca": {def: "the system's roots",
		doc: "The CA bundle that checks the etcd servers' certificates."},
	"slot.etcd_cert": {def: "none",
		doc: "The client certificate for etcd; with etcd_key."},
	"slot.etcd_key": {def: "none",
		doc: "The client certificate's private key; with etcd_cert."},
	"slot.etcd_dial_timeout": {def: "3s",
		doc: "How long connecting to etcd may take before it is an error, as a Go duration."},
	"slot.etcd_request_timeout": {def: "3s",
		doc: "How long one etcd request may take before it is an error, as a Go duration."},
	"slot.etcd_connect_budget": {def: "1s",
		doc: "How long C_Initialize waits for the first contact with this slot's etcd cluster; a slot that does not answer in time, or refuses access, is marked unusable with its cause (modexp-token info shows it) while the other slots work, and is retried in the background (docs/FLEET.md)."},
	"slot.key_policy": {def: "safe",
		doc: "\"safe\" refuses the classic PKCS#11 key-extraction attacks (wrap/decrypt with one key, trojan and self wrapping, weaker wrapping keys, readable unwrapped or derived copies of sensitive keys); \"standard\" restores the standard's permissive behaviour, for test suites that exercise those paths (docs/THREATS.md, Key-management policy)."},
}

// Reference lists every key of the configuration file, top-level keys
// first, in the order of the Config and Slot fields. A key without an
// entry in keyDocs has an empty Doc (the package's test fails on it).
func Reference() []Key {
	var keys []Key
	add := func(section string, t reflect.Type) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			d := keyDocs[section+"."+name]
			keys = append(keys, Key{Section: section, Name: name, Type: typeName(f.Type), Default: d.def, Env: d.env, Doc: d.doc})
		}
	}
	add("", reflect.TypeFor[Config]())
	add("slot", reflect.TypeFor[Slot]())
	return keys
}

// typeName is the TOML type of a field, in words.
func typeName(t reflect.Type) string {
	if t == reflect.TypeFor[Duration]() {
		return "duration"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Uint8, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "array of tables"
		}
		return "list of " + typeName(t.Elem()) + "s"
	}
	return fmt.Sprint(t)
}
