//go:build modexp_testhooks

package main

// The key-management policy through the C ABI (token/keypolicy.go,
// docs/THREATS.md): each published way for a user who holds the PIN to
// read a sensitive, extractable key's value (issue 26's table: Clulow
// 2003, Tookan 2010, Fröschle–Steel) run as the attacker runs it. Under
// the default policy every one is refused with the CKR code named here
// and reads nothing; under key_policy = "standard" every one reads the
// value (or makes the wrap it needs), which shows both that the attack is
// real and that the switch restores the standard's rules.

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/hkdf"
	"crypto/sha256"
	"testing"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/keywrap"
)

// policyKey generates a session key with mech (CKM_AES_KEY_GEN: n bytes)
// and the attributes; rv is C_GenerateKey's.
func policyKey(h, mech uint64, n int, attrs ...token.Attribute) (rv, k uint64) {
	if mech == ck.CKM_AES_KEY_GEN {
		attrs = append(attrs, ulongAttr(ck.CKA_VALUE_LEN, uint64(n)))
	}
	return tsGenKey(h, mech, nil, attrs)
}

// step runs the attacker's calls in order and stops at the first that
// does not answer CKR_OK, whose code it keeps.
type step struct{ rv uint64 }

func (s *step) ok(rv uint64) bool {
	if s.rv == 0 {
		s.rv = rv
	}
	return s.rv == 0
}

// decryptWith is C_DecryptInit and C_Decrypt of in under key k.
func decryptWith(h, mech uint64, iv []byte, k uint64, in []byte) (uint64, []byte) {
	if rv := tsInit(h, tsKDecrypt, mech, iv, nil, k); rv != 0 {
		return rv, nil
	}
	rv, _, out := tsCall(h, tsCDecrypt, in, false, len(in)+32)
	return rv, out
}

// encryptWith is C_EncryptInit and C_Encrypt of in under key k.
func encryptWith(h, mech uint64, iv []byte, k uint64, in []byte) (uint64, []byte) {
	if rv := tsInit(h, tsKEncrypt, mech, iv, nil, k); rv != 0 {
		return rv, nil
	}
	rv, _, out := tsCall(h, tsCEncrypt, in, false, len(in)+32)
	return rv, out
}

func wrapWith(h uint64, mech tsMech, wk, k uint64) (uint64, []byte) {
	rv, _, out := tsWrapKey(h, mech, wk, k, false, 4096)
	return rv, out
}

func readValue(h, k uint64) (uint64, []byte) {
	rv, _, v := tsGetAttr(h, k, ck.CKA_VALUE, 4096)
	return rv, v
}

// offline undoes a wrap under a known AES key, as the attacker does with
// the blob outside the token.
func offline(mech uint64, kek, iv, blob []byte) []byte {
	b, _ := aes.NewCipher(kek)
	var out []byte
	var err error
	switch mech {
	case ck.CKM_AES_KEY_WRAP:
		out, err = keywrap.Unwrap(b, nil, blob)
	case ck.CKM_AES_KEY_WRAP_PAD, ckmKWP:
		out, err = keywrap.UnwrapPad(b, nil, blob)
	case ck.CKM_AES_ECB:
		out = make([]byte, len(blob))
		for i := 0; i+16 <= len(blob); i += 16 {
			b.Decrypt(out[i:], blob[i:i+16])
		}
	case ck.CKM_AES_CBC, ck.CKM_AES_CBC_PAD:
		out = make([]byte, len(blob))
		cipher.NewCBCDecrypter(b, iv).CryptBlocks(out, blob)
		if mech == ck.CKM_AES_CBC_PAD {
			out = out[:len(out)-int(out[len(out)-1])]
		}
	}
	if err != nil {
		return nil
	}
	return out
}

// wrapDecrypt is the tail of the wrap/decrypt attacks (Clulow; Tookan
// A1): the target wrapped under wk with mech (iv its parameter), then,
// after between (if any), the blob decrypted under dk.
func wrapDecrypt(h, target, wk, dk, mech uint64, iv []byte, between func() uint64) ([]byte, uint64) {
	var s step
	rv, blob := wrapWith(h, tsMech{Type: mech, Raw: iv}, wk, target)
	if !s.ok(rv) || (between != nil && !s.ok(between())) {
		return nil, s.rv
	}
	rv, got := decryptWith(h, mech, iv, dk, blob)
	if !s.ok(rv) {
		return nil, s.rv
	}
	return got, 0
}

// encryptUnwrap is the tail of the encrypt/unwrap attacks (Tookan
// A3-style): a chosen value encrypted under k, unwrapped under k as a
// wrapping key, which wraps the target; the attacker unwraps the blob
// offline with the chosen value.
func encryptUnwrap(h, target, k uint64) ([]byte, uint64) {
	var s step
	chosen := bytes.Repeat([]byte{0x17}, 32)
	rv, blob := encryptWith(h, ck.CKM_AES_ECB, nil, k, chosen)
	if !s.ok(rv) {
		return nil, s.rv
	}
	rv, w := tsUnwrapKey(h, tsMech{Type: ck.CKM_AES_ECB}, k, blob, toTS([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY),
		ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES), boolAttr(ck.CKA_WRAP, true)}))
	if !s.ok(rv) {
		return nil, s.rv
	}
	rv, wrapped := wrapWith(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, w, target)
	if !s.ok(rv) {
		return nil, s.rv
	}
	return offline(ck.CKM_AES_KEY_WRAP, chosen, nil, wrapped), 0
}

// reimport wraps the target under kek (CKM_AES_KEY_WRAP), unwraps the
// blob under kek as a readable key and reads its value.
func reimport(h, target, kek uint64) ([]byte, uint64) {
	var s step
	rv, blob := wrapWith(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, kek, target)
	if !s.ok(rv) {
		return nil, s.rv
	}
	rv, u := tsUnwrapKey(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, kek, blob, unwrapTemplate(ck.CKK_AES))
	if !s.ok(rv) {
		return nil, s.rv
	}
	rv, got := readValue(h, u)
	if !s.ok(rv) {
		return nil, s.rv
	}
	return got, 0
}

// wrapOnly is the target wrapped under wk: the blob, or nil and the
// refusal (for the attacks whose success is the wrap itself).
func wrapOnly(h uint64, mech tsMech, wk, target uint64) ([]byte, uint64) {
	rv, blob := wrapWith(h, mech, wk, target)
	if rv != 0 {
		return nil, rv
	}
	return blob, 0
}

// attack is one way to read a sensitive key: it gets the session and the
// target (an AES key of value v, sensitive, extractable, with the row's
// extra attributes) and returns what it read (nil: nothing) and the code
// of the call that stopped it.
type attack struct {
	name   string
	extra  []token.Attribute // of the target
	kt     uint64            // the target's key type (0: CKK_AES)
	want   ck.Error          // the refusal under the safe policy
	run    func(h, target uint64, v []byte) (got []byte, rv uint64)
	expect func(v []byte) []byte // what a successful run reads (nil: v itself)
}

func policyAttacks() []attack {
	iv := []byte("sixteen byte iv!")
	var attacks []attack
	// Wrap and decrypt with one key (Clulow; Tookan A1).
	for _, mech := range []uint64{ck.CKM_AES_ECB, ck.CKM_AES_CBC, ck.CKM_AES_CBC_PAD} {
		var p []byte
		if mech != ck.CKM_AES_ECB {
			p = iv
		}
		attacks = append(attacks, attack{
			name: "wrap/decrypt " + ck.Name("CKM_", mech), want: ck.CKR_KEY_FUNCTION_NOT_PERMITTED,
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				rv, k := policyKey(h, ck.CKM_AES_KEY_GEN, 32, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_DECRYPT, true))
				if rv != 0 {
					return nil, rv
				}
				return wrapDecrypt(h, target, k, k, mech, p, nil)
			}})
	}
	attacks = append(attacks,
		attack{name: "wrap/decrypt: CKA_DECRYPT set after the wrap", want: ck.CKR_ATTRIBUTE_READ_ONLY,
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				rv, k := policyKey(h, ck.CKM_AES_KEY_GEN, 32, boolAttr(ck.CKA_WRAP, true))
				if rv != 0 {
					return nil, rv
				}
				return wrapDecrypt(h, target, k, k, ck.CKM_AES_ECB, nil, func() uint64 {
					return tsSetAttrs(h, k, []token.Attribute{boolAttr(ck.CKA_WRAP, false), boolAttr(ck.CKA_DECRYPT, true)})
				})
			}},
		attack{name: "wrap/decrypt: CKA_WRAP on a copy of a decrypting key", want: ck.CKR_ATTRIBUTE_READ_ONLY,
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				var s step
				rv, k := policyKey(h, ck.CKM_AES_KEY_GEN, 32)
				if !s.ok(rv) {
					return nil, s.rv
				}
				rv, c := tsCopyObject(h, k, []token.Attribute{boolAttr(ck.CKA_DECRYPT, false), boolAttr(ck.CKA_WRAP, true)})
				if !s.ok(rv) {
					return nil, s.rv
				}
				return wrapDecrypt(h, target, c, k, ck.CKM_AES_ECB, nil, nil)
			}},
	)
	// A trojan wrapping key: one of a value the attacker chose.
	for _, mech := range []uint64{ck.CKM_AES_KEY_WRAP, ck.CKM_AES_KEY_WRAP_PAD, ckmKWP, ck.CKM_AES_ECB, ck.CKM_AES_CBC, ck.CKM_AES_CBC_PAD} {
		var p []byte
		if mech == ck.CKM_AES_CBC || mech == ck.CKM_AES_CBC_PAD {
			p = iv
		}
		attacks = append(attacks, attack{
			name: "trojan wrapping key " + ck.Name("CKM_", mech), want: ck.CKR_KEY_NOT_WRAPPABLE,
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				kek := bytes.Repeat([]byte{0x42}, 32)
				rv, k := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES),
					{Type: ck.CKA_VALUE, Value: kek}, boolAttr(ck.CKA_WRAP, true)})
				if rv != 0 {
					return nil, rv
				}
				blob, rv := wrapOnly(h, tsMech{Type: mech, Raw: p}, k, target)
				if rv != 0 {
					return nil, rv
				}
				return offline(mech, kek, p, blob), 0
			}})
	}
	attacks = append(attacks,
		// Encrypt a chosen value under an unwrapping key, unwrap it as a
		// wrapping key of known value (Tookan A3-style).
		attack{name: "encrypt/unwrap", want: ck.CKR_KEY_NOT_WRAPPABLE,
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				rv, k := policyKey(h, ck.CKM_AES_KEY_GEN, 32, boolAttr(ck.CKA_UNWRAP, true), boolAttr(ck.CKA_ENCRYPT, true))
				if rv != 0 {
					return nil, rv
				}
				return encryptUnwrap(h, target, k)
			}},
		attack{name: "encrypt/unwrap: CKA_ENCRYPT set on an unwrapping key", want: ck.CKR_ATTRIBUTE_READ_ONLY,
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				var s step
				rv, k := policyKey(h, ck.CKM_AES_KEY_GEN, 32, boolAttr(ck.CKA_UNWRAP, true))
				if !s.ok(rv) || !s.ok(tsSetAttrs(h, k, []token.Attribute{boolAttr(ck.CKA_ENCRYPT, true)})) {
					return nil, s.rv
				}
				return encryptUnwrap(h, target, k)
			}},
		// Wrap under a proper key, unwrap as a readable key.
		attack{name: "re-import", want: ck.CKR_TEMPLATE_INCONSISTENT,
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				rv, kek := policyKey(h, ck.CKM_AES_KEY_GEN, 32, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true))
				if rv != 0 {
					return nil, rv
				}
				return reimport(h, target, kek)
			}},
		// The target wraps itself, and unwraps the blob as a readable key.
		attack{name: "self-wrap", want: ck.CKR_KEY_NOT_WRAPPABLE,
			extra: []token.Attribute{boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true)},
			run:   func(h, target uint64, _ []byte) ([]byte, uint64) { return reimport(h, target, target) }},
		attack{name: "self-wrap under a copy", want: ck.CKR_KEY_NOT_WRAPPABLE,
			extra: []token.Attribute{boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true)},
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				rv, c := tsCopyObject(h, target, nil)
				if rv != 0 {
					return nil, rv
				}
				return wrapOnly(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, c, target)
			},
			expect: func([]byte) []byte { return nil }},
	)
	// A weaker key wraps a stronger one: the blob falls to a search of
	// the weaker key (a successful run is the wrap itself).
	for _, w := range []struct {
		name       string
		gen, wrap  uint64
		targetSize int
	}{
		{"single DES", ck.CKM_DES_KEY_GEN, ck.CKM_DES_ECB, 32},
		{"2-key Triple DES", ck.CKM_DES2_KEY_GEN, ck.CKM_DES3_ECB, 32},
		{"3-key Triple DES", ck.CKM_DES3_KEY_GEN, ck.CKM_DES3_ECB, 16},
		{"AES-128", ck.CKM_AES_KEY_GEN, ck.CKM_AES_KEY_WRAP, 32},
	} {
		attacks = append(attacks, attack{
			name: "AES-" + map[int]string{16: "128", 32: "256"}[w.targetSize] + " under " + w.name, want: ck.CKR_KEY_NOT_WRAPPABLE,
			run: func(h, target uint64, _ []byte) ([]byte, uint64) {
				rv, k := policyKey(h, w.gen, 16, boolAttr(ck.CKA_WRAP, true))
				if rv != 0 {
					return nil, rv
				}
				return wrapOnly(h, tsMech{Type: w.wrap}, k, target)
			},
			expect: func([]byte) []byte { return nil }})
	}
	// The derived-key oracle: a readable key derived from a sensitive one.
	data := []byte("thirty-two bytes of chosen data!")
	encrypted := func(v []byte) []byte {
		b, _ := aes.NewCipher(v)
		out := make([]byte, len(data))
		b.Encrypt(out, data[:16])
		b.Encrypt(out[16:], data[16:])
		return out
	}
	readable := []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET),
		ulongAttr(ck.CKA_VALUE_LEN, 32), boolAttr(ck.CKA_SENSITIVE, false), boolAttr(ck.CKA_EXTRACTABLE, true)}
	deriveRead := func(derive func(h, target uint64) (uint64, uint64)) func(h, target uint64, _ []byte) ([]byte, uint64) {
		return func(h, target uint64, _ []byte) ([]byte, uint64) {
			rv, d := derive(h, target)
			if rv != 0 {
				return nil, rv
			}
			rv, got := readValue(h, d)
			if rv != 0 {
				return nil, rv
			}
			return got, 0
		}
	}
	attacks = append(attacks,
		attack{name: "CKM_AES_ECB_ENCRYPT_DATA from a key that may not encrypt", want: ck.CKR_KEY_FUNCTION_NOT_PERMITTED,
			extra: []token.Attribute{boolAttr(ck.CKA_DERIVE, true), boolAttr(ck.CKA_ENCRYPT, false)},
			run: deriveRead(func(h, target uint64) (uint64, uint64) {
				return tsDeriveEncryptData(h, ck.CKM_AES_ECB_ENCRYPT_DATA, target, data, readable)
			}),
			expect: encrypted},
		attack{name: "CKM_AES_ECB_ENCRYPT_DATA as a readable key", want: ck.CKR_TEMPLATE_INCONSISTENT,
			extra: []token.Attribute{boolAttr(ck.CKA_DERIVE, true)},
			run: deriveRead(func(h, target uint64) (uint64, uint64) {
				return tsDeriveEncryptData(h, ck.CKM_AES_ECB_ENCRYPT_DATA, target, data, readable)
			}),
			expect: encrypted},
		attack{name: "CKM_HKDF_DERIVE as a readable key", want: ck.CKR_TEMPLATE_INCONSISTENT,
			extra: []token.Attribute{boolAttr(ck.CKA_DERIVE, true)}, kt: ck.CKK_GENERIC_SECRET,
			run: deriveRead(func(h, target uint64) (uint64, uint64) {
				return tsDeriveHKDF(h, ck.CKM_HKDF_DERIVE, target, []byte("info"), readable)
			}),
			expect: func(v []byte) []byte { k, _ := hkdf.Key(sha256.New, v, nil, "info", 32); return k }},
		attack{name: "CKM_HKDF_DATA (a data object)", want: ck.CKR_KEY_FUNCTION_NOT_PERMITTED,
			extra: []token.Attribute{boolAttr(ck.CKA_DERIVE, true)}, kt: ck.CKK_GENERIC_SECRET,
			run: deriveRead(func(h, target uint64) (uint64, uint64) {
				return tsDeriveHKDF(h, ck.CKM_HKDF_DATA, target, []byte("info"), []token.Attribute{ulongAttr(ck.CKA_VALUE_LEN, 32)})
			}),
			expect: func(v []byte) []byte { k, _ := hkdf.Key(sha256.New, v, nil, "info", 32); return k }},
	)
	return attacks
}

func TestKeyPolicyAttacksC(t *testing.T) {
	for _, a := range policyAttacks() {
		for _, policy := range []string{"safe", "standard"} {
			t.Run(a.name+"/"+policy, func(t *testing.T) {
				extra := ""
				if policy == "standard" {
					extra = standardPolicy
				}
				h := readySessionWith(t, extra)
				v := bytes.Repeat([]byte{0xA5}, 32)
				if a.name == "AES-128 under 3-key Triple DES" {
					v = v[:16]
				}
				kt := uint64(ck.CKK_AES)
				if a.kt != 0 {
					kt = a.kt
				}
				rv, target := tsCreate(h, append([]token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, kt),
					{Type: ck.CKA_VALUE, Value: v}, boolAttr(ck.CKA_SENSITIVE, true), boolAttr(ck.CKA_EXTRACTABLE, true)}, a.extra...))
				if rv != 0 {
					t.Fatalf("C_CreateObject(target) = %v", ck.Error(rv))
				}
				got, rv := a.run(h, target, v)
				want := v
				if a.expect != nil {
					want = a.expect(v)
				}
				if policy == "safe" {
					if got != nil || rv != uint64(a.want) {
						t.Fatalf("read %x, stopped by %v; want nothing read, %v", got, ck.Error(rv), a.want)
					}
					if rv, _ := readValue(h, target); rv != uint64(ck.CKR_ATTRIBUTE_SENSITIVE) {
						t.Fatalf("the target's CKA_VALUE = %v, want CKR_ATTRIBUTE_SENSITIVE", ck.Error(rv))
					}
					return
				}
				if rv != 0 || got == nil || (want != nil && !bytes.Equal(got, want)) {
					t.Fatalf("under the standard policy: read %x, %v; want %x", got, ck.Error(rv), want)
				}
			})
		}
	}
}

// TestKeyPolicyAllowsC: what the safe policy is for still works. A key
// generated to wrap gets CKA_DECRYPT and CKA_ENCRYPT false by default, it
// wraps a sensitive key of no greater strength, the unwrapped copy is
// sensitive and encrypts as the original does; a readable key wraps
// under any key; a sensitive key may be derived from a sensitive one.
func TestKeyPolicyAllowsC(t *testing.T) {
	h := readySession(t)
	rv, kek := policyKey(h, ck.CKM_AES_KEY_GEN, 32, boolAttr(ck.CKA_WRAP, true), boolAttr(ck.CKA_UNWRAP, true))
	if rv != 0 {
		t.Fatalf("C_GenerateKey(KEK) = %v", ck.Error(rv))
	}
	for _, at := range []uint64{ck.CKA_ENCRYPT, ck.CKA_DECRYPT} {
		attrIs(t, h, kek, at, []byte{0})
	}
	v := bytes.Repeat([]byte{0x3C}, 16)
	target := aesKey(t, h, v, boolAttr(ck.CKA_EXTRACTABLE, true))
	rv, blob := wrapWith(h, tsMech{Type: ck.CKM_AES_KEY_WRAP_PAD}, kek, target)
	if rv != 0 {
		t.Fatalf("C_WrapKey(AES-128 under a generated AES-256) = %v", ck.Error(rv))
	}
	rv, u := tsUnwrapKey(h, tsMech{Type: ck.CKM_AES_KEY_WRAP_PAD}, kek, blob, toTS([]token.Attribute{
		ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_AES)}))
	if rv != 0 {
		t.Fatalf("C_UnwrapKey = %v", ck.Error(rv))
	}
	attrIs(t, h, u, ck.CKA_SENSITIVE, []byte{1})
	b, _ := aes.NewCipher(v)
	want := make([]byte, 16)
	b.Encrypt(want, []byte("one block of txt"))
	for _, k := range []uint64{target, u} {
		if rv, got := encryptWith(h, ck.CKM_AES_ECB, nil, k, []byte("one block of txt")); rv != 0 || !bytes.Equal(got, want) {
			t.Fatalf("C_Encrypt under key %d = %v, %x; want %x", k, ck.Error(rv), got, want)
		}
	}
	// A readable key wraps under a key of a known value (its value is no
	// secret anyway), even a weaker one.
	dv := []byte("8bytes!!")
	rv, weak := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_DES),
		{Type: ck.CKA_VALUE, Value: dv}, boolAttr(ck.CKA_WRAP, true)})
	if rv != 0 {
		t.Fatalf("C_CreateObject(DES) = %v", ck.Error(rv))
	}
	open := aesKey(t, h, v, boolAttr(ck.CKA_SENSITIVE, false), boolAttr(ck.CKA_EXTRACTABLE, true))
	rv, blob = wrapWith(h, tsMech{Type: ck.CKM_DES_ECB}, weak, open)
	if rv != 0 {
		t.Fatalf("C_WrapKey(readable key under DES) = %v", ck.Error(rv))
	}
	db, _ := des.NewCipher(dv)
	got := make([]byte, len(blob))
	for i := 0; i+8 <= len(blob); i += 8 {
		db.Decrypt(got[i:], blob[i:i+8])
	}
	if !bytes.Equal(got, v) {
		t.Fatalf("DES wrap %x decrypts to %x, want %x", blob, got, v)
	}
	// A sensitive derived key from a sensitive base.
	rv, base := tsCreate(h, []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET),
		{Type: ck.CKA_VALUE, Value: v}, boolAttr(ck.CKA_DERIVE, true)})
	if rv != 0 {
		t.Fatalf("C_CreateObject(base) = %v", ck.Error(rv))
	}
	rv, d := tsDeriveHKDF(h, ck.CKM_HKDF_DERIVE, base, []byte("info"), []token.Attribute{ulongAttr(ck.CKA_CLASS, ck.CKO_SECRET_KEY),
		ulongAttr(ck.CKA_KEY_TYPE, ck.CKK_GENERIC_SECRET), ulongAttr(ck.CKA_VALUE_LEN, 32)})
	if rv != 0 {
		t.Fatalf("C_DeriveKey(HKDF, sensitive) = %v", ck.Error(rv))
	}
	attrIs(t, h, d, ck.CKA_SENSITIVE, []byte{1})
}
