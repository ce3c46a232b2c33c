package robust

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"testing"

	_ "github.com/modexp-token/modexp-token/engine/backend/all" // the engines a slot may name
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// mod is package token loaded in this process on a test token.
type mod struct {
	t    *testing.T
	m    *token.Module
	slot uint64
}

// loadModule loads package token on k's token (as C_Initialize would).
func loadModule(t *testing.T, k *tok) *mod {
	t.Helper()
	k.setEnv(t)
	m, err := token.LoadFromEnv()
	if err != nil {
		t.Fatalf("load module: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	slots := m.SlotList(true)
	if len(slots) != 1 {
		t.Fatalf("slots %v", slots)
	}
	return &mod{t: t, m: m, slot: slots[0]}
}

func (x *mod) must(what string, err error) {
	x.t.Helper()
	if err != nil {
		x.t.Fatalf("%s: %v", what, err)
	}
}

// session opens a R/W session; with a non-empty pin it logs in as who.
func (x *mod) session(who uint64, pin string) uint64 {
	x.t.Helper()
	sh, err := x.m.OpenSession(x.slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	x.must("open session", err)
	if pin != "" {
		x.must("login", x.m.Login(sh, who, []byte(pin)))
	}
	return sh
}

// find returns every object matching tmpl.
func (x *mod) find(sh uint64, tmpl ...token.Attribute) []uint64 {
	x.t.Helper()
	x.must("find init", x.m.FindObjectsInit(sh, tmpl))
	var all []uint64
	for {
		hs, err := x.m.FindObjects(sh, 100)
		x.must("find", err)
		if len(hs) == 0 {
			break
		}
		all = append(all, hs...)
	}
	x.must("find final", x.m.FindObjectsFinal(sh))
	return all
}

// attrs reads attributes; absent or unreadable ones are missing from the map.
func (x *mod) attrs(sh, obj uint64, types ...uint64) map[uint64][]byte {
	x.t.Helper()
	res, err := x.m.GetAttributeValue(sh, obj, types)
	x.must("get attributes", err)
	out := map[uint64][]byte{}
	for i, r := range res {
		if r.Err == 0 {
			out[types[i]] = r.Value
		}
	}
	return out
}

func bytesAttr(t uint64, v []byte) token.Attribute { return token.Attribute{Type: t, Value: v} }
func ulongAttr(t, v uint64) token.Attribute        { return token.Attribute{Type: t, Value: ck.ULong(v)} }

// publicKey reads an RSA public key object.
func (x *mod) publicKey(sh, obj uint64) *rsa.PublicKey {
	x.t.Helper()
	a := x.attrs(sh, obj, ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT)
	n, e := new(big.Int).SetBytes(a[ck.CKA_MODULUS]), new(big.Int).SetBytes(a[ck.CKA_PUBLIC_EXPONENT])
	if n.Sign() == 0 || !e.IsInt64() {
		x.t.Fatalf("object %d: no RSA public key", obj)
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}
}

// sign signs msg with CKM_SHA256_RSA_PKCS.
func (x *mod) sign(sh, key uint64, msg []byte) ([]byte, error) {
	if err := x.m.SignInit(sh, &token.Mechanism{Type: ck.CKM_SHA256_RSA_PKCS}, key); err != nil {
		return nil, err
	}
	sig, _, err := x.m.Sign(sh, msg, token.Out{Cap: 1024})
	return sig, err
}

// verify checks a CKM_SHA256_RSA_PKCS signature in software.
func verify(pub *rsa.PublicKey, msg, sig []byte) error {
	d := sha256.Sum256(msg)
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig)
}
