// Package wycheproof holds the Project Wycheproof test vectors the RSA
// tests use (C2SP/wycheproof, Apache-2.0: testdata/LICENSE), one copy of
// each file, copied unchanged into testdata/, and their loader. The tests of
// engine/alg/rsa (the private and public operations), token/rsapad (the
// encodings) and token (C_Verify with the SHA-3 mechanisms) read the same
// files through it. Nothing but tests imports it.
//
// The files come from C2SP/wycheproof's testvectors_v1/ (schemas *_v1.json:
// a group's key in publicKey/privateKey), except the SHA-3 RSA PKCS#1 v1.5
// ones (rsa_signature_2048_sha3_*_test.json), which testvectors_v1 does not
// have: they come from google/wycheproof's testvectors/ (snapshot
// v0.0.0-20191219022705-2196000605e4), whose groups give the public key as n
// and e (RSAGroup.N, RSAGroup.E; RSAGroup.Public reads either form).
package wycheproof

import (
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

//go:embed testdata/*.json
var files embed.FS

// Hex is a byte string written in hex in the JSON files.
type Hex []byte

// UnmarshalJSON decodes the hex string.
func (h *Hex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	*h = v
	return err
}

// RSAFile is one RSA vector file (the fields the tests use).
type RSAFile struct {
	Algorithm     string     `json:"algorithm"`
	Schema        string     `json:"schema"`
	NumberOfTests int        `json:"numberOfTests"`
	TestGroups    []RSAGroup `json:"testGroups"`
}

// RSAGroup is a group of test cases on one key and one set of parameters.
type RSAGroup struct {
	SHA        string `json:"sha"`    // hash of the message (or of the label, OAEP)
	MGFSHA     string `json:"mgfSha"` // MGF1's hash (PSS, OAEP)
	SLen       int    `json:"sLen"`   // salt length (PSS)
	PrivateKey RSAKey `json:"privateKey"`
	PublicKey  RSAKey `json:"publicKey"`
	// N and E are the public key in the older schemas
	// (rsassa_pkcs1_verify_schema.json): n, e in hex, n possibly with a
	// leading zero byte.
	N     Hex    `json:"n"`
	E     Hex    `json:"e"`
	Tests []Test `json:"tests"`
}

// Public returns the group's public modulus (without leading zero bytes)
// and exponent, from publicKey or from the older schemas' n and e.
func (g *RSAGroup) Public() (n, e []byte) {
	n, e = g.PublicKey.Modulus, g.PublicKey.PublicExponent
	if len(n) == 0 {
		n, e = g.N, g.E
	}
	for len(n) > 0 && n[0] == 0 {
		n = n[1:]
	}
	return n, e
}

// RSAKey is a key's numbers, big-endian; absent ones are empty.
type RSAKey struct {
	Modulus         Hex `json:"modulus"`
	PublicExponent  Hex `json:"publicExponent"`
	PrivateExponent Hex `json:"privateExponent"`
	Prime1          Hex `json:"prime1"`
	Prime2          Hex `json:"prime2"`
	Exponent1       Hex `json:"exponent1"`
	Exponent2       Hex `json:"exponent2"`
	Coefficient     Hex `json:"coefficient"`
}

// Test is one test case. Result is "valid", "invalid" or "acceptable".
type Test struct {
	TcID    int      `json:"tcId"`
	Comment string   `json:"comment"`
	Flags   []string `json:"flags"`
	Msg     Hex      `json:"msg"`
	Sig     Hex      `json:"sig"`
	Ct      Hex      `json:"ct"`
	Label   Hex      `json:"label"`
	Result  string   `json:"result"`
}

// RSA loads testdata/name and checks it: of the given schema, with as many
// test cases as its header says, and at least one.
func RSA(name, schema string) (*RSAFile, error) {
	b, err := files.ReadFile("testdata/" + name)
	if err != nil {
		return nil, fmt.Errorf("wycheproof: %w", err)
	}
	var f RSAFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("wycheproof: %s: %w", name, err)
	}
	if f.Schema != schema {
		return nil, fmt.Errorf("wycheproof: %s: schema %q, want %q", name, f.Schema, schema)
	}
	n := 0
	for _, g := range f.TestGroups {
		n += len(g.Tests)
	}
	if n == 0 || n != f.NumberOfTests {
		return nil, fmt.Errorf("wycheproof: %s: %d test cases, the header says %d", name, n, f.NumberOfTests)
	}
	return &f, nil
}
