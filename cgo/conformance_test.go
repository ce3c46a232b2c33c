//go:build modexp_testhooks

package main

// Conformance items client test suites trip on, checked through the C
// entry points (issue 14): C_Login with a NULL PIN, C_SeedRandom,
// C_WaitForSlotEvent, the token flags, public session keys without login,
// and the order of template and login errors.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/asn1"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

const (
	confSOPIN   = "so-pin-1234"
	confUserPIN = "user-pin-99"
)

// p256Params is CKA_EC_PARAMS of P-256 (the DER OID).
var p256Params = []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}

// initToken initialises the module and its token with an SO and a user
// PIN; it returns the slot.
func initToken(t testing.TB) uint64 {
	t.Helper()
	slot := firstSlot(t)
	wantRV(t, "C_InitToken", tsInitToken(slot, confSOPIN, "conformance"), ck.CKR_OK)
	h := openSession(t, slot, true)
	wantRV(t, "C_Login(SO)", tsLogin(h, ck.CKU_SO, []byte(confSOPIN), false, uint64(len(confSOPIN))), ck.CKR_OK)
	wantRV(t, "C_InitPIN", tsInitPIN(h, confUserPIN), ck.CKR_OK)
	wantRV(t, "C_Logout", tsLogout(h), ck.CKR_OK)
	wantRV(t, "C_CloseSession", tsCloseSession(h), ck.CKR_OK)
	return slot
}

func openSession(t testing.TB, slot uint64, rw bool) uint64 {
	t.Helper()
	flags := uint64(ck.CKF_SERIAL_SESSION)
	if rw {
		flags |= ck.CKF_RW_SESSION
	}
	rv, h := tsOpenSession(slot, flags)
	wantRV(t, "C_OpenSession", rv, ck.CKR_OK)
	return h
}

func loginUser(t *testing.T, h uint64) {
	t.Helper()
	wantRV(t, "C_Login(USER)", tsLogin(h, ck.CKU_USER, []byte(confUserPIN), false, uint64(len(confUserPIN))), ck.CKR_OK)
}

func wantRV(t testing.TB, what string, got uint64, want ck.Error) {
	t.Helper()
	if got != uint64(want) {
		t.Fatalf("%s = %v, want %v", what, ck.Error(got), want)
	}
}

func TestConformanceLoginNullPIN(t *testing.T) {
	slot := initToken(t)
	h := openSession(t, slot, false)
	// More bad logins of each kind than the PIN has tries (10 by
	// default): none may count, none may lock. NULL or empty PINs are
	// CKR_ARGUMENTS_BAD (PyKCS11's test_pin.test_null, as SoftHSMv2),
	// lengths outside 4..255 CKR_PIN_LEN_RANGE, all before any KDF.
	long := make([]byte, 256)
	cases := []struct {
		name string
		pin  []byte
		null bool
		n    uint64
		rv   ck.Error
	}{
		{"NULL, 8", nil, true, 8, ck.CKR_ARGUMENTS_BAD},
		{"NULL, 0", nil, true, 0, ck.CKR_ARGUMENTS_BAD},
		{"empty", []byte{}, false, 0, ck.CKR_ARGUMENTS_BAD},
		{"3 bytes", []byte("123"), false, 3, ck.CKR_PIN_LEN_RANGE},
		{"256 bytes", long, false, 256, ck.CKR_PIN_LEN_RANGE},
	}
	for _, c := range cases {
		for range 12 {
			wantRV(t, "C_Login(USER, "+c.name+")", tsLogin(h, ck.CKU_USER, c.pin, c.null, c.n), c.rv)
			wantRV(t, "C_Login(SO, "+c.name+")", tsLogin(h, ck.CKU_SO, c.pin, c.null, c.n), c.rv)
		}
	}
	rv, flags := tsTokenFlags(slot)
	wantRV(t, "C_GetTokenInfo", rv, ck.CKR_OK)
	counters := uint64(ck.CKF_USER_PIN_COUNT_LOW | ck.CKF_USER_PIN_FINAL_TRY | ck.CKF_USER_PIN_LOCKED |
		ck.CKF_SO_PIN_COUNT_LOW | ck.CKF_SO_PIN_FINAL_TRY | ck.CKF_SO_PIN_LOCKED)
	if flags&counters != 0 {
		t.Fatalf("token flags %#x after NULL-PIN logins: a try was counted", flags)
	}
	// A wrong PIN does count (the counter works).
	wantRV(t, "C_Login(wrong PIN)", tsLogin(h, ck.CKU_USER, []byte("wrong-pin"), false, 9), ck.CKR_PIN_INCORRECT)
	if _, flags = tsTokenFlags(slot); flags&ck.CKF_USER_PIN_COUNT_LOW == 0 {
		t.Fatalf("token flags %#x after a wrong PIN: no CKF_USER_PIN_COUNT_LOW", flags)
	}
	loginUser(t, h)
}

func TestConformanceSeedRandom(t *testing.T) {
	slot := initToken(t)
	h := openSession(t, slot, false)
	seed := []byte("seed material a client mixes in before generating")
	wantRV(t, "C_SeedRandom", tsSeedRandom(h, seed), ck.CKR_OK)
	wantRV(t, "C_SeedRandom(empty)", tsSeedRandom(h, nil), ck.CKR_OK)
	wantRV(t, "C_SeedRandom(bad session)", tsSeedRandom(h+1000, seed), ck.CKR_SESSION_HANDLE_INVALID)
	rv, b := tsGenerateRandom(h, 32)
	wantRV(t, "C_GenerateRandom after a seed", rv, ck.CKR_OK)
	if string(b) == string(make([]byte, 32)) {
		t.Fatal("zero random bytes")
	}
}

func TestConformanceWaitForSlotEvent(t *testing.T) {
	initModule(t)
	rv, slot := tsWaitForSlotEvent(ck.CKF_DONT_BLOCK, false, false)
	wantRV(t, "C_WaitForSlotEvent(CKF_DONT_BLOCK)", rv, ck.CKR_NO_EVENT)
	if slot != 0xAB {
		t.Errorf("C_WaitForSlotEvent wrote *pSlot = %d with no event", slot)
	}
	rv, _ = tsWaitForSlotEvent(0, false, false)
	wantRV(t, "C_WaitForSlotEvent(blocking)", rv, ck.CKR_FUNCTION_NOT_SUPPORTED)
	rv, _ = tsWaitForSlotEvent(ck.CKF_DONT_BLOCK, false, true)
	wantRV(t, "C_WaitForSlotEvent(pReserved)", rv, ck.CKR_ARGUMENTS_BAD)
	if rv := tsFinalize(false); rv != 0 {
		t.Fatalf("C_Finalize = %v", ck.Error(rv))
	}
	rv, _ = tsWaitForSlotEvent(ck.CKF_DONT_BLOCK, false, false)
	wantRV(t, "C_WaitForSlotEvent before C_Initialize", rv, ck.CKR_CRYPTOKI_NOT_INITIALIZED)
}

func TestConformanceTokenFlags(t *testing.T) {
	slot := firstSlot(t)
	for _, when := range []string{"uninitialised", "initialised"} {
		if when == "initialised" {
			wantRV(t, "C_InitToken", tsInitToken(slot, confSOPIN, "flags"), ck.CKR_OK)
		}
		rv, flags := tsTokenFlags(slot)
		wantRV(t, "C_GetTokenInfo", rv, ck.CKR_OK)
		if flags&ck.CKF_RESTORE_KEY_NOT_NEEDED == 0 {
			t.Errorf("%s token: flags %#x lack CKF_RESTORE_KEY_NOT_NEEDED", when, flags)
		}
	}
}

// ecTemplates are the templates of a P-256 session key pair; private is
// CKA_PRIVATE of both keys.
func ecTemplates(private bool) (pub, priv []tsAttr) {
	pub = []tsAttr{
		{Type: ck.CKA_TOKEN, Value: tsBool(false)}, {Type: ck.CKA_PRIVATE, Value: tsBool(private)},
		{Type: ck.CKA_EC_PARAMS, Value: p256Params}, {Type: ck.CKA_VERIFY, Value: tsBool(true)},
	}
	priv = []tsAttr{
		{Type: ck.CKA_TOKEN, Value: tsBool(false)}, {Type: ck.CKA_PRIVATE, Value: tsBool(private)},
		{Type: ck.CKA_SIGN, Value: tsBool(true)},
	}
	return pub, priv
}

// TestConformancePublicSessionKeys: a key pair with CKA_TOKEN and
// CKA_PRIVATE false is generated and used in a public (not logged in)
// read-only session, as PKCS#11 3.0 §4.4 and §5.7 allow; private or token
// keys there are refused with the standard's codes.
func TestConformancePublicSessionKeys(t *testing.T) {
	slot := initToken(t)
	h := openSession(t, slot, false)
	mech := tsMech{Type: ck.CKM_EC_KEY_PAIR_GEN}
	pub, priv := ecTemplates(false)
	rv, hPub, hPriv := tsGenerateKeyPair(h, mech, pub, priv)
	wantRV(t, "C_GenerateKeyPair(public session keys, no login)", rv, ck.CKR_OK)
	msg := []byte("signed without a login")
	d := sha256.Sum256(msg)
	rv, sig := tsSign(h, tsMech{Type: ck.CKM_ECDSA}, hPriv, d[:])
	wantRV(t, "C_Sign(ECDSA) with a public session key", rv, ck.CKR_OK)
	rv, point := tsGetAttribute(h, hPub, ck.CKA_EC_POINT)
	wantRV(t, "C_GetAttributeValue(CKA_EC_POINT)", rv, ck.CKR_OK)
	var raw []byte
	if _, err := asn1.Unmarshal(point, &raw); err != nil {
		t.Fatalf("CKA_EC_POINT: %v", err)
	}
	x, y := elliptic.Unmarshal(elliptic.P256(), raw) //nolint:staticcheck // a test decoding a point
	if x == nil || len(sig) != 64 {
		t.Fatalf("point %x, signature of %d bytes", raw, len(sig))
	}
	pk := &ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}
	if !ecdsa.Verify(pk, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the signature does not verify")
	}

	// Secret session keys too: generated, wrapped and unwrapped without a
	// login; an unwrapped key that would be private (the default) needs it.
	aesGen := tsMech{Type: ck.CKM_AES_KEY_GEN}
	public := func(extra ...tsAttr) []tsAttr {
		return append([]tsAttr{{Type: ck.CKA_TOKEN, Value: tsBool(false)}, {Type: ck.CKA_PRIVATE, Value: tsBool(false)},
			{Type: ck.CKA_VALUE_LEN, Value: tsULong(32)}}, extra...)
	}
	rv, kek := tsGenerateKey(h, aesGen, public(tsAttr{Type: ck.CKA_WRAP, Value: tsBool(true)}, tsAttr{Type: ck.CKA_UNWRAP, Value: tsBool(true)}))
	wantRV(t, "C_GenerateKey(public session KEK, no login)", rv, ck.CKR_OK)
	rv, k := tsGenerateKey(h, aesGen, public(tsAttr{Type: ck.CKA_EXTRACTABLE, Value: tsBool(true)}))
	wantRV(t, "C_GenerateKey(public session key, no login)", rv, ck.CKR_OK)
	rv, _, w := tsWrapKey(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, kek, k, false, 64)
	wantRV(t, "C_WrapKey(public session keys, no login)", rv, ck.CKR_OK)
	secret := []tsAttr{{Type: ck.CKA_CLASS, Value: tsULong(ck.CKO_SECRET_KEY)}, {Type: ck.CKA_KEY_TYPE, Value: tsULong(ck.CKK_AES)}}
	rv, _ = tsUnwrapKey(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, kek, w, append(secret, tsAttr{Type: ck.CKA_PRIVATE, Value: tsBool(false)}))
	wantRV(t, "C_UnwrapKey(public session key, no login)", rv, ck.CKR_OK)
	rv, _ = tsUnwrapKey(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, kek, w, secret)
	wantRV(t, "C_UnwrapKey(private by default, no login)", rv, ck.CKR_USER_NOT_LOGGED_IN)

	// A private key pair needs the user; a token key pair a R/W session.
	pub, priv = ecTemplates(true)
	rv, _, _ = tsGenerateKeyPair(h, mech, pub, priv)
	wantRV(t, "C_GenerateKeyPair(CKA_PRIVATE true, no login)", rv, ck.CKR_USER_NOT_LOGGED_IN)
	pub, priv = ecTemplates(false)
	priv[0].Value = tsBool(true)
	rv, _, _ = tsGenerateKeyPair(h, mech, pub, priv)
	wantRV(t, "C_GenerateKeyPair(CKA_TOKEN true, R/O session)", rv, ck.CKR_SESSION_READ_ONLY)
}

// TestConformanceCheckOrder: where several errors apply, the module
// reports the mechanism and template errors before the login and session
// ones (PKCS#11 3.0 §5.1.7 leaves the order open beyond the universal,
// session and token codes; this is the order SoftHSMv2's and kryoptic's
// users meet for templates: a broken template is reported as such even
// when the caller is not logged in).
func TestConformanceCheckOrder(t *testing.T) {
	slot := initToken(t)
	h := openSession(t, slot, false)
	pub, priv := ecTemplates(false)
	rv, _, hPriv := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_EC_KEY_PAIR_GEN}, pub, priv)
	wantRV(t, "C_GenerateKeyPair", rv, ck.CKR_OK)
	pub, priv = ecTemplates(true) // would need a login
	cases := []struct {
		name string
		run  func() uint64
		want ck.Error
	}{
		{"GenerateKeyPair: unknown mechanism, not logged in", func() uint64 {
			rv, _, _ := tsGenerateKeyPair(h, tsMech{Type: 0x80001234}, pub, priv)
			return rv
		}, ck.CKR_MECHANISM_INVALID},
		{"GenerateKeyPair: attribute not of the object, not logged in", func() uint64 {
			bad := append(append([]tsAttr{}, priv...), tsAttr{Type: ck.CKA_MODULUS_BITS, Value: tsULong(2048)})
			rv, _, _ := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_EC_KEY_PAIR_GEN}, pub, bad)
			return rv
		}, ck.CKR_ATTRIBUTE_TYPE_INVALID},
		{"GenerateKeyPair: malformed CKA_SIGN, not logged in", func() uint64 {
			bad := []tsAttr{priv[0], priv[1], {Type: ck.CKA_SIGN, Value: []byte{1, 2}}}
			rv, _, _ := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_EC_KEY_PAIR_GEN}, pub, bad)
			return rv
		}, ck.CKR_ATTRIBUTE_VALUE_INVALID},
		{"GenerateKeyPair: valid templates, not logged in", func() uint64 {
			rv, _, _ := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_EC_KEY_PAIR_GEN}, pub, priv)
			return rv
		}, ck.CKR_USER_NOT_LOGGED_IN},
		{"CreateObject: private key without CKA_KEY_TYPE, not logged in", func() uint64 {
			rv, _ := tsCreateObject(h, []tsAttr{{Type: ck.CKA_CLASS, Value: tsULong(ck.CKO_PRIVATE_KEY)},
				{Type: ck.CKA_PRIVATE, Value: tsBool(true)}})
			return rv
		}, ck.CKR_TEMPLATE_INCOMPLETE},
		{"CreateObject: private EC key missing CKA_VALUE, not logged in", func() uint64 {
			rv, _ := tsCreateObject(h, []tsAttr{{Type: ck.CKA_CLASS, Value: tsULong(ck.CKO_PRIVATE_KEY)},
				{Type: ck.CKA_KEY_TYPE, Value: tsULong(ck.CKK_EC)}, {Type: ck.CKA_EC_PARAMS, Value: p256Params}})
			return rv
		}, ck.CKR_TEMPLATE_INCOMPLETE},
		{"CreateObject: token data object in a R/O session, bad attribute", func() uint64 {
			rv, _ := tsCreateObject(h, []tsAttr{{Type: ck.CKA_CLASS, Value: tsULong(ck.CKO_DATA)},
				{Type: ck.CKA_TOKEN, Value: tsBool(true)}, {Type: ck.CKA_MODULUS, Value: []byte{1}}})
			return rv
		}, ck.CKR_ATTRIBUTE_TYPE_INVALID},
		{"CreateObject: token data object in a R/O session", func() uint64 {
			rv, _ := tsCreateObject(h, []tsAttr{{Type: ck.CKA_CLASS, Value: tsULong(ck.CKO_DATA)},
				{Type: ck.CKA_TOKEN, Value: tsBool(true)}})
			return rv
		}, ck.CKR_SESSION_READ_ONLY},
		{"UnwrapKey: unknown mechanism, no template", func() uint64 {
			rv, _ := tsUnwrapKey(h, tsMech{Type: 0x80001234}, hPriv, []byte{1, 2, 3}, nil)
			return rv
		}, ck.CKR_MECHANISM_INVALID},
		{"UnwrapKey: bad unwrapping key, unknown mechanism", func() uint64 {
			rv, _ := tsUnwrapKey(h, tsMech{Type: 0x80001234}, 0, []byte{1, 2, 3}, nil)
			return rv
		}, ck.CKR_UNWRAPPING_KEY_HANDLE_INVALID},
		{"WrapKey: bad wrapping key, unknown mechanism", func() uint64 {
			rv, _, _ := tsWrapKey(h, tsMech{Type: 0x80001234}, 0, hPriv, true, 0)
			return rv
		}, ck.CKR_WRAPPING_KEY_HANDLE_INVALID},
		{"WrapKey: bad key, unknown mechanism", func() uint64 {
			rv, _, _ := tsWrapKey(h, tsMech{Type: 0x80001234}, hPriv, 0, true, 0)
			return rv
		}, ck.CKR_KEY_HANDLE_INVALID},
		{"UnwrapKey: NULL phKey", func() uint64 {
			return tsUnwrapKeyRaw(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, 1, false, 24, true)
		}, ck.CKR_ARGUMENTS_BAD},
		{"UnwrapKey: NULL wrapped key with a length", func() uint64 {
			return tsUnwrapKeyRaw(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, 1, true, 24, false)
		}, ck.CKR_ARGUMENTS_BAD},
		{"WrapKey: NULL length pointer", func() uint64 {
			return tsWrapKeyNullLen(h, tsMech{Type: ck.CKM_AES_KEY_WRAP}, 1, 2)
		}, ck.CKR_ARGUMENTS_BAD},
		{"WrapKey: NULL mechanism", func() uint64 {
			rv, _, _ := tsWrapKey(h, tsMech{NullMech: true}, 1, 2, true, 0)
			return rv
		}, ck.CKR_ARGUMENTS_BAD},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantRV(t, c.name, c.run(), c.want)
		})
	}
}

// TestConformanceInitNullMechanism: C_SignInit, C_VerifyInit,
// C_EncryptInit, C_DecryptInit and C_DigestInit with a NULL mechanism end
// the active operation of their kind (PKCS#11 3.0; pkcs11-provider cancels
// so before it falls back to C_SessionCancel), leaving the others; with
// none active a NULL mechanism stays CKR_ARGUMENTS_BAD, as in 2.40.
func TestConformanceInitNullMechanism(t *testing.T) {
	slot := initToken(t)
	h := openSession(t, slot, true)
	loginUser(t, h)
	pub, priv := ecTemplates(false)
	rv, hPub, hPriv := tsGenerateKeyPair(h, tsMech{Type: ck.CKM_EC_KEY_PAIR_GEN}, pub, priv)
	wantRV(t, "C_GenerateKeyPair", rv, ck.CKR_OK)
	rv, aes := tsGenerateKey(h, tsMech{Type: ck.CKM_AES_KEY_GEN}, []tsAttr{
		{Type: ck.CKA_VALUE_LEN, Value: tsULong(16)}, {Type: ck.CKA_TOKEN, Value: tsBool(false)},
		{Type: ck.CKA_ENCRYPT, Value: tsBool(true)}, {Type: ck.CKA_DECRYPT, Value: tsBool(true)}})
	wantRV(t, "C_GenerateKey", rv, ck.CKR_OK)
	null := tsMech{NullMech: true}
	kinds := []struct {
		name string
		flag uint64
		mech tsMech
		key  uint64
	}{
		{"C_SignInit", ck.CKF_SIGN, tsMech{Type: ck.CKM_ECDSA}, hPriv},
		{"C_VerifyInit", ck.CKF_VERIFY, tsMech{Type: ck.CKM_ECDSA}, hPub},
		{"C_EncryptInit", ck.CKF_ENCRYPT, tsMech{Type: ck.CKM_AES_ECB}, aes},
		{"C_DecryptInit", ck.CKF_DECRYPT, tsMech{Type: ck.CKM_AES_ECB}, aes},
		{"C_DigestInit", ck.CKF_DIGEST, tsMech{Type: ck.CKM_SHA256}, 0},
	}
	for _, k := range kinds {
		wantRV(t, k.name+"(NULL), none active", tsInitCall(h, k.flag, null, k.key), ck.CKR_ARGUMENTS_BAD)
		wantRV(t, k.name, tsInitCall(h, k.flag, k.mech, k.key), ck.CKR_OK)
		wantRV(t, k.name+" again", tsInitCall(h, k.flag, k.mech, k.key), ck.CKR_OPERATION_ACTIVE)
	}
	// Every kind is active: NULL ends one kind only.
	for i, k := range kinds {
		wantRV(t, k.name+"(NULL), active", tsInitCall(h, k.flag, null, k.key), ck.CKR_OK)
		wantRV(t, k.name+" after the cancel", tsInitCall(h, k.flag, k.mech, k.key), ck.CKR_OK)
		for _, other := range kinds[i+1:] {
			wantRV(t, other.name+" still active", tsInitCall(h, other.flag, other.mech, other.key), ck.CKR_OPERATION_ACTIVE)
		}
	}
	wantRV(t, "C_SignInit(NULL), bad session", tsInitCall(h+1000, ck.CKF_SIGN, null, hPriv), ck.CKR_ARGUMENTS_BAD)
}
