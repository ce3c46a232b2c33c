package fork

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// forkallChildren is how many children forkall.c forks (child 0 has two
// threads, child 1 a grandchild, child 2 finalises and initialises again).
const forkallChildren = 4

// TestForkedChildWholeToken runs forkall.c: the parent logs in and reports
// what the module answers (the three interfaces' C_GetInfo, the interface
// list, both mechanism lists and every mechanism's info, and a round trip
// of AES-GCM, AES key wrap, HKDF, ECDH1, EdDSA, ML-DSA through the 3.2
// C_VerifySignature, and 3.0/3.2 functions' return values); every forked
// child, thread and grandchild must report the same, line for line, and the
// outputs are checked against Go's implementations. Run once as is and
// once with GOGC=1 (the copy's collector running all the time).
func TestForkedChildWholeToken(t *testing.T) {
	tk := newToken(t)
	bin := buildForkall(t, tk.dir)
	for _, c := range []struct{ name, env string }{{"default GC", ""}, {"GOGC=1", "GOGC=1"}} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			env := []string{"FORKALL_PIN=" + userPIN}
			if c.env != "" {
				env = append(env, c.env)
			}
			start := time.Now()
			report, err := tk.run(env, 180*time.Second, bin, libPath, out, "4")
			if err != nil || !strings.Contains(report, "PASS") {
				t.Fatalf("forkall: %v\n%s", err, report)
			}
			t.Logf("parent + %d children (+ thread, grandchild, re-init) in %v", forkallChildren,
				time.Since(start).Round(time.Millisecond))
			// The children's copies skip the engine self-test their
			// parent ran (token.ParentRanSelfTests).
			if b, _ := os.ReadFile(tk.path("module.log")); !bytes.Contains(b, []byte("engine self-test skipped: the parent process ran it")) {
				t.Errorf("module log: no child skipped the engine self-test")
			}
			parent := readReport(t, filepath.Join(out, "parent"))
			t.Logf("parent report: %d lines", len(parent))
			checkReport(t, parent)
			names := []string{"parent-after", "child0", "child0-t1", "child1", "grandchild1", "child2", "child2-again", "child3"}
			for _, name := range names {
				got := readReport(t, filepath.Join(out, name))
				if len(got) != len(parent) {
					t.Errorf("%s: %d lines, parent %d", name, len(got), len(parent))
				}
				for i := range min(len(got), len(parent)) {
					if got[i] != parent[i] {
						t.Errorf("%s line %d:\n got %s\nwant %s", name, i+1, trim(got[i]), trim(parent[i]))
					}
				}
			}
		})
	}
}

// trim shortens a report line for a message.
func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// buildForkall compiles forkall.c into dir.
func buildForkall(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "forkall")
	src := filepath.Join(repoRoot, "test", "fork", "csrc", "forkall.c")
	if out, err := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O1", "-I", filepath.Join(repoRoot, "cgo"),
		"-o", bin, src, "-ldl", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// readReport reads one process's report lines.
func readReport(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// checkReport checks the parent's report against Go: the interfaces and
// versions, a full mechanism list, and each round trip's output.
func checkReport(t *testing.T, lines []string) {
	t.Helper()
	val := map[string]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, " ")
		if _, dup := val[k]; !dup {
			val[k] = v
		}
	}
	for _, c := range []struct{ key, prefix string }{
		{"info32", "3.2 ModExp Token"}, {"info30", "3.0 ModExp Token"}, {"info240", "2.40 ModExp Token"},
		{"interfaces", "PKCS 11/3.2/0 PKCS 11/3.0/0 PKCS 11/2.40/0"},
		{"rv30", ""},
	} {
		if !strings.HasPrefix(val[c.key], c.prefix) {
			t.Errorf("%s = %q, want prefix %q", c.key, val[c.key], c.prefix)
		}
	}
	if n := strings.Count(val["mechs32"], " "); n < 100 {
		t.Errorf("mechs32 lists %d mechanisms", n)
	}
	bin := func(k string) []byte {
		b, err := hex.DecodeString(val[k])
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %q", k, val[k])
		}
		return b
	}
	msg := []byte("a forked child has the whole token")
	key := make([]byte, 32)
	ikm := make([]byte, 32)
	for i := range key {
		key[i], ikm[i] = byte(i), byte(0xa0+i)
	}
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	iv := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	if want := gcm.Seal(nil, iv, msg, []byte("header")); !bytes.Equal(bin("gcm"), want) {
		t.Errorf("gcm = %x, Go says %x", bin("gcm"), want)
	}
	if val["allowed-refuses"] != "70" { // CKR_MECHANISM_INVALID
		t.Errorf("C_EncryptInit(CKM_AES_CBC_PAD) on a GCM and key wrap key = 0x%s, want 0x70", val["allowed-refuses"])
	}
	if !bytes.Equal(bin("gcm-decrypt"), msg) {
		t.Errorf("gcm-decrypt = %q", bin("gcm-decrypt"))
	}
	inner := make([]byte, 16)
	for i := range inner {
		inner[i] = byte(0x40 + i)
	}
	if want := aesKeyWrap(block, inner); !bytes.Equal(bin("wrap"), want) {
		t.Errorf("wrap = %x, RFC 3394 says %x", bin("wrap"), want)
	}
	if want, err := hkdf.Key(sha256.New, ikm, []byte("salt"), "info", 32); err != nil || !bytes.Equal(bin("hkdf"), want) {
		t.Errorf("hkdf = %x, Go says %x (%v)", bin("hkdf"), want, err)
	}
	var point []byte
	if _, err := asn1.Unmarshal(bin("pub-ec"), &point); err != nil {
		t.Fatalf("pub-ec: %v", err)
	}
	if _, err := ecdh.P256().NewPublicKey(point); err != nil || !bytes.Equal(bin("ecdh"), point[1:33]) {
		t.Errorf("ecdh = %x, want fa-ec's x %x (%v)", bin("ecdh"), point[1:33], err)
	}
	var edPub []byte
	if _, err := asn1.Unmarshal(bin("pub-ed"), &edPub); err != nil || len(edPub) != ed25519.PublicKeySize {
		t.Fatalf("pub-ed: %x %v", bin("pub-ed"), err)
	}
	if !ed25519.Verify(edPub, msg, bin("eddsa")) {
		t.Errorf("eddsa signature does not verify with crypto/ed25519")
	}
	// ML-DSA-65: a 3309-byte signature; C_VerifySignature accepts it and
	// refuses it over another message.
	if val["mldsa"] != "3309 0 c0" {
		t.Errorf("mldsa = %q, want \"3309 0 c0\"", val["mldsa"])
	}
}

// aesKeyWrap is RFC 3394's wrapping with the default IV (§2.2.1), written
// here from the RFC so that the token's own token/keywrap is not checked
// against itself.
func aesKeyWrap(b cipher.Block, plain []byte) []byte {
	n := len(plain) / 8
	a := []byte{0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6}
	r := append([]byte(nil), plain...)
	var in [16]byte
	for j := 0; j < 6; j++ {
		for i := 0; i < n; i++ {
			copy(in[:8], a)
			copy(in[8:], r[8*i:8*i+8])
			b.Encrypt(in[:], in[:])
			t := binary.BigEndian.Uint64(in[:8]) ^ uint64(n*j+i+1)
			binary.BigEndian.PutUint64(a, t)
			copy(r[8*i:], in[8:])
		}
	}
	return append(a, r...)
}
