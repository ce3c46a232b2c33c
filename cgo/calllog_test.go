//go:build modexp_testhooks

package main

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestCallLogDebug: with MODEXP_TOKEN_LOG_LEVEL=debug every call leaves a
// record with its function, session, mechanism, duration and return value,
// a refusal its reason; and a run that logs in, imports a key and signs
// leaves no byte of the PINs, the key's private values, the data or the
// signature in the log, in any of the usual encodings.
func TestCallLogDebug(t *testing.T) {
	h, logPath := loggedSession(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key.Precompute()
	priv := []tsAttr{
		{Type: ck.CKA_CLASS, Value: tsULong(ck.CKO_PRIVATE_KEY)}, {Type: ck.CKA_KEY_TYPE, Value: tsULong(ck.CKK_RSA)},
		{Type: ck.CKA_TOKEN, Value: tsBool(true)}, {Type: ck.CKA_SIGN, Value: tsBool(true)},
		{Type: ck.CKA_LABEL, Value: []byte("imported")},
		{Type: ck.CKA_MODULUS, Value: key.N.Bytes()}, {Type: ck.CKA_PUBLIC_EXPONENT, Value: []byte{1, 0, 1}},
		{Type: ck.CKA_PRIVATE_EXPONENT, Value: key.D.Bytes()},
		{Type: ck.CKA_PRIME_1, Value: key.Primes[0].Bytes()}, {Type: ck.CKA_PRIME_2, Value: key.Primes[1].Bytes()},
		{Type: ck.CKA_EXPONENT_1, Value: key.Precomputed.Dp.Bytes()}, {Type: ck.CKA_EXPONENT_2, Value: key.Precomputed.Dq.Bytes()},
		{Type: ck.CKA_COEFFICIENT, Value: key.Precomputed.Qinv.Bytes()},
	}
	rv, hKey := tsCreateObject(h, priv)
	wantRV(t, "C_CreateObject(RSA private key)", rv, ck.CKR_OK)
	data := []byte("data-to-sign: 7c1f0e9a4b2d")
	rv, sig := tsSign(h, tsMech{Type: ck.CKM_SHA256_RSA_PKCS}, hKey, data)
	wantRV(t, "C_Sign", rv, ck.CKR_OK)
	d := sha256.Sum256(data)
	if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, d[:], sig); err != nil {
		t.Fatalf("signature: %v", err)
	}
	// A refusal with a reason: an even modulus.
	bad := append([]tsAttr{}, priv...)
	even := append([]byte(nil), key.N.Bytes()...)
	even[len(even)-1] &^= 1
	bad[5] = tsAttr{Type: ck.CKA_MODULUS, Value: even}
	rv, _ = tsCreateObject(h, bad)
	wantRV(t, "C_CreateObject(even modulus)", rv, ck.CKR_ATTRIBUTE_VALUE_INVALID)
	log := finishLog(t, h, logPath)
	lines := strings.Split(log, "\n")
	find := func(fn string, parts ...string) string {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(l, "msg=call") || !strings.Contains(l, "fn="+fn+" ") {
				continue
			}
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				return l
			}
		}
		t.Errorf("no call record for %s with %q in the log", fn, parts)
		return ""
	}
	find("C_InitToken", "slot=", "rv=CKR_OK", "duration=")
	find("C_Login", "session=", "rv=CKR_OK")
	find("C_CreateObject", "rv=CKR_OK")
	find("C_SignInit", "mechanism=CKM_SHA256_RSA_PKCS", "objects=", "rv=CKR_OK")
	find("C_Sign", "session=", "rv=CKR_OK")
	find("C_CreateObject", "rv=CKR_ATTRIBUTE_VALUE_INVALID", "CKA_MODULUS: must be odd")
	find("C_Logout", "rv=CKR_OK")

	// No secret in any encoding. The modulus is public but the test keeps
	// it out too: no attribute value is logged at all.
	noSecretInLog(t, log, map[string][]byte{
		"user PIN": []byte(confUserPIN), "SO PIN": []byte(confSOPIN),
		"d": key.D.Bytes(), "p": key.Primes[0].Bytes(), "q": key.Primes[1].Bytes(),
		"dp": key.Precomputed.Dp.Bytes(), "dq": key.Precomputed.Dq.Bytes(), "qinv": key.Precomputed.Qinv.Bytes(),
		"modulus": key.N.Bytes(), "data": data, "signature": sig,
	})
	if n := strings.Count(log, "msg=call"); n < 10 {
		t.Errorf("only %d call records", n)
	}
	if testing.Verbose() {
		t.Logf("log %s:\n%s", filepath.Base(logPath), log)
	}
}

// TestCallLogOff: at the default level no call record is written.
func TestCallLogOff(t *testing.T) {
	slot := initToken(t)
	h := openSession(t, slot, false)
	loginUser(t, h)
	wantRV(t, "C_Logout", tsLogout(h), ck.CKR_OK)
	raw, _ := os.ReadFile(os.Getenv("MODEXP_TOKEN_LOG"))
	if bytes.Contains(raw, []byte("msg=call")) {
		t.Fatalf("call records at the default level:\n%s", raw)
	}
}

// BenchmarkCallOverhead is the cost of one export (C_GetSessionInfo, from
// a C loop) with call records off (the default) and on (debug, to a file).
func BenchmarkCallOverhead(b *testing.B) {
	for _, level := range []string{"info", "debug"} {
		b.Run("log="+level, func(b *testing.B) {
			b.Setenv("MODEXP_TOKEN_LOG_LEVEL", level)
			dir := b.TempDir()
			conf := filepath.Join(dir, "modexp-token.toml")
			body := "[[slot]]\nlabel = \"bench\"\ntoken_file = \"" + filepath.Join(dir, "token.db") + "\"\nengine = \"soft\"\n"
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				b.Fatal(err)
			}
			b.Setenv("MODEXP_TOKEN_CONF", conf)
			b.Setenv("MODEXP_TOKEN_LOG", filepath.Join(dir, "module.log"))
			if rv := tsInitialize(true, 0, ck.CKF_OS_LOCKING_OK, false); rv != 0 {
				b.Fatalf("C_Initialize = %v", ck.Error(rv))
			}
			defer tsFinalize(false)
			_, _, slots := tsGetSlotList(false, 4)
			rv, h := tsOpenSession(slots[0], ck.CKF_SERIAL_SESSION)
			if rv != 0 {
				b.Fatalf("C_OpenSession = %v", ck.Error(rv))
			}
			b.ResetTimer()
			if rv := tsSessionInfoLoop(h, b.N); rv != 0 {
				b.Fatalf("C_GetSessionInfo = %v", ck.Error(rv))
			}
		})
	}
}

// loggedSession turns the call records on (debug level), makes a token
// with an SO and a user PIN, and returns a logged-in read-write session
// and the path of the module's log.
func loggedSession(t *testing.T) (h uint64, logPath string) {
	t.Helper()
	t.Setenv("MODEXP_TOKEN_LOG_LEVEL", "debug")
	slot := initToken(t)
	h = openSession(t, slot, true)
	loginUser(t, h)
	return h, os.Getenv("MODEXP_TOKEN_LOG")
}

// finishLog logs the session out and finalizes the module, so that every
// record is written, and returns the log.
func finishLog(t *testing.T, h uint64, logPath string) string {
	t.Helper()
	wantRV(t, "C_Logout", tsLogout(h), ck.CKR_OK)
	if rv := tsFinalize(false); rv != 0 {
		t.Fatalf("C_Finalize = %v", ck.Error(rv))
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("reading the log: %v", err)
	}
	return string(raw)
}

// noSecretInLog fails t for each named value the log holds: whole, as
// bytes, hex (either case), standard or URL base64; or any 16-byte window
// of it (every 8 bytes) as bytes or hex.
func noSecretInLog(t *testing.T, log string, secrets map[string][]byte) {
	t.Helper()
	for name, s := range secrets {
		probes := []string{string(s), hex.EncodeToString(s), strings.ToUpper(hex.EncodeToString(s)),
			base64.StdEncoding.EncodeToString(s), base64.RawURLEncoding.EncodeToString(s)}
		for i := 0; i+16 <= len(s); i += 8 {
			w := hex.EncodeToString(s[i : i+16])
			probes = append(probes, string(s[i:i+16]), w, strings.ToUpper(w))
		}
		for _, p := range probes {
			if strings.Contains(log, p) {
				t.Errorf("the log holds the %s", name)
				break
			}
		}
	}
}
