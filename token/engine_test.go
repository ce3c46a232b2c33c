package token

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/test/vectors/testkeys"
	"github.com/modexp-token/modexp-token/token/ck"
)

// engineConfig writes a one-slot configuration on engine with fallback
// and points MODEXP_TOKEN_CONF at it; it returns the module log's path.
func engineConfig(t *testing.T, engine, fallback string) string {
	t.Helper()
	_, logPath := writeConfig(t, fmt.Sprintf("label = \"Engine Test\"\nengine = %q\nfallback = %q\n", engine, fallback))
	return logPath
}

// testKey is one of the fixed public test keys (test/vectors/testkeys).
func testKey(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := testkeys.Load(bits)
	if err != nil {
		t.Fatal(err)
	}
	return k.PrivateKey
}

// importRSA creates a session private key object from k.
func importRSA(t *testing.T, m *Module, sh uint64, k *rsa.PrivateKey) uint64 {
	t.Helper()
	k.Precompute()
	h, err := m.CreateObject(sh, []Attribute{
		aULong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), aULong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		aBool(ck.CKA_TOKEN, false), aBool(ck.CKA_SIGN, true),
		aBytes(ck.CKA_MODULUS, k.N.Bytes()), aBytes(ck.CKA_PUBLIC_EXPONENT, big.NewInt(int64(k.E)).Bytes()),
		aBytes(ck.CKA_PRIVATE_EXPONENT, k.D.Bytes()),
		aBytes(ck.CKA_PRIME_1, k.Primes[0].Bytes()), aBytes(ck.CKA_PRIME_2, k.Primes[1].Bytes()),
		aBytes(ck.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()), aBytes(ck.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
		aBytes(ck.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes()),
	})
	must(t, err)
	return h
}

// TestChipEnginesFaultsNeverReleased signs on chip engines, healthy and
// broken, under both fallback policies: a broken chip's results are
// answered CKR_DEVICE_ERROR or replaced by the software engine's, never
// released; faults are counted; healthy chips sign and pass their KAT.
func TestChipEnginesFaultsNeverReleased(t *testing.T) {
	cases := []struct {
		engine, fallback string
		bits             int
		wantDeviceError  bool
		wantFaults       bool
	}{
		{"chip:orup561", "fail", 1024, false, false},
		{"chip:pukcc", "fail", 2048, false, false},
		{"chip:cryptech,zero-above:1024", "fail", 2048, false, false}, // halves of 1024 bits: below the fault
		{"chip:orup561,f=30e6", "fail", 1024, true, true},             // overclocked (fmax 27 MHz at 5 V)
		{"chip:orup561,f=30e6", "soft", 1024, false, true},
		{"chip:orup561,nw=4", "fail", 1024, true, true}, // too few adder wait states
		{"chip:cryptech,zero-above:1024", "fail", 4096, true, true},
		{"chip:cryptech,zero-above:1024", "soft", 4096, false, true},
		{"chip:pukcc,fault=bitflip", "fail", 2048, true, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%d", c.engine, c.fallback, c.bits), func(t *testing.T) {
			logPath := engineConfig(t, c.engine, c.fallback)
			m := load(t)
			slot := m.SlotList(true)[0]
			initToken(t, m, slot)
			sh := openRW(t, m, slot)
			must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
			key := testKey(t, c.bits)
			h := importRSA(t, m, sh, key)
			msg := []byte("chip engine " + c.engine)
			digest := sha256.Sum256(msg)
			mc := &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}
			for i := range 2 { // the second signature runs on the prepared key
				must(t, m.SignInit(sh, mc, h))
				sig, _, err := m.Sign(sh, msg, Out{Cap: 4096})
				if c.wantDeviceError {
					wantRV(t, err, ck.CKR_DEVICE_ERROR)
					if sig != nil {
						t.Fatalf("signature released with CKR_DEVICE_ERROR")
					}
					continue
				}
				must(t, err)
				if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, digest[:], sig); err != nil {
					t.Fatalf("signature %d invalid: %v", i, err)
				}
			}
			st, err := m.EngineStatus(slot)
			must(t, err)
			if c.wantFaults != (st.Faults > 0) {
				t.Fatalf("faults = %d, want faults: %v (%+v)", st.Faults, c.wantFaults, st)
			}
			if st.Ops != 2 {
				t.Fatalf("ops = %d, want 2", st.Ops)
			}
			if !c.wantFaults && (len(st.KATSizes) != 1 || st.KATSizes[0] != c.bits) {
				t.Fatalf("KAT sizes %v, want [%d]", st.KATSizes, c.bits)
			}
			if c.wantDeviceError && st.DeviceErrors != 2 {
				t.Fatalf("device errors = %d, want 2", st.DeviceErrors)
			}
			t.Logf("%s fallback %s RSA-%d: %+v", c.engine, c.fallback, c.bits, st)
			log, err := os.ReadFile(logPath)
			must(t, err)
			if !strings.Contains(string(log), "msg=\"private operation\"") || !strings.Contains(string(log), "device_time=") {
				t.Fatalf("no debug line with the cost in the log:\n%s", log)
			}
			if !c.wantFaults {
				if !strings.Contains(string(log), "engine self-test passed") {
					t.Fatalf("no self-test line in the log:\n%s", log)
				}
			}
		})
	}
}

// TestDebugLogCost: the debug line of a private operation carries the
// chip's simulated device time (non-zero on a simulator).
func TestDebugLogCost(t *testing.T) {
	logPath := engineConfig(t, "chip:pukcc", "fail")
	m := load(t)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	h := importRSA(t, m, sh, testKey(t, 2048))
	sign(t, m, sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, h, []byte("cost"))
	b, err := os.ReadFile(logPath)
	must(t, err)
	var line string
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(l, "msg=\"private operation\"") {
			line = l
		}
	}
	if line == "" || strings.Contains(line, "device_time=0s") || !strings.Contains(line, "key_bits=2048") ||
		!strings.Contains(line, "engine=chip:pukcc") {
		t.Fatalf("private operation line: %q", line)
	}
}

// TestExponentBlindingAutoOff: orup561 cannot take the blinded exponents of
// RSA-1024; by default the KAT notices and the key runs unblinded (with a
// warning); configured explicitly, the key is refused.
func TestExponentBlindingAutoOff(t *testing.T) {
	logPath := engineConfig(t, "chip:orup561", "fail")
	m := load(t)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	h := importRSA(t, m, sh, testKey(t, 1024))
	sign(t, m, sh, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, h, []byte("x"))
	b, err := os.ReadFile(logPath)
	must(t, err)
	if !strings.Contains(string(b), "exponent blinding off") {
		t.Fatalf("no warning in the log:\n%s", b)
	}

	conf := os.Getenv("MODEXP_TOKEN_CONF")
	body, err := os.ReadFile(conf)
	must(t, err)
	must(t, os.WriteFile(conf, append(body, []byte("exponent_blinding = true\n")...), 0o600))
	m2 := load(t)
	sh2 := openRW(t, m2, slot)
	must(t, m2.Login(sh2, ck.CKU_USER, []byte(testUserPIN)))
	h2 := importRSA(t, m2, sh2, testKey(t, 1024))
	must(t, m2.SignInit(sh2, &Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, h2))
	_, _, err = m2.Sign(sh2, []byte("x"), Out{Cap: 4096})
	wantRV(t, err, ck.CKR_KEY_SIZE_RANGE)
}
