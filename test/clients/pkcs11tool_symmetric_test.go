package clients

// TestPKCS11Tool's exercises of the secret-key mechanisms: AES and generic
// secret key generation, the AES block modes, CMAC and HMAC.

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"math/bits"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/miekg/pkcs11"
)

// IDs of the secret keys TestPKCS11Tool generates with pkcs11-tool.
const (
	aesGenID  = "c1" // AES-256, extractable
	hmacGenID = "c2" // generic secret of 64 bytes (SoftHSMv2 wants the hash size), extractable
	desGenID  = "c3" // single DES, extractable
	des3GenID = "c4" // three-key Triple DES, extractable
)

// secretKeyIDs are the IDs of secret keys TestPKCS11Tool signs with.
var secretKeyIDs = map[string]bool{aesGenID: true, hmacGenID: true}

// hmacMechs are the HMAC mechanisms by pkcs11-tool's names, with their
// hashes, CKM_*_HMAC and CKM_*_HMAC_GENERAL values and `openssl mac
// -digest` names. pkcs11-tool 0.23 has no name for the SHA-512/t HMACs
// (it lists them as mechtype-0x...): inProcess ones are driven in process.
var hmacMechs = []struct {
	name         string
	h            func() hash.Hash
	mac, general uint
	digest       string
	inProcess    bool
}{
	{"SHA-1-HMAC", sha1.New, pkcs11.CKM_SHA_1_HMAC, pkcs11.CKM_SHA_1_HMAC_GENERAL, "SHA1", false},
	{"SHA224-HMAC", sha256.New224, pkcs11.CKM_SHA224_HMAC, pkcs11.CKM_SHA224_HMAC_GENERAL, "SHA224", false},
	{"SHA256-HMAC", sha256.New, pkcs11.CKM_SHA256_HMAC, pkcs11.CKM_SHA256_HMAC_GENERAL, "SHA256", false},
	{"SHA384-HMAC", sha512.New384, pkcs11.CKM_SHA384_HMAC, pkcs11.CKM_SHA384_HMAC_GENERAL, "SHA384", false},
	{"SHA512-HMAC", sha512.New, pkcs11.CKM_SHA512_HMAC, pkcs11.CKM_SHA512_HMAC_GENERAL, "SHA512", false},
	{"MD5-HMAC", md5.New, pkcs11.CKM_MD5_HMAC, pkcs11.CKM_MD5_HMAC_GENERAL, "MD5", false},
	{"SHA3-224-HMAC", func() hash.Hash { return sha3.New224() }, pkcs11.CKM_SHA3_224_HMAC, pkcs11.CKM_SHA3_224_HMAC_GENERAL, "SHA3-224", false},
	{"SHA3-256-HMAC", func() hash.Hash { return sha3.New256() }, pkcs11.CKM_SHA3_256_HMAC, pkcs11.CKM_SHA3_256_HMAC_GENERAL, "SHA3-256", false},
	{"SHA3-384-HMAC", func() hash.Hash { return sha3.New384() }, pkcs11.CKM_SHA3_384_HMAC, pkcs11.CKM_SHA3_384_HMAC_GENERAL, "SHA3-384", false},
	{"SHA3-512-HMAC", func() hash.Hash { return sha3.New512() }, pkcs11.CKM_SHA3_512_HMAC, pkcs11.CKM_SHA3_512_HMAC_GENERAL, "SHA3-512", false},
	{"SHA512-224-HMAC", sha512.New512_224, pkcs11.CKM_SHA512_224_HMAC, pkcs11.CKM_SHA512_224_HMAC_GENERAL, "SHA512-224", true},
	{"SHA512-256-HMAC", sha512.New512_256, pkcs11.CKM_SHA512_256_HMAC, pkcs11.CKM_SHA512_256_HMAC_GENERAL, "SHA512-256", true},
}

// secretKeys generates an AES-256 key (AES-KEY-GEN), a generic secret
// (GENERIC-SECRET-KEY-GEN), a DES and a Triple DES key (DES-KEY-GEN,
// DES3-KEY-GEN) with pkcs11-tool --keygen, all extractable, and reads
// their values back; the AES key then encrypts and decrypts with AES-ECB,
// AES-CBC and AES-CBC-PAD through pkcs11-tool --encrypt/--decrypt, checked
// against `openssl enc`. It returns the HMAC signatures for
// TestPKCS11Tool's signing loop (pkcs11-tool --sign/--verify with
// SHA*-HMAC, checked with crypto/hmac and `openssl mac`).
func (ex *p11Exercises) secretKeys(t *testing.T, msg []byte) []signCase {
	t.Helper()
	tk := ex.tk
	var aesKey, hmacKey []byte
	gen := func(mech, keyType, id string, size int) []byte {
		if !ex.has(mech, "generate") {
			return nil
		}
		tk.p11Login("--keygen", "--key-type", keyType, "--id", id, "--label", strings.ToLower(mech), "--extractable")
		tk.p11Login("--read-object", "--type", "secrkey", "--id", id, "--output-file", tk.path("key-"+id))
		v := tk.read("key-" + id)
		if len(v) != size || bytes.Equal(v, make([]byte, size)) {
			t.Fatalf("%s: key of %d bytes generated (%x), want %d random bytes", mech, len(v), v, size)
		}
		ex.mark(mech, "generate")
		return v
	}
	aesKey = gen("AES-KEY-GEN", "AES:32", aesGenID, 32)
	hmacKey = gen("GENERIC-SECRET-KEY-GEN", "GENERIC:64", hmacGenID, 64)
	gen("DES-KEY-GEN", "DES:8", desGenID, 8) // no mechanism uses it: made and read back
	gen("DES3-KEY-GEN", "DES3:24", des3GenID, 24)

	// The AES modes pkcs11-tool 0.23 has parameters for (AES-CTR and
	// AES-GCM: in process; pkcs11-tool 0.23 encrypts with no Triple DES
	// mode: in process too). 100 bytes for the padded mode, 64 otherwise.
	for _, c := range []struct {
		mech, cipher, keygen, id, iv string
		key                          []byte
	}{
		{"AES-ECB", "aes-256-ecb", "AES-KEY-GEN", aesGenID, "", aesKey},
		{"AES-CBC", "aes-256-cbc", "AES-KEY-GEN", aesGenID, "0f0e0d0c0b0a09080706050403020100", aesKey},
		{"AES-CBC-PAD", "aes-256-cbc", "AES-KEY-GEN", aesGenID, "0f0e0d0c0b0a09080706050403020100", aesKey},
	} {
		if !ex.has(c.mech, "encrypt") && !ex.has(c.mech, "decrypt") {
			continue
		}
		if c.key == nil {
			t.Errorf("%s listed, but no key could be generated (no %s)", c.mech, c.keygen)
			continue
		}
		ex.mark(c.mech, "encrypt")
		ex.mark(c.mech, "decrypt")
		t.Run("encrypt/"+c.mech, func(t *testing.T) {
			tk := tk.with(t)
			pt := make([]byte, 64)
			ossl := []string{"enc", "-" + c.cipher, "-K", hex.EncodeToString(c.key), "-nopad"}
			if strings.HasSuffix(c.mech, "-PAD") {
				pt, ossl = make([]byte, 100), ossl[:len(ossl)-1]
			}
			rand.Read(pt)
			args := []string{"-m", c.mech, "--id", c.id}
			if c.iv != "" {
				args = append(args, "--iv", c.iv)
				ossl = append(ossl, "-iv", c.iv)
			}
			in := tk.write("pt-"+c.mech, string(pt))
			want := []byte(tk.mustRun("openssl", append(ossl, "-in", in)...).stdout)
			tk.p11Login(append(args, "--encrypt", "-i", in, "-o", tk.path("ct-"+c.mech))...)
			if got := tk.read("ct-" + c.mech); !bytes.Equal(got, want) {
				t.Fatalf("pkcs11-tool --encrypt %v: %x\nopenssl enc: %x", args, got, want)
			}
			// Decrypt what openssl made.
			tk.write("ossl-"+c.mech, string(want))
			tk.p11Login(append(args, "--decrypt", "-i", tk.path("ossl-"+c.mech), "-o", tk.path("dec-"+c.mech))...)
			if got := tk.read("dec-" + c.mech); !bytes.Equal(got, pt) {
				t.Fatalf("pkcs11-tool --decrypt %v of openssl's ciphertext: %x, want %x", args, got, pt)
			}
		})
	}

	// HMAC: signed and verified in TestPKCS11Tool's signing loop.
	var cases []signCase
	msgFile := tk.write("hmac-msg.bin", string(msg))
	for _, m := range hmacMechs {
		if m.inProcess || !ex.has(m.name, "sign") {
			continue
		}
		if hmacKey == nil {
			t.Errorf("%s listed, but no generic secret could be generated (no GENERIC-SECRET-KEY-GEN)", m.name)
			continue
		}
		mac := hmac.New(m.h, hmacKey)
		mac.Write(msg)
		want := mac.Sum(nil)
		cases = append(cases, signCase{m.name, hmacGenID, []string{"-m", m.name}, msg, func(sig []byte) error {
			if !bytes.Equal(sig, want) {
				return fmt.Errorf("MAC %x, crypto/hmac %x", sig, want)
			}
			out, err := exec.Command("openssl", "mac", "-digest", m.digest, "-macopt", "hexkey:"+hex.EncodeToString(hmacKey),
				"-in", msgFile, "HMAC").Output()
			if err != nil || !strings.EqualFold(strings.TrimSpace(string(out)), hex.EncodeToString(sig)) {
				return fmt.Errorf("openssl mac -digest %s: %s (%v), token %x", m.digest, out, err, sig)
			}
			return nil
		}})
	}
	return cases
}

// symmetric is the child's part for secret keys: AES-CTR and AES-GCM
// (parameters pkcs11-tool 0.23 cannot pass), AES-CMAC, AES-MAC and their
// _GENERAL forms (pkcs11-tool 0.23 looks for a private key to sign with
// them), and the CKM_SHA*_HMAC_GENERAL mechanisms (a CK_MAC_GENERAL_PARAMS
// length) and the SHA-512/t HMACs (pkcs11-tool 0.23 has no name for
// them). Each checked with crypto/cipher, crypto/hmac, `openssl mac` or
// `openssl enc`, and each signature by C_Verify, good and altered.
func (c *inProcessClient) symmetric() {
	t := c.t
	key := make([]byte, 32)
	rand.Read(key)
	aesKey := c.secretKey(pkcs11.CKK_AES, key)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, 100) // not whole blocks
	rand.Read(msg)

	// AES-CTR: CK_AES_CTR_PARAMS is a CK_ULONG of counter bits and the
	// 16-byte counter block; the whole block counts (128 bits), as
	// crypto/cipher's CTR does.
	if c.offers(pkcs11.CKM_AES_CTR) {
		cb := make([]byte, aes.BlockSize)
		rand.Read(cb)
		cb[15] = 0xff // the counter carries into the next byte at once
		ctr := pkcs11.NewMechanism(pkcs11.CKM_AES_CTR, append(ulongParam(128), cb...))
		want := make([]byte, len(msg))
		cipher.NewCTR(block, cb).XORKeyStream(want, msg)
		if got := c.encrypt(ctr, aesKey, msg); !bytes.Equal(got, want) {
			t.Errorf("AES-CTR: %x, crypto/cipher %x", got, want)
		} else {
			c.exercised(pkcs11.CKM_AES_CTR, "AES-CTR", "encrypt")
		}
		if got, err := c.decrypt(ctr, aesKey, want); err != nil || !bytes.Equal(got, msg) {
			t.Errorf("AES-CTR decryption: %x, %v", got, err)
		} else {
			c.exercised(pkcs11.CKM_AES_CTR, "AES-CTR", "decrypt")
		}
	}

	// AES-GCM, 96-bit IV, additional data, 128-bit tag.
	if c.offers(pkcs11.CKM_AES_GCM) {
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			t.Fatal(err)
		}
		nonce, aad := make([]byte, 12), []byte("additional data")
		rand.Read(nonce)
		want := gcm.Seal(nil, nonce, msg, aad)
		gp := pkcs11.NewGCMParams(nonce, aad, 128)
		got := c.encrypt(pkcs11.NewMechanism(pkcs11.CKM_AES_GCM, gp), aesKey, msg)
		gp.Free()
		if !bytes.Equal(got, want) {
			t.Errorf("AES-GCM: %x, crypto/cipher %x", got, want)
		} else {
			c.exercised(pkcs11.CKM_AES_GCM, "AES-GCM", "encrypt")
		}
		gp = pkcs11.NewGCMParams(nonce, aad, 128)
		pt, err := c.decrypt(pkcs11.NewMechanism(pkcs11.CKM_AES_GCM, gp), aesKey, want)
		gp.Free()
		bad := bytes.Clone(want)
		bad[len(bad)-1] ^= 1
		gp = pkcs11.NewGCMParams(nonce, aad, 128)
		_, badErr := c.decrypt(pkcs11.NewMechanism(pkcs11.CKM_AES_GCM, gp), aesKey, bad)
		gp.Free()
		if err != nil || !bytes.Equal(pt, msg) || badErr == nil {
			t.Errorf("AES-GCM decryption: %x, %v; of an altered tag: %v", pt, err, badErr)
		} else {
			c.exercised(pkcs11.CKM_AES_GCM, "AES-GCM", "decrypt")
		}
	}

	c.desModes()
	c.des2KeyGen()

	// AES-CMAC (16 bytes) and CKM_AES_CMAC_GENERAL (asked for 12), and
	// DES3-CMAC (8) and CKM_DES3_CMAC_GENERAL (asked for 5), against
	// `openssl mac`.
	c.cmac("AES-256-CBC", key, aesKey, msg, namedMech{pkcs11.CKM_AES_CMAC, "AES-CMAC"},
		namedMech{pkcs11.CKM_AES_CMAC_GENERAL, "AES-CMAC-GENERAL"}, 12)
	if c.offers(pkcs11.CKM_DES3_CMAC) || c.offers(pkcs11.CKM_DES3_CMAC_GENERAL) {
		k3 := make([]byte, 24)
		rand.Read(k3)
		c.cmac("DES-EDE3-CBC", k3, c.secretKey(pkcs11.CKK_DES3, k3), msg, namedMech{pkcs11.CKM_DES3_CMAC, "DES3-CMAC"},
			namedMech{pkcs11.CKM_DES3_CMAC_GENERAL, "DES3-CMAC-GENERAL"}, 5)
	}

	// AES-MAC (half a block) and CKM_AES_MAC_GENERAL (asked for 12):
	// CBC-MAC, against `openssl enc`.
	c.cbcMAC("aes-256-cbc", aes.BlockSize, key, aesKey, msg, namedMech{pkcs11.CKM_AES_MAC, "AES-MAC"},
		namedMech{pkcs11.CKM_AES_MAC_GENERAL, "AES-MAC-GENERAL"}, 12)

	// CKM_*_HMAC_GENERAL, 10 bytes of the HMAC; the whole HMAC of the
	// mechanisms pkcs11-tool has no name for, also checked with `openssl mac`.
	hkey := make([]byte, 32)
	rand.Read(hkey)
	hmacKey := c.secretKey(pkcs11.CKK_GENERIC_SECRET, hkey)
	msgFile := writeTemp(t, msg)
	for _, m := range hmacMechs {
		mac := hmac.New(m.h, hkey)
		mac.Write(msg)
		full := mac.Sum(nil)
		if m.inProcess && c.offers(m.mac) {
			mech := pkcs11.NewMechanism(m.mac, nil)
			out, err := exec.Command("openssl", "mac", "-digest", m.digest, "-macopt", "hexkey:"+hex.EncodeToString(hkey),
				"-in", msgFile, "HMAC").Output()
			if sig := c.sign(mech, hmacKey, msg); !bytes.Equal(sig, full) {
				t.Errorf("%s: %x, crypto/hmac %x", m.name, sig, full)
			} else if err != nil || !strings.EqualFold(strings.TrimSpace(string(out)), hex.EncodeToString(sig)) {
				t.Errorf("%s: openssl mac -digest %s: %s (%v), token %x", m.name, m.digest, out, err, sig)
			} else if c.verifies(mech, hmacKey, msg, sig) {
				c.exercised(m.mac, m.name, "sign")
				c.exercised(m.mac, m.name, "verify")
			}
		}
		if !c.offers(m.general) {
			continue
		}
		want := full[:10]
		mech := pkcs11.NewMechanism(m.general, ulongParam(10))
		if sig := c.sign(mech, hmacKey, msg); !bytes.Equal(sig, want) {
			t.Errorf("%s-GENERAL: %x, crypto/hmac %x", m.name, sig, want)
		} else if c.verifies(mech, hmacKey, msg, sig) {
			c.exercised(m.general, m.name+"-GENERAL", "sign")
			c.exercised(m.general, m.name+"-GENERAL", "verify")
		}
	}
}

// writeTemp writes b to a file of the test's temporary directory.
func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// desModes is the child's part for the DES modes, which pkcs11-tool 0.23
// neither encrypts with nor wraps with in CBC (nor imports a single-DES
// key for): DES-ECB, DES-CBC, DES-CBC-PAD with a DES key and DES3-ECB,
// DES3-CBC, DES3-CBC-PAD with a three-key one encrypt and decrypt 100
// (padded) or 64 bytes, and wrap and unwrap an AES-128 key (DES3-ECB
// wraps through pkcs11-tool); each result checked against `openssl enc`
// (single DES: with OpenSSL 3's legacy provider).
func (c *inProcessClient) desModes() {
	for _, k := range []struct {
		kt       uint
		n        int
		ecb      namedMech
		cbc, pad namedMech
		ossl     string // openssl's cipher: -ecb, -cbc added
		extra    []string
	}{
		{pkcs11.CKK_DES, 8, namedMech{pkcs11.CKM_DES_ECB, "DES-ECB"}, namedMech{pkcs11.CKM_DES_CBC, "DES-CBC"},
			namedMech{pkcs11.CKM_DES_CBC_PAD, "DES-CBC-PAD"}, "des", []string{"-provider", "legacy", "-provider", "default"}},
		{pkcs11.CKK_DES3, 24, namedMech{pkcs11.CKM_DES3_ECB, "DES3-ECB"}, namedMech{pkcs11.CKM_DES3_CBC, "DES3-CBC"},
			namedMech{pkcs11.CKM_DES3_CBC_PAD, "DES3-CBC-PAD"}, "des-ede3", nil},
	} {
		if !c.offers(k.ecb.ckm) && !c.offers(k.cbc.ckm) && !c.offers(k.pad.ckm) {
			continue
		}
		c.desKeyModes(k.kt, k.n, k.ossl, k.extra, []namedMech{k.ecb, k.cbc, k.pad})
	}
}

// desKeyModes runs the ECB, CBC and CBC_PAD mechanisms ms with a random key
// of type kt and n bytes (openssl's cipher ossl, with the options extra).
func (c *inProcessClient) desKeyModes(kt uint, n int, ossl string, extra []string, ms []namedMech) {
	t := c.t
	key, iv := make([]byte, n), make([]byte, 8)
	rand.Read(key)
	rand.Read(iv)
	kek := c.secretKeyWith(kt, key, pkcs11.CKA_ENCRYPT, pkcs11.CKA_DECRYPT, pkcs11.CKA_WRAP, pkcs11.CKA_UNWRAP)
	target := make([]byte, 16)
	rand.Read(target)
	wrapped := c.secretKeyWith(pkcs11.CKK_AES, target, pkcs11.CKA_EXTRACTABLE)
	for i, m := range ms {
		cbc, pad := i > 0, i == 2
		if !c.offers(m.ckm) {
			continue
		}
		mech := pkcs11.NewMechanism(m.ckm, nil)
		args := append([]string{"enc", "-" + ossl + "-ecb", "-K", hex.EncodeToString(key)}, extra...)
		if cbc {
			mech = pkcs11.NewMechanism(m.ckm, iv)
			args = append([]string{"enc", "-" + ossl + "-cbc", "-K", hex.EncodeToString(key), "-iv", hex.EncodeToString(iv)}, extra...)
		}
		msg := make([]byte, 64)
		if pad {
			msg = make([]byte, 100)
		} else {
			args = append(args, "-nopad")
		}
		rand.Read(msg)
		want, err := exec.Command("openssl", append(args, "-in", writeTemp(t, msg))...).Output()
		if err != nil {
			t.Fatalf("openssl %v: %v", args, err)
		}
		if got := c.encrypt(mech, kek, msg); !bytes.Equal(got, want) {
			t.Errorf("%s: %x, openssl enc %x", m.name, got, want)
		} else {
			c.exercised(m.ckm, m.name, "encrypt")
		}
		if got, err := c.decrypt(mech, kek, want); err != nil || !bytes.Equal(got, msg) {
			t.Errorf("%s decryption: %x, %v", m.name, got, err)
		} else {
			c.exercised(m.ckm, m.name, "decrypt")
		}
		if (!cbc && kt != pkcs11.CKK_DES) || !c.wraps(m.ckm) { // DES3-ECB wraps through pkcs11-tool
			continue
		}
		wantWrap, err := exec.Command("openssl", append(args, "-in", writeTemp(t, target))...).Output()
		if err != nil {
			t.Fatalf("openssl %v: %v", args, err)
		}
		w, err := c.p.WrapKey(c.s, []*pkcs11.Mechanism{mech}, kek, wrapped)
		if err != nil || !bytes.Equal(w, wantWrap) {
			t.Errorf("%s wrap: %x, %v; openssl enc %x", m.name, w, err, wantWrap)
			continue
		}
		c.exercised(m.ckm, m.name, "wrap")
		h, err := c.p.UnwrapKey(c.s, []*pkcs11.Mechanism{mech}, kek, w, []*pkcs11.Attribute{
			pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_SECRET_KEY), pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, pkcs11.CKK_AES),
			pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false), pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, false),
			pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, true),
		})
		if err != nil {
			t.Errorf("%s unwrap: %v", m.name, err)
			continue
		}
		a, err := c.p.GetAttributeValue(c.s, h, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_VALUE, nil)})
		if err != nil || !bytes.Equal(a[0].Value, target) {
			t.Errorf("%s unwrapped %x, %v; want %x", m.name, a[0].Value, err, target)
			continue
		}
		c.exercised(m.ckm, m.name, "unwrap")
	}
}

// wraps reports whether mechanism ckm lists CKF_WRAP.
func (c *inProcessClient) wraps(ckm uint) bool {
	info, err := c.p.GetSessionInfo(c.s)
	if err != nil {
		return false
	}
	mi, err := c.p.GetMechanismInfo(info.SlotID, []*pkcs11.Mechanism{pkcs11.NewMechanism(ckm, nil)})
	return err == nil && mi.Flags&pkcs11.CKF_WRAP != 0
}

// cmac signs msg with a CMAC mechanism and its _GENERAL form (asked for
// n bytes) under key (h on the token), checks both against `openssl mac
// -cipher ossl CMAC`, and verifies them.
func (c *inProcessClient) cmac(ossl string, key []byte, h pkcs11.ObjectHandle, msg []byte, full, general namedMech, n int) {
	t := c.t
	if !c.offers(full.ckm) && !c.offers(general.ckm) {
		return
	}
	out, err := exec.Command("openssl", "mac", "-cipher", ossl, "-macopt", "hexkey:"+hex.EncodeToString(key),
		"-in", writeTemp(t, msg), "CMAC").Output()
	if err != nil {
		t.Fatalf("openssl mac CMAC (%s): %v", ossl, err)
	}
	mac, err := hex.DecodeString(strings.TrimSpace(string(out)))
	if err != nil || len(mac) < n {
		t.Fatalf("openssl mac CMAC (%s) gave %q", ossl, out)
	}
	c.macPair(h, msg, full, general, mac, len(mac), n, "openssl mac")
}

// macPair signs msg under h with a MAC mechanism (whose MAC is the
// leading fullLen bytes of ref) and its _GENERAL form asked for n bytes,
// compares both with ref (what `by` computed), and verifies them.
func (c *inProcessClient) macPair(h pkcs11.ObjectHandle, msg []byte, full, general namedMech, ref []byte, fullLen, n int, by string) {
	for _, m := range []struct {
		namedMech
		mech *pkcs11.Mechanism
		want []byte
	}{
		{full, pkcs11.NewMechanism(full.ckm, nil), ref[:fullLen]},
		{general, pkcs11.NewMechanism(general.ckm, ulongParam(uint64(n))), ref[:n]},
	} {
		if !c.offers(m.ckm) {
			continue
		}
		if sig := c.sign(m.mech, h, msg); !bytes.Equal(sig, m.want) {
			c.t.Errorf("%s: %x, %s %x", m.name, sig, by, m.want)
		} else if c.verifies(m.mech, h, msg, sig) {
			c.exercised(m.ckm, m.name, "sign")
			c.exercised(m.ckm, m.name, "verify")
		}
	}
}

// secretKeyWith makes a session secret key with the given value and the
// given boolean attributes true.
func (c *inProcessClient) secretKeyWith(kt uint, value []byte, trues ...uint) pkcs11.ObjectHandle {
	c.t.Helper()
	a := []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_SECRET_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, kt),
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false),
		pkcs11.NewAttribute(pkcs11.CKA_VALUE, value),
	}
	for _, typ := range trues {
		a = append(a, pkcs11.NewAttribute(typ, true))
	}
	h, err := c.p.CreateObject(c.s, a)
	if err != nil {
		c.t.Fatalf("C_CreateObject (secret key of type 0x%x): %v", kt, err)
	}
	return h
}

// des2KeyGen is the child's part for CKM_DES2_KEY_GEN, which pkcs11-tool
// 0.23 has no key type for: a two-key DES key of 16 bytes with odd parity
// and the check value of `openssl enc -des-ede` of a zero block.
func (c *inProcessClient) des2KeyGen() {
	t := c.t
	if !c.offers(pkcs11.CKM_DES2_KEY_GEN) {
		return
	}
	h, err := c.p.GenerateKey(c.s, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_DES2_KEY_GEN, nil)}, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false), pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, false),
		pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, true),
	})
	if err != nil {
		t.Fatalf("C_GenerateKey(CKM_DES2_KEY_GEN): %v", err)
	}
	v := c.attr(h, pkcs11.CKA_VALUE)
	odd := len(v) == 16
	for _, b := range v {
		odd = odd && bits.OnesCount8(b)%2 == 1
	}
	if !odd {
		t.Fatalf("CKM_DES2_KEY_GEN: %x, want 16 bytes of odd parity", v)
	}
	zero, err := exec.Command("openssl", "enc", "-des-ede", "-nopad", "-K", hex.EncodeToString(v), "-in", writeTemp(t, make([]byte, 8))).Output()
	if err != nil || len(zero) != 8 {
		t.Fatalf("openssl enc -des-ede: %v", err)
	}
	if kcv := c.attr(h, pkcs11.CKA_CHECK_VALUE); !bytes.Equal(kcv, zero[:3]) {
		t.Fatalf("CKM_DES2_KEY_GEN: CKA_CHECK_VALUE %x, openssl %x", kcv, zero[:3])
	}
	c.exercised(pkcs11.CKM_DES2_KEY_GEN, "DES2-KEY-GEN", "generate")
}

// cbcMAC signs msg with a CBC-MAC mechanism (half a block) and its
// _GENERAL form (asked for n bytes) under key (h on the token), checks
// both against the last block of `openssl enc -<ossl> -nopad` with a zero
// IV over msg padded with zeros to whole blocks, and verifies them.
func (c *inProcessClient) cbcMAC(ossl string, bs int, key []byte, h pkcs11.ObjectHandle, msg []byte, full, general namedMech, n int) {
	t := c.t
	if !c.offers(full.ckm) && !c.offers(general.ckm) {
		return
	}
	padded := make([]byte, (len(msg)+bs-1)/bs*bs)
	copy(padded, msg)
	out, err := exec.Command("openssl", "enc", "-"+ossl, "-nopad", "-K", hex.EncodeToString(key),
		"-iv", strings.Repeat("00", bs), "-in", writeTemp(t, padded)).Output()
	if err != nil || len(out) != len(padded) || len(padded) == 0 {
		t.Fatalf("openssl enc -%s for CBC-MAC: %v (%d bytes)", ossl, err, len(out))
	}
	c.macPair(h, msg, full, general, out[len(out)-bs:], bs/2, n, "openssl enc")
}
