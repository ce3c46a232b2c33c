package clients

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"strings"
	"testing"
)

// TestKeysExportSPKI: `keys export` writes the public key of every key
// type as a PEM SubjectPublicKeyInfo. Where OpenSSL 3.0 knows the
// algorithm (RSA, EC, Ed448) it parses the file and writes the same DER
// back; for ML-DSA and SLH-DSA the SPKI names the parameter set's OID and
// holds a key of the set's length.
func TestKeysExportSPKI(t *testing.T) {
	if moduleKind(t) != kindModExp {
		t.Skip("the CLI drives our token")
	}
	tk := newToken(t)
	cli := ourCLI(t)
	env := []string{"MODEXP_TOKEN_PIN=" + userPIN}
	for _, c := range []struct {
		typ, id string
		oid     asn1.ObjectIdentifier
		keyLen  int  // bytes of the subjectPublicKey
		openssl bool // OpenSSL 3.0 parses it
	}{
		{"rsa:2048", "21", asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}, 0, true},
		{"ec:P-256", "22", asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}, 65, true},
		{"ed448", "23", asn1.ObjectIdentifier{1, 3, 101, 113}, 57, true},
		{"ml-dsa-65", "24", asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 3, 18}, 1952, false},
		{"slh-dsa-sha2-128f", "25", asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 3, 21}, 32, false},
	} {
		t.Run(c.typ, func(t *testing.T) {
			tk := tk.with(t)
			tk.mustRunEnv(env, cli, "keys", "generate", "--type", c.typ, "--label", "k"+c.id, "--id", c.id)
			file := tk.path("pub-" + c.id + ".pem")
			tk.mustRunEnv(env, cli, "keys", "export", "--id", c.id, "--out", file)
			block, rest := pem.Decode(tk.read("pub-" + c.id + ".pem"))
			if block == nil || block.Type != "PUBLIC KEY" || len(bytes.TrimSpace(rest)) != 0 {
				t.Fatalf("not one PEM PUBLIC KEY block")
			}
			var info struct {
				Algo struct {
					OID    asn1.ObjectIdentifier
					Params asn1.RawValue `asn1:"optional"`
				}
				Key asn1.BitString
			}
			if rest, err := asn1.Unmarshal(block.Bytes, &info); err != nil || len(rest) != 0 {
				t.Fatalf("not a SubjectPublicKeyInfo: %v", err)
			}
			if !info.Algo.OID.Equal(c.oid) {
				t.Fatalf("algorithm %v, want %v", info.Algo.OID, c.oid)
			}
			if c.keyLen != 0 && len(info.Key.Bytes) != c.keyLen {
				t.Fatalf("public key of %d bytes, want %d", len(info.Key.Bytes), c.keyLen)
			}
			switch c.typ {
			case "rsa:2048", "ec:P-256":
				k, err := x509.ParsePKIXPublicKey(block.Bytes)
				if err != nil {
					t.Fatalf("crypto/x509: %v", err)
				}
				if _, ok := k.(*rsa.PublicKey); !ok && c.typ == "rsa:2048" {
					t.Fatalf("crypto/x509 reads a %T", k)
				}
				if _, ok := k.(*ecdsa.PublicKey); !ok && c.typ == "ec:P-256" {
					t.Fatalf("crypto/x509 reads a %T", k)
				}
			}
			if c.openssl {
				der := tk.path("pub-" + c.id + ".der")
				tk.mustRun("openssl", "pkey", "-pubin", "-in", file, "-outform", "DER", "-out", der)
				if !bytes.Equal(tk.read("pub-"+c.id+".der"), block.Bytes) {
					t.Fatal("OpenSSL writes back another SubjectPublicKeyInfo")
				}
				if c.typ == "ed448" {
					if txt := tk.mustRun("openssl", "pkey", "-pubin", "-in", file, "-noout", "-text").stdout; !strings.Contains(txt, "ED448 Public-Key") {
						t.Fatalf("openssl pkey -text:\n%s", txt)
					}
				}
			}
		})
	}
}
