package stress

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/asn1"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envInt reads a positive integer from the environment, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// TestStress runs csrc/stress.c: 32 threads on 256 sessions share a fixed
// number of operations (RSA-2048 PKCS#1 v1.5 and PSS signatures, each
// verified by C_Verify on another session; P-256 ECDSA when the token lists
// it; searches; key pairs generated, used and destroyed, as token and as
// session objects). It must end without a single error, with the object
// count back where it started, with RSS growth between the 25 % and 100 %
// marks below the bound, and every sampled signature must verify here with
// crypto/rsa or crypto/ecdsa.
func TestStress(t *testing.T) {
	needBuild(t)
	ops := 6000
	if testing.Short() {
		ops = 1000
	}
	ops = envInt(t, "STRESS_OPS", ops)
	threads := envInt(t, "STRESS_THREADS", 32)
	sessions := envInt(t, "STRESS_SESSIONS", 8)
	rssMiB := envInt(t, "STRESS_RSS_MIB", 20)
	// Generous: 20 ms per operation on a loaded 2-core machine, at least 3 min.
	timeout := max(3*time.Minute, time.Duration(ops)*20*time.Millisecond)
	k := newToken(t)
	out, errOut, err := k.runC(t, timeout, stressBin, libPath, soPIN, userPIN,
		strconv.Itoa(ops), strconv.Itoa(threads), strconv.Itoa(sessions), strconv.Itoa(rssMiB))
	res := parseStress(t, out)
	for _, e := range res.errs {
		t.Error(e)
	}
	if err != nil {
		t.Fatalf("stress: %v\nstdout (end):\n%s\nstderr (end):\n%s", err, tail(out, 40), tail(errOut, 20))
	}
	if !res.done || res.errors != 0 {
		t.Fatalf("stress: done=%v errors=%d\n%s", res.done, res.errors, tail(out, 40))
	}
	t.Logf("ECDSA listed: %v; %s", res.ecdsa, res.summary)
	t.Logf("RSS (kB) at 0,5,...,100 %%: %v", res.rss)
	for _, c := range []string{"pkcs", "pss", "find", "find-all", "gen", "verify", "negative"} {
		if res.counts[c] == 0 {
			t.Errorf("no successful %q operation", c)
		}
	}
	if res.ecdsa && res.counts["ecdsa"] == 0 {
		t.Errorf("ECDSA listed but no ECDSA operation")
	}
	t.Logf("counts: %v", res.counts)
	// RSS: the C program checks the bound too; check it here from the series.
	if len(res.rss) != 21 {
		t.Fatalf("RSS series has %d samples, want 21", len(res.rss))
	}
	if g := res.rss[20] - res.rss[5]; g >= int64(rssMiB)*1024 {
		t.Errorf("RSS grew %d kB from 25 %% to 100 %%, bound %d MiB", g, rssMiB)
	}

	// Sampled signatures, verified independently.
	verified := map[string]int{}
	for _, s := range res.sigs {
		key, ok := res.keys[s.label]
		if !ok {
			t.Errorf("signature by unknown key %q", s.label)
			continue
		}
		if err := key.verify(s.mech, s.msg, s.sig); err != nil {
			t.Errorf("%s signature by %s over %q: %v", s.mech, s.label, s.msg, err)
			continue
		}
		verified[s.mech]++
	}
	t.Logf("sampled signatures verified in Go: %v", verified)
	if verified["pkcs"] == 0 || verified["pss"] == 0 || (res.ecdsa && verified["ecdsa"] == 0) {
		t.Errorf("too few sampled signatures: %v", verified)
	}
	k.checkLog(t)
}

// stressResult is what stress.c printed.
type stressResult struct {
	ecdsa   bool
	keys    map[string]pubKey
	sigs    []sample
	rss     []int64
	counts  map[string]int64
	errors  int64
	done    bool
	summary string
	errs    []string // ERR/FAIL/HANG lines
}

type sample struct {
	mech, label string
	msg, sig    []byte
}

// pubKey is an RSA or P-256 public key.
type pubKey struct {
	rsa *rsa.PublicKey
	ec  *ecdsa.PublicKey
}

func (k pubKey) verify(mech string, msg, sig []byte) error {
	d := sha256.Sum256(msg)
	switch {
	case mech == "pkcs" && k.rsa != nil:
		return rsa.VerifyPKCS1v15(k.rsa, crypto.SHA256, d[:], sig)
	case mech == "pss" && k.rsa != nil:
		return rsa.VerifyPSS(k.rsa, crypto.SHA256, d[:], sig, &rsa.PSSOptions{SaltLength: 32, Hash: crypto.SHA256})
	case mech == "ecdsa" && k.ec != nil:
		if len(sig) != 64 {
			return fmt.Errorf("ECDSA signature of %d bytes, want r||s of 64", len(sig))
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(k.ec, d[:], r, s) {
			return fmt.Errorf("ECDSA signature does not verify")
		}
		return nil
	}
	return fmt.Errorf("mechanism %q does not fit the key", mech)
}

func parseStress(t *testing.T, out string) stressResult {
	t.Helper()
	res := stressResult{keys: map[string]pubKey{}, counts: map[string]int64{}}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "ERR", "FAIL", "HANG":
			res.errs = append(res.errs, line)
		case "ecdsa":
			res.ecdsa = len(f) > 1 && f[1] == "yes"
		case "KEY":
			if len(f) != 4 {
				t.Fatalf("bad line %q", line)
			}
			res.keys[f[1]] = parseKey(t, f[2], mustHex(t, f[3]))
		case "SIG":
			if len(f) != 5 {
				t.Fatalf("bad line %q", line)
			}
			res.sigs = append(res.sigs, sample{mech: f[1], label: f[2], msg: mustHex(t, f[3]), sig: mustHex(t, f[4])})
		case "rss":
			if len(f) == 4 {
				kb, _ := strconv.ParseInt(f[3], 10, 64)
				res.rss = append(res.rss, kb)
			}
		case "count":
			if len(f) == 3 {
				res.counts[f[1]], _ = strconv.ParseInt(f[2], 10, 64)
			}
		case "ops":
			res.summary = line
		case "errors":
			if len(f) == 2 {
				res.errors, _ = strconv.ParseInt(f[1], 10, 64)
			}
		case "DONE":
			res.done = true
		}
	}
	return res
}

// parseKey decodes a KEY line: an RSA modulus (e = 65537) or a P-256
// CKA_EC_POINT (DER OCTET STRING of the uncompressed point).
func parseKey(t *testing.T, kind string, b []byte) pubKey {
	t.Helper()
	if kind == "rsa" {
		return pubKey{rsa: &rsa.PublicKey{N: new(big.Int).SetBytes(b), E: 65537}}
	}
	var pt []byte
	if rest, err := asn1.Unmarshal(b, &pt); err != nil || len(rest) != 0 {
		t.Fatalf("CKA_EC_POINT is not one DER OCTET STRING: %v", err)
	}
	if len(pt) != 65 || pt[0] != 4 {
		t.Fatalf("CKA_EC_POINT: not an uncompressed P-256 point (%d bytes)", len(pt))
	}
	x, y := new(big.Int).SetBytes(pt[1:33]), new(big.Int).SetBytes(pt[33:])
	if !elliptic.P256().IsOnCurve(x, y) {
		t.Fatalf("CKA_EC_POINT: not on P-256")
	}
	return pubKey{ec: &ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}}
}
