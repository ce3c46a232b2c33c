// Package symtest loads the Project Wycheproof vectors of the symmetric
// mechanisms (AES-GCM, AES-CBC-PKCS5, AES-CMAC, HMAC-SHA*) kept in
// token/testdata/wycheproof, for the tests that run them through the
// token's Go API and through the C ABI.
package symtest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Vector is one Wycheproof case of an AEAD, IND-CPA or MAC test file.
type Vector struct {
	File    string   // base name of the JSON file
	TcID    int      // Wycheproof test case id
	Comment string   // what the case tests
	Flags   []string // Wycheproof flags
	Key     []byte
	IV      []byte // AEAD and IND-CPA files
	AAD     []byte // AEAD files
	Msg     []byte
	CT      []byte // AEAD (without the tag) and IND-CPA files
	Tag     []byte // AEAD and MAC files
	TagBits int    // the group's tag (MAC) size in bits
	Valid   bool   // result "valid"
	// Acceptable is true for result "acceptable": either outcome is fine.
	Acceptable bool
}

// Files by mechanism family.
const (
	GCM  = "aes_gcm_test.json"
	CBC  = "aes_cbc_pkcs5_test.json"
	CMAC = "aes_cmac_test.json"
)

// HMACFiles are the HMAC vector files by hash name.
var HMACFiles = map[string]string{
	"SHA-1": "hmac_sha1_test.json", "SHA-224": "hmac_sha224_test.json", "SHA-256": "hmac_sha256_test.json",
	"SHA-384": "hmac_sha384_test.json", "SHA-512": "hmac_sha512_test.json",
}

// Dir is the directory of the vector files (token/testdata/wycheproof in
// the source tree; tests run from the source tree).
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("token", "testdata", "wycheproof")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "wycheproof")
}

type fileJSON struct {
	TestGroups []struct {
		TagSize int `json:"tagSize"`
		Tests   []struct {
			TcID    int      `json:"tcId"`
			Comment string   `json:"comment"`
			Flags   []string `json:"flags"`
			Key     string   `json:"key"`
			IV      string   `json:"iv"`
			AAD     string   `json:"aad"`
			Msg     string   `json:"msg"`
			CT      string   `json:"ct"`
			Tag     string   `json:"tag"`
			Result  string   `json:"result"`
		} `json:"tests"`
	} `json:"testGroups"`
}

// Load reads every case of one vector file.
func Load(file string) ([]Vector, error) {
	raw, err := os.ReadFile(filepath.Join(Dir(), file))
	if err != nil {
		return nil, err
	}
	var f fileJSON
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("symtest: %s: %w", file, err)
	}
	var out []Vector
	for _, g := range f.TestGroups {
		for _, t := range g.Tests {
			v := Vector{File: file, TcID: t.TcID, Comment: t.Comment, Flags: t.Flags, TagBits: g.TagSize,
				Valid: t.Result == "valid", Acceptable: t.Result == "acceptable"}
			for _, h := range []struct {
				dst *[]byte
				src string
			}{{&v.Key, t.Key}, {&v.IV, t.IV}, {&v.AAD, t.AAD}, {&v.Msg, t.Msg}, {&v.CT, t.CT}, {&v.Tag, t.Tag}} {
				b, err := hex.DecodeString(h.src)
				if err != nil {
					return nil, fmt.Errorf("symtest: %s tcId %d: %w", file, t.TcID, err)
				}
				*h.dst = b
			}
			out = append(out, v)
		}
	}
	return out, nil
}
