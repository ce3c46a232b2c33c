package clients

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/rand"
	"encoding/binary"
	"unsafe"

	"github.com/miekg/pkcs11"
	"golang.org/x/sys/unix"
)

// aesDerive is the child's part for CKM_AES_ECB_ENCRYPT_DATA and
// CKM_AES_CBC_ENCRYPT_DATA and the DES ones (CKM_DES_*_ENCRYPT_DATA,
// CKM_DES3_*_ENCRYPT_DATA), which pkcs11-tool 0.23 cannot drive and
// miekg/pkcs11 has no parameter type for: their parameters hold a pointer
// to the data, so the data lives in a page mapped outside the Go heap and
// the parameter is written by hand (CK_KEY_DERIVATION_STRING_DATA, then
// CK_AES_CBC_ENCRYPT_DATA_PARAMS or CK_DES_CBC_ENCRYPT_DATA_PARAMS, LP64
// little-endian). Each derived key is compared with crypto/aes's or
// crypto/des's encryption of the data.
func (c *inProcessClient) aesDerive() {
	key := make([]byte, 32)
	rand.Read(key)
	block, _ := aes.NewCipher(key)
	c.encryptDataDerive(pkcs11.CKK_AES, key, block, namedMech{pkcs11.CKM_AES_ECB_ENCRYPT_DATA, "AES-ECB-ENCRYPT-DATA"},
		namedMech{pkcs11.CKM_AES_CBC_ENCRYPT_DATA, "AES-CBC-ENCRYPT-DATA"})
	k1 := make([]byte, 8)
	rand.Read(k1)
	b1, _ := des.NewCipher(k1)
	c.encryptDataDerive(pkcs11.CKK_DES, k1, b1, namedMech{pkcs11.CKM_DES_ECB_ENCRYPT_DATA, "DES-ECB-ENCRYPT-DATA"},
		namedMech{pkcs11.CKM_DES_CBC_ENCRYPT_DATA, "DES-CBC-ENCRYPT-DATA"})
	k3 := make([]byte, 24)
	rand.Read(k3)
	b3, _ := des.NewTripleDESCipher(k3)
	c.encryptDataDerive(pkcs11.CKK_DES3, k3, b3, namedMech{pkcs11.CKM_DES3_ECB_ENCRYPT_DATA, "DES3-ECB-ENCRYPT-DATA"},
		namedMech{pkcs11.CKM_DES3_CBC_ENCRYPT_DATA, "DES3-CBC-ENCRYPT-DATA"})
}

// namedMech is a mechanism and pkcs11-tool's name of it.
type namedMech struct {
	ckm  uint
	name string
}

// encryptDataDerive derives keys with the ECB and CBC derivations by data
// encryption from a base key of type kt and value key (whose cipher is
// block), and checks them with block.
func (c *inProcessClient) encryptDataDerive(kt uint, key []byte, block cipher.Block, ecb, cbc namedMech) {
	t := c.t
	if !c.offers(ecb.ckm) && !c.offers(cbc.ckm) {
		return
	}
	page, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer unix.Munmap(page)
	bs := block.BlockSize()
	data := page[:3*bs]
	rand.Read(data)
	ptr := uint64(uintptr(unsafe.Pointer(&page[0])))
	base := c.secretKeyWith(kt, key, pkcs11.CKA_DERIVE)
	n := len(data) - bs/2 // not a whole number of blocks
	derive := func(ckm uint, param []byte) []byte {
		t.Helper()
		h, err := c.p.DeriveKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(ckm, param)}, base, []*pkcs11.Attribute{
			pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_SECRET_KEY),
			pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, pkcs11.CKK_GENERIC_SECRET),
			pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false),
			pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, false),
			pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, true),
			pkcs11.NewAttribute(pkcs11.CKA_VALUE_LEN, n),
		})
		if err != nil {
			t.Fatalf("C_DeriveKey(0x%x): %v", ckm, err)
		}
		return c.attr(h, pkcs11.CKA_VALUE)
	}
	le := binary.LittleEndian
	if c.offers(ecb.ckm) {
		param := le.AppendUint64(le.AppendUint64(nil, ptr), uint64(len(data)))
		want := make([]byte, len(data))
		for i := 0; i < len(data); i += bs {
			block.Encrypt(want[i:], data[i:])
		}
		if got := derive(ecb.ckm, param); !bytes.Equal(got, want[:n]) {
			t.Errorf("%s: %x, crypto %x", ecb.name, got, want[:n])
		} else {
			c.exercised(ecb.ckm, ecb.name, "derive")
		}
	}
	if c.offers(cbc.ckm) {
		iv := make([]byte, bs)
		rand.Read(iv)
		param := le.AppendUint64(le.AppendUint64(append([]byte(nil), iv...), ptr), uint64(len(data)))
		want := make([]byte, len(data))
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(want, data)
		if got := derive(cbc.ckm, param); !bytes.Equal(got, want[:n]) {
			t.Errorf("%s: %x, crypto %x", cbc.name, got, want[:n])
		} else {
			c.exercised(cbc.ckm, cbc.name, "derive")
		}
	}
}
