// Package wycheproof holds the Project Wycheproof test vectors the RSA
// tests use (C2SP/wycheproof, Apache-2.0: testdata/LICENSE), one copy of
// each file, copied unchanged into testdata/, and their loader. The tests of
// engine/rsa (the private and public operations) and token/rsapad (the
// encodings) read the same files through it. Nothing but tests imports it.
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
	Tests      []Test `json:"tests"`
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
