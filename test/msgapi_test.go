package test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMessageAPIC compiles test/cclient/msgapi.c, a PKCS#11 3.0 client of
// the message-based functions, and runs it on a token initialised by
// pkcs11-tool; the IVs the token generated, the ciphertexts and tags it
// printed are opened here with crypto/cipher, its MAC checked with
// crypto/hmac.
func TestMessageAPIC(t *testing.T) {
	p := newP11(t)
	p.initToken()
	bin := p.cClient("msgapi")
	key := bytes.Repeat([]byte{0x3c}, 32)
	macKey := []byte("the HMAC key of the message test")
	msg := []byte("a message encrypted and signed through the PKCS#11 3.0 message API")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, libPath, userPIN, hex.EncodeToString(key), hex.EncodeToString(macKey), hex.EncodeToString(msg))
	cmd.Env = p.env
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	data, summary := cReport(t, out)
	if err != nil || !strings.Contains(summary, "fail=0") {
		t.Fatalf("msgapi: %v, %q\n%s", err, summary, out)
	}
	t.Log(summary)

	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range 4 {
		iv, ct, tag := data[fmt.Sprint("iv", i)], data[fmt.Sprint("ct", i)], data[fmt.Sprint("tag", i)]
		if len(iv) != 12 || len(tag) != 16 || seen[string(iv)] {
			t.Fatalf("message %d: IV %x, tag %x (IV seen before: %v)", i, iv, tag, seen[string(iv)])
		}
		seen[string(iv)] = true
		if i < 3 && !bytes.Equal(iv[:4], []byte{0x0c, 0x11, 0xe7, 0x70}) {
			t.Fatalf("message %d: IV %x lost the client's prefix", i, iv)
		}
		pt, err := g.Open(nil, iv, append(append([]byte(nil), ct...), tag...), []byte("associated data"))
		if err != nil || !bytes.Equal(pt, msg) {
			t.Fatalf("message %d: crypto/cipher: %v, %q", i, err, pt)
		}
	}
	m := hmac.New(sha256.New, macKey)
	m.Write(msg)
	if !bytes.Equal(data["hmac"], m.Sum(nil)) {
		t.Fatalf("C_SignMessage %x, crypto/hmac %x", data["hmac"], m.Sum(nil))
	}
}
