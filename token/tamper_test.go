package token

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	bolt "go.etcd.io/bbolt"
)

// storedAttr and the two functions below read and write the keystore's
// object records (keystore/records.go) the way an attacker with write
// access to the file would: from the format, without any key.
type storedAttr struct {
	typ    uint64
	sealed bool
	value  []byte
}

func parseRecord(t *testing.T, b []byte) (version byte, attrs []storedAttr, mac []byte) {
	t.Helper()
	version, b = b[0], b[1:]
	if version == 2 {
		mac, b = b[len(b)-32:], b[:len(b)-32]
	}
	n, k := binary.Uvarint(b)
	b = b[k:]
	for range n {
		typ, k := binary.Uvarint(b)
		b = b[k:]
		sealed := b[0] == 1
		l, k := binary.Uvarint(b[1:])
		b = b[1+k:]
		attrs = append(attrs, storedAttr{typ, sealed, bytes.Clone(b[:l])})
		b = b[l:]
	}
	if len(b) != 0 {
		t.Fatalf("record parse: %d bytes left", len(b))
	}
	return version, attrs, mac
}

func formatRecord(version byte, attrs []storedAttr, mac []byte) []byte {
	out := []byte{version}
	out = binary.AppendUvarint(out, uint64(len(attrs)))
	for _, a := range attrs {
		out = binary.AppendUvarint(out, a.typ)
		out = append(out, map[bool]byte{false: 0, true: 1}[a.sealed])
		out = binary.AppendUvarint(out, uint64(len(a.value)))
		out = append(out, a.value...)
	}
	return append(out, mac...)
}

// TestTokenFileEditDoesNotExposeKey is issue 17's first attack: with the
// module closed, the sealed CKA_SENSITIVE and CKA_EXTRACTABLE of a key are
// replaced in the file by clear FALSE and TRUE (the record kept otherwise).
// Before records were authenticated, the next login read
// CKA_PRIVATE_EXPONENT and CKA_PRIME_1. Now the record is refused (and
// logged): the key is not served at all. RSA and EC private keys and an AES
// secret key alike: the record MAC knows no key type.
func TestTokenFileEditDoesNotExposeKey(t *testing.T) {
	priv, _ := rsaKeyTemplates(testRSAKey)
	sensitive := []Attribute{aBool(ck.CKA_TOKEN, true), aBool(ck.CKA_SENSITIVE, true), aBool(ck.CKA_EXTRACTABLE, false)}
	for _, tc := range []struct {
		name    string
		create  func(t *testing.T, m *Module, sh uint64) uint64
		class   uint64
		secrets []uint64
	}{
		{"RSA", func(t *testing.T, m *Module, sh uint64) uint64 {
			h, err := m.CreateObject(sh, append(priv, sensitive...))
			must(t, err)
			return h
		}, ck.CKO_PRIVATE_KEY, []uint64{ck.CKA_PRIVATE_EXPONENT, ck.CKA_PRIME_1}},
		{"EC", func(t *testing.T, m *Module, sh uint64) uint64 {
			_, h := genEC(t, m, sh, "P-256", true)
			return h
		}, ck.CKO_PRIVATE_KEY, []uint64{ck.CKA_VALUE}},
		{"AES", func(t *testing.T, m *Module, sh uint64) uint64 {
			h, err := m.CreateObject(sh, aesTmpl([]byte("0123456789abcdef"), sensitive...))
			must(t, err)
			return h
		}, ck.CKO_SECRET_KEY, []uint64{ck.CKA_VALUE}},
	} {
		t.Run(tc.name, func(t *testing.T) { editKeyRecord(t, tc.create, tc.class, tc.secrets) })
	}
}

func editKeyRecord(t *testing.T, create func(*testing.T, *Module, uint64) uint64, class uint64, secrets []uint64) {
	conf := testConfig(t, "")
	m := load(t)
	slot := m.SlotList(true)[0]
	initToken(t, m, slot)
	sh := openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	h := create(t, m, sh)
	res, err := m.GetAttributeValue(sh, h, secrets[:1])
	if err == nil && res[0].Err == 0 {
		t.Fatal("sensitive key readable before the edit")
	}
	m.Close()

	path := filepath.Join(filepath.Dir(conf), "token.db")
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	edited := 0
	must(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("objects"))
		return b.ForEach(func(k, v []byte) error {
			version, attrs, mac := parseRecord(t, v)
			for i := range attrs {
				switch attrs[i].typ {
				case ck.CKA_SENSITIVE:
					attrs[i].sealed, attrs[i].value = false, []byte{0}
					edited++
				case ck.CKA_EXTRACTABLE:
					attrs[i].sealed, attrs[i].value = false, []byte{1}
				}
			}
			return b.Put(bytes.Clone(k), formatRecord(version, attrs, mac))
		})
	}))
	must(t, db.Close())
	if edited != 1 {
		t.Fatalf("%d records edited", edited)
	}

	m = load(t)
	sh = openRW(t, m, slot)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	for _, o := range find(t, m, sh) {
		for _, typ := range secrets {
			if got, err := m.GetAttributeValue(sh, o, []uint64{typ}); err == nil && got[0].Err == 0 && len(got[0].Value) > 0 {
				t.Fatalf("object %d gave %s after the file was edited", o, ck.Name("CKA_", typ))
			}
		}
	}
	if n := len(find(t, m, sh, aULong(ck.CKA_CLASS, class))); n != 0 {
		t.Fatalf("%d keys of class %s served after the edit", n, ck.Name("CKO_", class))
	}
	// And the refusal is in the module's log.
	logText, err := os.ReadFile(filepath.Join(filepath.Dir(conf), "module.log"))
	must(t, err)
	if !strings.Contains(string(logText), "object record refused") || !strings.Contains(string(logText), "MAC mismatch") {
		t.Fatalf("the refused record is not logged:\n%s", logText)
	}
}
