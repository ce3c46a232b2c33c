package clients

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"os/exec"
	"strconv"
	"strings"
	"unsafe"

	"github.com/miekg/pkcs11"
	"golang.org/x/sys/unix"
)

// The PKCS#11 3.0 HKDF values miekg/pkcs11 does not have.
const (
	ckmHKDFDerive    = 0x402a
	ckmHKDFData      = 0x402b
	ckmHKDFKeyGen    = 0x402c
	ckkHKDF          = 0x42
	ckfHKDFSaltNull  = 1
	ckfHKDFSaltData  = 2
	sizeofHKDFParams = 64 // CK_HKDF_PARAMS on LP64
)

// hkdf is the child's part for CKM_HKDF_KEY_GEN, CKM_HKDF_DERIVE and
// CKM_HKDF_DATA, which pkcs11-tool 0.23 does not know: a CKK_HKDF key is
// generated, then keys (and a data object) are derived from it with
// CK_HKDF_PARAMS written by hand (LP64 little-endian; the salt and info in
// a page outside the Go heap), each checked with `openssl kdf ... HKDF`:
// Extract and Expand with a salt and an info, and Extract alone with no
// salt.
func (c *inProcessClient) hkdf() {
	t := c.t
	if !c.offers(ckmHKDFKeyGen) && !c.offers(ckmHKDFDerive) && !c.offers(ckmHKDFData) {
		return
	}
	ikm := make([]byte, 32)
	rand.Read(ikm)
	var base pkcs11.ObjectHandle
	if c.offers(ckmHKDFKeyGen) {
		h, err := c.p.GenerateKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(ckmHKDFKeyGen, nil)}, []*pkcs11.Attribute{
			pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false), pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, false),
			pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, true), pkcs11.NewAttribute(pkcs11.CKA_DERIVE, true),
			pkcs11.NewAttribute(pkcs11.CKA_VALUE_LEN, 32),
		})
		if err != nil {
			t.Fatalf("C_GenerateKey(CKM_HKDF_KEY_GEN): %v", err)
		}
		kt := c.attr(h, pkcs11.CKA_KEY_TYPE)
		ikm = c.attr(h, pkcs11.CKA_VALUE)
		if len(ikm) != 32 || binary.LittleEndian.Uint64(append(kt, make([]byte, 8)...)) != ckkHKDF {
			t.Fatalf("CKM_HKDF_KEY_GEN: key type %x, value %x", kt, ikm)
		}
		c.exercised(ckmHKDFKeyGen, "HKDF-KEY-GEN", "generate")
		base = h
	} else {
		base = c.secretKeyWith(pkcs11.CKK_GENERIC_SECRET, ikm, pkcs11.CKA_DERIVE)
	}
	if !c.offers(ckmHKDFDerive) && !c.offers(ckmHKDFData) {
		return
	}
	page, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer unix.Munmap(page)
	salt, info := page[:20], page[20:50]
	rand.Read(salt)
	rand.Read(info)
	addr := func(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
	le := binary.LittleEndian
	param := func(extract, expand bool, saltType uint64, withSalt bool) []byte {
		p := make([]byte, sizeofHKDFParams)
		if extract {
			p[0] = 1
		}
		if expand {
			p[1] = 1
		}
		le.PutUint64(p[8:], pkcs11.CKM_SHA256)
		le.PutUint64(p[16:], saltType)
		if withSalt {
			le.PutUint64(p[24:], addr(salt))
			le.PutUint64(p[32:], uint64(len(salt)))
		}
		le.PutUint64(p[48:], addr(info))
		le.PutUint64(p[56:], uint64(len(info)))
		return p
	}
	derive := func(p []byte, n int) []byte {
		t.Helper()
		tmpl := []*pkcs11.Attribute{
			pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_SECRET_KEY),
			pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, pkcs11.CKK_GENERIC_SECRET),
			pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false),
			pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, false),
			pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, true),
		}
		if n > 0 {
			tmpl = append(tmpl, pkcs11.NewAttribute(pkcs11.CKA_VALUE_LEN, n))
		}
		h, err := c.p.DeriveKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(ckmHKDFDerive, p)}, base, tmpl)
		if err != nil {
			t.Fatalf("C_DeriveKey(CKM_HKDF_DERIVE): %v", err)
		}
		return c.attr(h, pkcs11.CKA_VALUE)
	}
	ossl := func(n int, args ...string) []byte {
		t.Helper()
		out, err := exec.Command("openssl", append(append([]string{"kdf", "-keylen", strconv.Itoa(n), "-kdfopt", "digest:SHA256",
			"-kdfopt", "hexkey:" + hex.EncodeToString(ikm)}, args...), "HKDF")...).Output()
		v, herr := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(string(out)), ":", ""))
		if err != nil || herr != nil || len(v) != n {
			t.Fatalf("openssl kdf HKDF %v: %q, %v", args, out, err)
		}
		return v
	}
	want := ossl(42, "-kdfopt", "hexsalt:"+hex.EncodeToString(salt), "-kdfopt", "hexinfo:"+hex.EncodeToString(info))
	if c.offers(ckmHKDFDerive) {
		okm := derive(param(true, true, ckfHKDFSaltData, true), 42)
		prk := derive(param(true, false, ckfHKDFSaltNull, false), 0)
		wantPRK := ossl(32, "-kdfopt", "mode:EXTRACT_ONLY")
		if !bytes.Equal(okm, want) || !bytes.Equal(prk, wantPRK) {
			t.Errorf("CKM_HKDF_DERIVE: OKM %x, openssl %x; PRK %x, openssl %x", okm, want, prk, wantPRK)
		} else {
			c.exercised(ckmHKDFDerive, "HKDF-DERIVE", "derive")
		}
	}
	// CKM_HKDF_DATA: the same OKM, as a data object's CKA_VALUE.
	if c.offers(ckmHKDFData) {
		h, err := c.p.DeriveKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(ckmHKDFData, param(true, true, ckfHKDFSaltData, true))}, base,
			[]*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_DATA), pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false),
				pkcs11.NewAttribute(pkcs11.CKA_VALUE_LEN, 42)})
		if err != nil {
			t.Fatalf("C_DeriveKey(CKM_HKDF_DATA): %v", err)
		}
		if got := c.attr(h, pkcs11.CKA_VALUE); !bytes.Equal(got, want) {
			t.Errorf("CKM_HKDF_DATA: %x, openssl %x", got, want)
		} else {
			c.exercised(ckmHKDFData, "HKDF-DATA", "derive")
		}
	}
}
