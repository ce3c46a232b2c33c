// Package ecdsa_test drives the token's ECDSA through the built module with
// real hosts: pkcs11-tool generates EC keys on every curve, signs with
// ECDSA and ECDSA-SHA256 and imports OpenSSL-made keys; openssl verifies
// the signatures against the public keys the token exports. Each test has
// its own token in t.TempDir() (XDG_DATA_HOME and HOME there too).
package ecdsa_test

import (
	"bytes"
	stdecdsa "crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

const (
	soPIN   = "87654321"
	userPIN = "123456"
)

var libPath = e2e.Lib() // build/libmodexp-pkcs11.so, built by TestMain

func TestMain(m *testing.M) {
	os.Exit(e2e.Main(m))
}

// host runs pkcs11-tool and openssl against one private token.
type host struct {
	t   *testing.T
	dir string
	env []string
}

func newHost(t *testing.T) *host {
	t.Helper()
	e2e.NeedTool(t, "pkcs11-tool", "openssl")
	k := e2e.NewToken(t, "ecdsa", "")
	h := &host{t: t, dir: k.Dir, env: k.Env}
	h.p11("--init-token", "--label", "ecdsa", "--so-pin", soPIN)
	h.p11("--login", "--login-type", "so", "--so-pin", soPIN, "--init-pin", "--pin", userPIN)
	return h
}

func (h *host) cmd(name string, args ...string) (string, error) {
	return e2e.Run(h.env, e2e.DefaultTimeout, name, args...)
}

func (h *host) must(name string, args ...string) string {
	h.t.Helper()
	out, err := h.cmd(name, args...)
	if err != nil {
		h.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func (h *host) p11(args ...string) string {
	h.t.Helper()
	return h.must("pkcs11-tool", append([]string{"--module", libPath}, args...)...)
}

func (h *host) path(name string) string { return filepath.Join(h.dir, name) }

func (h *host) write(name string, b []byte) string {
	h.t.Helper()
	p := h.path(name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *host) read(name string) []byte {
	h.t.Helper()
	b, err := os.ReadFile(h.path(name))
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// exportPub writes the public key id as DER SubjectPublicKeyInfo, read
// with `pkcs11-tool --read-object --type pubkey`. pkcs11-tool 0.23 with
// OpenSSL 3.0 cannot do that for P-384 keys ("cannot create EVP_PKEY"; the
// same with SoftHSMv2): for those the SPKI is assembled here from the
// CKA_EC_PARAMS and CKA_EC_POINT that `pkcs11-tool --list-objects` prints,
// with the token's CKA_EC_POINT used as is (so its DER form is still
// checked: openssl must accept the result).
func (h *host) exportPub(id string) string {
	h.t.Helper()
	out := h.path("pub-" + id + ".der")
	o, err := h.cmd("pkcs11-tool", "--module", libPath, "--read-object", "--type", "pubkey", "--id", id, "--output-file", out)
	if err == nil {
		return out
	}
	if !strings.Contains(o, "cannot create EVP_PKEY") {
		h.t.Fatalf("pkcs11-tool --read-object --id %s: %v\n%s", id, err, o)
	}
	var block string
	idLine := regexp.MustCompile(`\n\s*ID:\s+` + id + `\s*\n`)
	for _, b := range strings.Split(h.p11("--list-objects", "--type", "pubkey"), "Public Key Object") {
		if idLine.MatchString(b + "\n") {
			block = b
		}
	}
	params, point := hexField(h.t, block, "EC_PARAMS"), hexField(h.t, block, "EC_POINT")
	var inner []byte
	if rest, err := asn1.Unmarshal(point, &inner); err != nil || len(rest) != 0 {
		h.t.Fatalf("CKA_EC_POINT %x is not a DER OCTET STRING", point)
	}
	der, err := asn1.Marshal(struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}{
		pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}, Parameters: asn1.RawValue{FullBytes: params}},
		asn1.BitString{Bytes: inner, BitLength: 8 * len(inner)},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return h.write("pub-"+id+".der", der)
}

// hexField returns the hex value printed after "name:" in a listing.
func hexField(t *testing.T, listing, name string) []byte {
	t.Helper()
	m := regexp.MustCompile(name + `:\s+([0-9a-f]+)`).FindStringSubmatch(listing)
	if m == nil {
		t.Fatalf("no %s in:\n%s", name, listing)
	}
	b, err := hex.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sign signs the file in with key id and mechanism, in the given
// signature format, and returns the signature's path.
func (h *host) sign(id, mech, format, in string) string {
	h.t.Helper()
	out := h.path(fmt.Sprintf("sig-%s-%s-%s", id, mech, format))
	h.p11("--login", "--pin", userPIN, "--sign", "--id", id, "--mechanism", mech,
		"--signature-format", format, "--input-file", in, "--output-file", out)
	return out
}

// opensslVerify checks a DER ECDSA signature with openssl: dgst -sha256
// over the message, or pkeyutl over a digest (raw ECDSA).
func (h *host) opensslVerify(pubDER, msg, sig string, raw bool) {
	h.t.Helper()
	var out string
	if raw {
		out = h.must("openssl", "pkeyutl", "-verify", "-pubin", "-keyform", "DER", "-inkey", pubDER, "-in", msg, "-sigfile", sig)
	} else {
		out = h.must("openssl", "dgst", "-sha256", "-keyform", "DER", "-verify", pubDER, "-signature", sig, msg)
	}
	if !strings.Contains(out, "Verified OK") && !strings.Contains(out, "Signature Verified Successfully") {
		h.t.Fatalf("openssl did not verify:\n%s", out)
	}
}

// opensslRejects checks that openssl refuses a signature.
func (h *host) opensslRejects(pubDER, msg, sig string) {
	h.t.Helper()
	out, err := h.cmd("openssl", "dgst", "-sha256", "-keyform", "DER", "-verify", pubDER, "-signature", sig, msg)
	if err == nil || strings.Contains(out, "Verified OK") {
		h.t.Fatalf("openssl accepted a wrong signature:\n%s", out)
	}
}

// curves are pkcs11-tool's names with their sizes.
var curves = []struct {
	name      string // pkcs11-tool and OpenSSL name
	orderLen  int
	stdlibStd bool // crypto/x509 parses its keys
}{
	{"prime256v1", 32, true},
	{"secp384r1", 48, true},
	{"secp521r1", 66, true},
	{"secp256k1", 32, false},
}

// TestPkcs11ToolECKeygenSignOpenSSLVerify: pkcs11-tool generates a key on
// each curve, signs with ECDSA-SHA256 and with ECDSA (on a SHA-256 digest);
// openssl verifies both against the public key the token exports, and
// rejects a signature of another message. The raw r‖s form is checked with
// crypto/ecdsa as well.
func TestPkcs11ToolECKeygenSignOpenSSLVerify(t *testing.T) {
	h := newHost(t)
	mechs := h.p11("--list-mechanisms")
	for _, m := range []string{"ECDSA-KEY-PAIR-GEN", "ECDSA", "ECDSA-SHA1", "ECDSA-SHA224", "ECDSA-SHA256", "ECDSA-SHA384", "ECDSA-SHA512"} {
		if !strings.Contains(mechs, m+",") && !strings.Contains(mechs, m+" ") {
			t.Errorf("%s not listed:\n%s", m, mechs)
		}
	}
	msg := []byte("ECDSA through pkcs11-tool and openssl\n")
	msgPath := h.write("msg", msg)
	dg := sha256.Sum256(msg)
	digestPath := h.write("digest", dg[:])
	other := h.write("other", []byte("another message\n"))
	for i, c := range curves {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			id := fmt.Sprintf("%02x", 0x10+i)
			h.p11("--login", "--pin", userPIN, "--keypairgen", "--key-type", "EC:"+c.name, "--id", id, "--label", "ec-"+c.name)
			pub := h.exportPub(id)
			h.must("openssl", "pkey", "-pubin", "-inform", "DER", "-in", pub, "-noout") // openssl parses the SPKI

			sig := h.sign(id, "ECDSA-SHA256", "openssl", msgPath)
			h.opensslVerify(pub, msgPath, sig, false)
			h.opensslRejects(pub, other, sig)
			h.opensslVerify(pub, digestPath, h.sign(id, "ECDSA", "openssl", digestPath), true)

			rs := h.read(filepath.Base(h.sign(id, "ECDSA-SHA256", "rs", msgPath)))
			if len(rs) != 2*c.orderLen {
				t.Fatalf("raw signature of %d bytes, want %d", len(rs), 2*c.orderLen)
			}
			if c.stdlibStd {
				der, err := os.ReadFile(pub)
				if err != nil {
					t.Fatal(err)
				}
				k, err := x509.ParsePKIXPublicKey(der)
				if err != nil {
					t.Fatalf("exported public key: %v", err)
				}
				r, s := new(big.Int).SetBytes(rs[:c.orderLen]), new(big.Int).SetBytes(rs[c.orderLen:])
				if !stdecdsa.Verify(k.(*stdecdsa.PublicKey), dg[:], r, s) {
					t.Fatal("crypto/ecdsa rejects the raw signature")
				}
			}
			// pkcs11-tool --verify on the token exits 0 even on a bad
			// signature: read its verdict.
			out := h.p11("--verify", "--id", id, "--mechanism", "ECDSA-SHA256", "--input-file", msgPath,
				"--signature-file", sig, "--signature-format", "openssl")
			if !strings.Contains(out, "Signature is valid") {
				t.Fatalf("token did not verify its own signature:\n%s", out)
			}
			out, _ = h.cmd("pkcs11-tool", "--module", libPath, "--verify", "--id", id, "--mechanism", "ECDSA-SHA256",
				"--input-file", other, "--signature-file", sig, "--signature-format", "openssl")
			if strings.Contains(out, "Signature is valid") || !strings.Contains(out, "Invalid signature") {
				t.Fatalf("token accepted a signature of another message:\n%s", out)
			}
		})
	}
}

// TestPkcs11ToolImportOpenSSLKey: an `openssl genpkey -algorithm EC` key
// on each curve is written to the token with pkcs11-tool (private key and
// public key); the token signs with it, and openssl verifies with its own
// copy of the public key.
func TestPkcs11ToolImportOpenSSLKey(t *testing.T) {
	h := newHost(t)
	msg := []byte("signed with an imported OpenSSL key\n")
	msgPath := h.write("msg", msg)
	for i, c := range curves {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			id := fmt.Sprintf("%02x", 0x40+i)
			keyPEM := h.path("key-" + c.name + ".pem")
			keyDER := h.path("key-" + c.name + ".der")
			pubDER := h.path("pub-" + c.name + ".der")
			h.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:"+c.name,
				"-pkeyopt", "ec_param_enc:named_curve", "-out", keyPEM)
			h.must("openssl", "pkey", "-in", keyPEM, "-outform", "DER", "-out", keyDER)
			h.must("openssl", "pkey", "-in", keyPEM, "-pubout", "-outform", "DER", "-out", pubDER)
			h.p11("--login", "--pin", userPIN, "--write-object", keyDER, "--type", "privkey", "--id", id,
				"--label", "imported-"+c.name, "--usage-sign")
			h.p11("--login", "--pin", userPIN, "--write-object", pubDER, "--type", "pubkey", "--id", id,
				"--label", "imported-"+c.name)
			exported, err := os.ReadFile(h.exportPub(id))
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := os.ReadFile(pubDER); !bytes.Equal(exported, want) {
				t.Fatalf("exported public key differs from OpenSSL's:\n%x\n%x", exported, want)
			}
			h.opensslVerify(pubDER, msgPath, h.sign(id, "ECDSA-SHA256", "openssl", msgPath), false)
		})
	}
}
