package test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// TestCClient compiles test/cclient/client.c, runs it against the module
// and checks its report; the public key and signatures it prints are then
// verified here with crypto/rsa, independently of the token.
func TestCClient(t *testing.T) {
	e2e.NeedTool(t, "gcc")
	env, dir := tokenEnv(t)
	bin := filepath.Join(dir, "cclient")
	src := filepath.Join(repoRoot, "test", "cclient", "client.c")
	if out, err := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O1",
		"-I", filepath.Join(repoRoot, "cgo"), "-o", bin, src, "-ldl", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, libPath)
	cmd.Env = env
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if ctx.Err() != nil {
		t.Fatalf("client timed out (a hang: fork? lock?)\n%s", out)
	}
	data, summary := cReport(t, out)
	if err != nil || summary == "" || !strings.Contains(summary, "fail=0") {
		t.Fatalf("client: %v, %q\n%s", err, summary, out)
	}
	t.Log(summary)

	for _, k := range []string{"modulus", "exponent", "message", "sig_sha256_pkcs1", "sig_sha256_pss", "sig_raw_pss"} {
		if len(data[k]) == 0 {
			t.Fatalf("client printed no %s", k)
		}
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(data["modulus"]), E: int(new(big.Int).SetBytes(data["exponent"]).Int64())}
	if pub.N.BitLen() != 2048 || pub.E != 65537 {
		t.Fatalf("public key: %d bits, e = %d", pub.N.BitLen(), pub.E)
	}
	digest := sha256.Sum256(data["message"])
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], data["sig_sha256_pkcs1"]); err != nil {
		t.Errorf("SHA256-RSA-PKCS signature does not verify: %v", err)
	}
	pss := &rsa.PSSOptions{SaltLength: 32, Hash: crypto.SHA256}
	if err := rsa.VerifyPSS(pub, crypto.SHA256, digest[:], data["sig_sha256_pss"], pss); err != nil {
		t.Errorf("SHA256-RSA-PKCS-PSS signature does not verify: %v", err)
	}
	if err := rsa.VerifyPSS(pub, crypto.SHA256, digest[:], data["sig_raw_pss"], pss); err != nil {
		t.Errorf("RSA-PKCS-PSS signature over the digest does not verify: %v", err)
	}
	// And a wrong message does not: the check above is not vacuous.
	other := sha256.Sum256([]byte("another message"))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, other[:], data["sig_sha256_pkcs1"]) == nil {
		t.Error("signature verifies for another message")
	}
}
