// Package ecdsatest loads the Project Wycheproof ECDSA vectors kept in
// engine/alg/ecdsa/testdata, for every test that checks an ECDSA verifier (this
// module's Verify, and C_Verify through the token). The IEEE P1363 files
// (raw r‖s, Files) come from C2SP/wycheproof's testvectors_v1/; the two
// SHA-3 ones (DER signatures, DERFiles) from google/wycheproof's
// testvectors/ (snapshot v0.0.0-20191219022705-2196000605e4), which
// testvectors_v1 has no P1363 form of.
package ecdsatest

import (
	"bytes"
	"crypto"
	_ "crypto/sha256" // the vectors' hashes
	_ "crypto/sha3"
	_ "crypto/sha512"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
)

// Vector is one Wycheproof ECDSA verification case: IEEE P1363 (raw r‖s)
// or, from an EcdsaVerify group, DER.
type Vector struct {
	File    string      // base name of the JSON file
	TcID    int         // Wycheproof test case id
	Comment string      // what the case tests
	Flags   []string    // Wycheproof flags
	Curve   string      // "P-224", "P-256", "P-384", "P-521" or "secp256k1"
	Hash    crypto.Hash // hash applied to Msg
	Point   []byte      // public key, uncompressed SEC 1 (0x04‖X‖Y)
	Msg     []byte      // message (not hashed)
	Sig     []byte      // signature as given (possibly malformed): r‖s, or DER when DER is set
	DER     bool        // Sig is a DER Ecdsa-Sig-Value (group type EcdsaVerify)
	Valid   bool        // result "valid": must verify
	// Acceptable is true for result "acceptable": either outcome is fine.
	Acceptable bool
}

// wycheproofKey is a test group's public key.
type wycheproofKey struct {
	Curve        string `json:"curve"`
	Uncompressed string `json:"uncompressed"`
}

// Files are the vector files in the testdata directory.
var Files = []string{
	"ecdsa_secp224r1_sha224_p1363_test.json",
	"ecdsa_secp256r1_sha256_p1363_test.json",
	"ecdsa_secp384r1_sha384_p1363_test.json",
	"ecdsa_secp521r1_sha512_p1363_test.json",
	"ecdsa_secp256k1_sha256_p1363_test.json",
}

// DERFiles are the vector files whose signatures are DER (EcdsaVerify
// groups): ECDSA with SHA-3, for the token's CKM_ECDSA_SHA3_*.
var DERFiles = []string{
	"ecdsa_secp256r1_sha3_256_test.json",
	"ecdsa_secp384r1_sha3_384_test.json",
}

// Dir is the directory of the vector files (engine/alg/ecdsa/testdata in the
// source tree; tests run from the source tree).
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("engine", "alg", "ecdsa", "testdata")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

var curveNames = map[string]string{
	"secp224r1": "P-224", "secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521", "secp256k1": "secp256k1",
}

var hashes = map[string]crypto.Hash{
	"SHA-224": crypto.SHA224, "SHA-256": crypto.SHA256, "SHA-384": crypto.SHA384, "SHA-512": crypto.SHA512,
	"SHA3-224": crypto.SHA3_224, "SHA3-256": crypto.SHA3_256, "SHA3-384": crypto.SHA3_384, "SHA3-512": crypto.SHA3_512,
}

// Load reads every vector of the named files (all of Files when none are
// named) from Dir. A missing or malformed file is an error: tests that
// need vectors fail rather than skip.
func Load(files ...string) ([]Vector, error) {
	if len(files) == 0 {
		files = Files
	}
	var out []Vector
	for _, name := range files {
		v, err := LoadFile(filepath.Join(Dir(), name))
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return out, nil
}

// LoadFile reads the vectors of one Wycheproof EcdsaP1363Verify or
// EcdsaVerify (DER) file.
func LoadFile(path string) ([]Vector, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ecdsatest: %w", err)
	}
	var f struct {
		Algorithm  string `json:"algorithm"`
		TestGroups []struct {
			Type      string        `json:"type"`
			Sha       string        `json:"sha"`
			PublicKey wycheproofKey `json:"publicKey"`
			Key       wycheproofKey `json:"key"` // the name in files before 2024

			Tests []struct {
				TcID    int      `json:"tcId"`
				Comment string   `json:"comment"`
				Flags   []string `json:"flags"`
				Msg     string   `json:"msg"`
				Sig     string   `json:"sig"`
				Result  string   `json:"result"`
			} `json:"tests"`
		} `json:"testGroups"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("ecdsatest: %s: %w", path, err)
	}
	base := filepath.Base(path)
	var out []Vector
	for _, g := range f.TestGroups {
		if g.PublicKey.Uncompressed == "" {
			g.PublicKey = g.Key
		}
		if g.Type != "EcdsaP1363Verify" && g.Type != "EcdsaVerify" {
			return nil, fmt.Errorf("ecdsatest: %s: group type %q, want EcdsaP1363Verify or EcdsaVerify", base, g.Type)
		}
		curve, ok := curveNames[g.PublicKey.Curve]
		if !ok {
			return nil, fmt.Errorf("ecdsatest: %s: unknown curve %q", base, g.PublicKey.Curve)
		}
		h, ok := hashes[g.Sha]
		if !ok {
			return nil, fmt.Errorf("ecdsatest: %s: unknown hash %q", base, g.Sha)
		}
		point, err := hex.DecodeString(g.PublicKey.Uncompressed)
		if err != nil {
			return nil, fmt.Errorf("ecdsatest: %s: public key: %w", base, err)
		}
		for _, t := range g.Tests {
			msg, err1 := hex.DecodeString(t.Msg)
			sig, err2 := hex.DecodeString(t.Sig)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("ecdsatest: %s tcId %d: bad hex", base, t.TcID)
			}
			if t.Result != "valid" && t.Result != "invalid" && t.Result != "acceptable" {
				return nil, fmt.Errorf("ecdsatest: %s tcId %d: result %q", base, t.TcID, t.Result)
			}
			out = append(out, Vector{File: base, TcID: t.TcID, Comment: t.Comment, Flags: t.Flags,
				Curve: curve, Hash: h, Point: point, Msg: msg, Sig: sig, DER: g.Type == "EcdsaVerify",
				Valid: t.Result == "valid", Acceptable: t.Result == "acceptable"})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("ecdsatest: %s: no vectors", base)
	}
	return out, nil
}

// Digest returns the vector's message hashed with its hash function.
func (v *Vector) Digest() []byte {
	h := v.Hash.New()
	h.Write(v.Msg)
	return h.Sum(nil)
}

// RS returns the signature as r‖s of n bytes each (n the curve order's
// length), what a PKCS#11 client sends: Sig itself for a P1363 vector;
// for a DER one, the two integers of a strict DER SEQUENCE (nothing after
// it), when both are non-negative and fit in n bytes. ok is false for a
// DER signature that has no such form (a client could not send it).
func (v *Vector) RS(n int) (rs []byte, ok bool) {
	if !v.DER {
		return v.Sig, true
	}
	var sv struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(v.Sig, &sv)
	if err != nil || len(rest) != 0 {
		return nil, false
	}
	// encoding/asn1 lets some BER through (bytes after the last field
	// inside the SEQUENCE): DER is the one encoding that re-encodes to
	// itself.
	if der, err := asn1.Marshal(sv); err != nil || !bytes.Equal(der, v.Sig) || sv.R.Sign() < 0 || sv.S.Sign() < 0 || sv.R.BitLen() > 8*n || sv.S.BitLen() > 8*n {
		return nil, false
	}
	return append(sv.R.FillBytes(make([]byte, n)), sv.S.FillBytes(make([]byte, n))...), true
}
