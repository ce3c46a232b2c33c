package test

import (
	"bytes"
	"context"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"math/big"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/alg/dh/dhtest"
	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// TestDSADHWithOpenSSL compiles test/cclient/dsadh.c and runs it on a token
// initialised by pkcs11-tool: a DSA-2048/256 key pair made on the token
// signs with CKM_DSA_SHA256 through the C client and through pkcs11-tool,
// and `openssl dgst -verify` accepts both signatures (r‖s turned into DER)
// under the CKA_PUBLIC_KEY_INFO the token exports; a DH key pair made on the token on ffdhe2048 derives with
// C_DeriveKey the secret that `openssl pkeyutl -derive` computes with the
// peer's key, an OpenSSL key.
func TestDSADHWithOpenSSL(t *testing.T) {
	p := newP11(t)
	p.initToken()
	bin := p.cClient("dsadh")

	// DSA domain parameters and the message.
	var dp struct{ P, Q, G *big.Int }
	dp.P, dp.Q, dp.G = e2e.DSAParams(t, "params_2048_256.pem")
	msg := []byte("DSA through the C ABI, verified by openssl")
	msgPath := p.write("msg.bin", msg)

	// The DH peer: an OpenSSL key on ffdhe2048.
	peerPath := p.path("peer.pem")
	p.openssl("genpkey", "-algorithm", "DH", "-pkeyopt", "group:ffdhe2048", "-out", peerPath)
	peerPub := p.path("peer-pub.der")
	p.openssl("pkey", "-in", peerPath, "-pubout", "-outform", "DER", "-out", peerPub)
	peerY := spkiInteger(t, p.read("peer-pub.der"))
	grp := dhtest.KnownGroups()[0]
	if grp.Name != "ffdhe2048" {
		t.Fatalf("first known group %s", grp.Name)
	}

	hx := func(v *big.Int) string { return hex.EncodeToString(v.Bytes()) }
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, libPath, userPIN, hx(dp.P), hx(dp.Q), hx(dp.G), hex.EncodeToString(msg),
		hx(grp.P), hx(grp.G), hx(peerY))
	cmd.Env = p.env
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	data, summary := cReport(t, out)
	if err != nil || !strings.Contains(summary, "fail=0") {
		t.Fatalf("dsadh: %v, %q\n%s", err, summary, out)
	}
	t.Log(summary)

	// openssl verifies the DSA signature.
	sig := data["dsa_sig"]
	if len(sig) != 64 {
		t.Fatalf("signature of %d bytes", len(sig))
	}
	der, err := asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])})
	if err != nil {
		t.Fatal(err)
	}
	sigPath := p.write("sig.der", der)
	p.write("dsa-pub.der", data["dsa_spki"])
	dsaPub := p.path("dsa-pub.pem")
	p.openssl("pkey", "-pubin", "-inform", "DER", "-in", p.path("dsa-pub.der"), "-out", dsaPub)
	if o := p.openssl("dgst", "-sha256", "-verify", dsaPub, "-signature", sigPath, msgPath); !strings.Contains(o, "Verified OK") {
		t.Fatalf("openssl dgst -verify:\n%s", o)
	}
	// pkcs11-tool 0.23 can neither generate nor import DSA keys, but it
	// signs with the token key the C client made (CKA_ID 0d5a).
	p.run("--login", "--pin", userPIN, "--sign", "--mechanism", "DSA-SHA256", "--id", "0d5a",
		"--input-file", msgPath, "--output-file", p.path("p11sig.bin"))
	rs := p.read("p11sig.bin")
	if len(rs) != 64 {
		t.Fatalf("pkcs11-tool signature of %d bytes", len(rs))
	}
	der2, err := asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(rs[:32]), new(big.Int).SetBytes(rs[32:])})
	if err != nil {
		t.Fatal(err)
	}
	if o := p.openssl("dgst", "-sha256", "-verify", dsaPub, "-signature", p.write("p11sig.der", der2), msgPath); !strings.Contains(o, "Verified OK") {
		t.Fatalf("openssl dgst -verify of pkcs11-tool's signature:\n%s", o)
	}
	der[len(der)-1] ^= 1
	p.write("sig-bad.der", der)
	if o, err := runCmd(t, p.env, "openssl", "dgst", "-sha256", "-verify", dsaPub, "-signature", p.path("sig-bad.der"), msgPath); err == nil {
		t.Fatalf("openssl accepts an altered signature:\n%s", o)
	}

	// openssl derives the same DH secret from the token's public key.
	p.write("dh-pub.der", data["dh_spki"])
	ours := p.path("dh-pub.pem")
	p.openssl("pkey", "-pubin", "-inform", "DER", "-in", p.path("dh-pub.der"), "-out", ours)
	zPath := p.path("z.bin")
	p.openssl("pkeyutl", "-derive", "-inkey", peerPath, "-peerkey", ours, "-pkeyopt", "dh_pad:1", "-out", zPath)
	z := p.read("z.bin")
	if len(z) != 256 || !bytes.Equal(z, data["dh_secret"]) {
		t.Fatalf("DH secrets differ:\nopenssl %x\ntoken   %x", z, data["dh_secret"])
	}
}

// spkiInteger returns the INTEGER inside the BIT STRING of a DER
// SubjectPublicKeyInfo (y of a DH or DSA key).
func spkiInteger(t *testing.T, der []byte) *big.Int {
	t.Helper()
	var spki struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(der, &spki); err != nil {
		t.Fatal(err)
	}
	y := new(big.Int)
	if _, err := asn1.Unmarshal(spki.PublicKey.Bytes, &y); err != nil {
		t.Fatal(err)
	}
	return y
}
