package clients

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"unsafe"

	"github.com/miekg/pkcs11"
	"golang.org/x/sys/unix"
)

// aesDerive is the child's part for CKM_AES_ECB_ENCRYPT_DATA and
// CKM_AES_CBC_ENCRYPT_DATA, which pkcs11-tool 0.23 cannot drive and
// miekg/pkcs11 has no parameter type for: their parameters hold a pointer
// to the data, so the data lives in a page mapped outside the Go heap and
// the parameter is written by hand (CK_KEY_DERIVATION_STRING_DATA, then
// CK_AES_CBC_ENCRYPT_DATA_PARAMS, LP64 little-endian). Each derived key is
// compared with crypto/aes's encryption of the data.
func (c *inProcessClient) aesDerive() {
	t := c.t
	if !c.offers(pkcs11.CKM_AES_ECB_ENCRYPT_DATA) && !c.offers(pkcs11.CKM_AES_CBC_ENCRYPT_DATA) {
		return
	}
	page, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer unix.Munmap(page)
	data := page[:48]
	rand.Read(data)
	ptr := uint64(uintptr(unsafe.Pointer(&page[0])))
	key := make([]byte, 32)
	rand.Read(key)
	base, err := c.p.CreateObject(c.s, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_SECRET_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, pkcs11.CKK_AES),
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false),
		pkcs11.NewAttribute(pkcs11.CKA_VALUE, key),
		pkcs11.NewAttribute(pkcs11.CKA_DERIVE, true),
	})
	if err != nil {
		t.Fatalf("C_CreateObject (AES base key): %v", err)
	}
	block, _ := aes.NewCipher(key)
	derive := func(ckm uint, param []byte, n int) []byte {
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
	if c.offers(pkcs11.CKM_AES_ECB_ENCRYPT_DATA) {
		param := le.AppendUint64(le.AppendUint64(nil, ptr), uint64(len(data)))
		want := make([]byte, len(data))
		for i := 0; i < len(data); i += aes.BlockSize {
			block.Encrypt(want[i:], data[i:])
		}
		if got := derive(pkcs11.CKM_AES_ECB_ENCRYPT_DATA, param, 40); !bytes.Equal(got, want[:40]) {
			t.Errorf("CKM_AES_ECB_ENCRYPT_DATA: %x, crypto/aes %x", got, want[:40])
		} else {
			c.exercised(pkcs11.CKM_AES_ECB_ENCRYPT_DATA, "AES-ECB-ENCRYPT-DATA", "derive")
		}
	}
	if c.offers(pkcs11.CKM_AES_CBC_ENCRYPT_DATA) {
		iv := make([]byte, aes.BlockSize)
		rand.Read(iv)
		param := le.AppendUint64(le.AppendUint64(append([]byte(nil), iv...), ptr), uint64(len(data)))
		want := make([]byte, len(data))
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(want, data)
		if got := derive(pkcs11.CKM_AES_CBC_ENCRYPT_DATA, param, 48); !bytes.Equal(got, want) {
			t.Errorf("CKM_AES_CBC_ENCRYPT_DATA: %x, crypto/aes %x", got, want)
		} else {
			c.exercised(pkcs11.CKM_AES_CBC_ENCRYPT_DATA, "AES-CBC-ENCRYPT-DATA", "derive")
		}
	}
}
