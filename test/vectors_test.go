package test

import (
	"bytes"
	"context"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// TestVectorsThroughCABI compiles test/cclient/vectors.c and feeds it, on a
// token initialised by pkcs11-tool, the Wycheproof ECDH vectors of
// P-224/256/384/521 (bare points) and secp256k1 (points taken out of the
// SubjectPublicKeyInfo), with both CKM_ECDH1_DERIVE and
// CKM_ECDH1_COFACTOR_DERIVE for the valid ones, Wycheproof's Ed25519
// vectors (C_Verify, and C_Sign for the valid ones), and FIPS 202's SHA-3
// answers: every case passes through C_CreateObject, C_DeriveKey, C_Verify,
// C_Sign and C_Digest of the built library, as a C client calls them.
func TestVectorsThroughCABI(t *testing.T) {
	p := newP11(t)
	p.initToken()
	bin := p.cClient("vectors")
	dir := filepath.Join(repoRoot, "token", "testdata", "wycheproof")
	load := func(name string, v any) {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	h := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	var in bytes.Buffer
	counts := map[string]int{}

	// ECDH.
	curves := []struct{ file, oid string }{
		{"ecdh_secp224r1_ecpoint_test.json", "06052b81040021"},
		{"ecdh_secp256r1_ecpoint_test.json", "06082a8648ce3d030107"},
		{"ecdh_secp384r1_ecpoint_test.json", "06052b81040022"},
		{"ecdh_secp521r1_ecpoint_test.json", "06052b81040023"},
		{"ecdh_secp256k1_test.json", "06052b8104000a"},
	}
	for _, c := range curves {
		var vf struct {
			TestGroups []struct {
				Encoding string
				Tests    []struct{ Public, Private, Shared, Result string }
			}
		}
		load(c.file, &vf)
		oid, _ := hex.DecodeString(c.oid)
		for _, g := range vf.TestGroups {
			for _, v := range g.Tests {
				pub := v.Public
				if g.Encoding != "ecpoint" {
					point, ok := spkiECPoint(v.Public, oid)
					if !ok {
						continue // an SPKI defect or another curve: not a PKCS#11 input
					}
					pub = hex.EncodeToString(point)
				}
				fmt.Fprintf(&in, "ECDH 1050 %s %s %s %s %s\n", c.oid, v.Private, h(pub), v.Result, h(v.Shared))
				counts["ecdh"]++
				if v.Result == "valid" {
					fmt.Fprintf(&in, "ECDH 1051 %s %s %s %s %s\n", c.oid, v.Private, pub, v.Result, v.Shared)
					counts["ecdh"]++
				}
			}
		}
	}

	// EdDSA.
	var ed struct {
		TestGroups []struct {
			Key   struct{ Sk, Pk string }
			Tests []struct{ Msg, Sig, Result string }
		}
	}
	load("eddsa_test.json", &ed)
	for _, g := range ed.TestGroups {
		for _, v := range g.Tests {
			fmt.Fprintf(&in, "EDDSA %s %s %s %s %s\n", g.Key.Sk, g.Key.Pk, h(v.Msg), h(v.Sig), v.Result)
			counts["eddsa"]++
		}
	}

	// SHA-3 ("abc", FIPS 202 examples) and SHA-256 as a control.
	for _, d := range []struct{ mech, want string }{
		{"02b5", "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf"},
		{"02b0", "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
		{"02c0", "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25"},
		{"02d0", "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"},
		{"0250", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	} {
		fmt.Fprintf(&in, "DIGEST %s 616263 %s\n", d.mech, d.want)
		counts["digest"]++
	}

	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, libPath, userPIN)
	cmd.Env = p.env
	cmd.Stdin = &in
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	_, summary := cReport(t, out)
	want := fmt.Sprintf("SUMMARY pass=%d fail=0", counts["ecdh"]+counts["eddsa"]+counts["digest"])
	if err != nil || summary != want {
		t.Fatalf("vectors: %v, %q (want %q)\n%s", err, summary, want, out)
	}
	t.Logf("%d ECDH, %d EdDSA, %d digest cases through the C ABI", counts["ecdh"], counts["eddsa"], counts["digest"])
}

// cClient compiles test/cclient/<name>.c against the module's header and
// returns the program's path.
func (p *p11) cClient(name string) string {
	p.t.Helper()
	e2e.NeedTool(p.t, "gcc")
	bin := p.path(name)
	src := filepath.Join(repoRoot, "test", "cclient", name+".c")
	if out, err := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O1",
		"-I", filepath.Join(repoRoot, "cgo"), "-o", bin, src, "-ldl").CombinedOutput(); err != nil {
		p.t.Fatalf("gcc %s: %v\n%s", name, err, out)
	}
	return bin
}

// spkiECPoint returns the point of a hex SubjectPublicKeyInfo whose
// named-curve parameter is oid.
func spkiECPoint(spkiHex string, oid []byte) ([]byte, bool) {
	der, err := hex.DecodeString(spkiHex)
	if err != nil {
		return nil, false
	}
	var spki struct {
		Algorithm struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.RawValue `asn1:"optional"`
		}
		PublicKey asn1.BitString
	}
	rest, err := asn1.Unmarshal(der, &spki)
	if err != nil || len(rest) != 0 || !spki.Algorithm.Algorithm.Equal(asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}) ||
		!bytes.Equal(spki.Algorithm.Parameters.FullBytes, oid) {
		return nil, false
	}
	return spki.PublicKey.Bytes, true
}
