package engines

import (
	"crypto/sha256"
	"fmt"
	"math/big"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/alg/dh/dhtest"
	"github.com/modexp-token/modexp-token/engine/alg/dsa"
	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// softEngine opens the software engine, for the peers' keys.
func softEngine(t *testing.T) engine.Engine {
	t.Helper()
	e, err := engine.Open("soft")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func tattr(t uint64, v []byte) token.Attribute { return token.Attribute{Type: t, Value: v} }

// dsaTestParams reads engine/alg/dsa's 1024/160 parameters (made by openssl).
func dsaTestParams(t *testing.T) *dsa.Parameters {
	t.Helper()
	p, q, g := e2e.DSAParams(t, "params_1024_160.pem")
	return &dsa.Parameters{P: p, Q: q, G: g}
}

// TestDeviceDSADH: DSA signatures and DH agreements through the token on a
// modexpd that flips a bit of 5% of its results. Every DSA signature's
// g^k and both exponentiations of every DH agreement are requests to the
// daemon. With fallback "soft" everything is released and right; with
// "fail" the faulty operations answer CKR_DEVICE_ERROR; no wrong signature
// or secret is ever released, and the token counts the faults.
func TestDeviceDSADH(t *testing.T) {
	p := dsaTestParams(t)
	grp := dhtest.KnownGroups()[0] // ffdhe2048
	nSig, nDH := 200, 40
	if testing.Short() {
		// At 5 % per request, 60 signatures and 12 agreements met no
		// fault about one run in forty ("the test proves nothing"); 150
		// signatures make that about one in 4,000.
		nSig, nDH = 150, 12
	}
	for _, fallback := range []string{"soft", "fail"} {
		t.Run(fallback, func(t *testing.T) {
			d, md := faultyDevice(t, "bitflip:0.05", fallback)
			sh := md.session()
			before := d.Status()

			// DSA: a key pair made on the token (g^x on the device too:
			// retried until the device gets it right with "fail").
			var pub, priv uint64
			var err error
			for range 10 {
				pub, priv, err = md.m.GenerateKeyPair(sh, &token.Mechanism{Type: ck.CKM_DSA_KEY_PAIR_GEN},
					[]token.Attribute{tattr(ck.CKA_PRIME, p.P.Bytes()), tattr(ck.CKA_SUBPRIME, p.Q.Bytes()), tattr(ck.CKA_BASE, p.G.Bytes())}, nil)
				if err == nil || !isRV(err, ck.CKR_DEVICE_ERROR) {
					break
				}
			}
			md.must(err)
			res, err := md.m.GetAttributeValue(sh, pub, []uint64{ck.CKA_VALUE})
			md.must(err)
			vk, err := dsa.NewPublicKey(p, new(big.Int).SetBytes(res[0].Value))
			md.must(err)
			var released, refused int
			for i := range nSig {
				msg := []byte(fmt.Sprintf("dsa %d", i))
				md.must(md.m.SignInit(sh, &token.Mechanism{Type: ck.CKM_DSA_SHA256}, priv))
				sig, _, err := md.m.Sign(sh, msg, token.Out{Cap: 64})
				switch {
				case err == nil:
					released++
					h := sha256.Sum256(msg)
					if verr := vk.Verify(h[:], sig); verr != nil {
						t.Fatalf("signature %d released but invalid: %v", i, verr)
					}
				case isRV(err, ck.CKR_DEVICE_ERROR):
					refused++
				default:
					t.Fatalf("signature %d: %v", i, err)
				}
			}

			// DH: our key imported, the peer's computed here.
			x, _, _, err := dh.GenerateKey(t.Context(), softEngine(t), &grp, 0, nil)
			md.must(err)
			dhPriv, err := md.m.CreateObject(sh, []token.Attribute{
				tattr(ck.CKA_CLASS, ck.ULong(ck.CKO_PRIVATE_KEY)), tattr(ck.CKA_KEY_TYPE, ck.ULong(ck.CKK_DH)),
				tattr(ck.CKA_DERIVE, ck.Bool(true)), tattr(ck.CKA_PRIME, grp.P.Bytes()), tattr(ck.CKA_BASE, grp.G.Bytes()),
				tattr(ck.CKA_VALUE, x),
			})
			md.must(err)
			var dhReleased, dhRefused int
			for i := range nDH {
				_, peer, _, err := dh.GenerateKey(t.Context(), softEngine(t), &grp, 256, nil)
				md.must(err)
				want := new(big.Int).Exp(new(big.Int).SetBytes(peer), new(big.Int).SetBytes(x), grp.P).FillBytes(make([]byte, 256))
				if md.deriveOrRefuse(sh, &token.Mechanism{Type: ck.CKM_DH_PKCS_DERIVE, Param: peer}, dhPriv, want, fmt.Sprintf("agreement %d", i)) {
					dhReleased++
				} else {
					dhRefused++
				}
			}
			st, injected, after := md.faultsShown(d, before)
			t.Logf("fallback %s: DSA released %d refused %d; DH released %d refused %d; faults detected %d, injected %d (requests %d)",
				fallback, released, refused, dhReleased, dhRefused, st.Faults, injected, after.Modexps()-before.Modexps())
			switch fallback {
			case "soft":
				if released != nSig || dhReleased != nDH {
					t.Fatalf("with the software fallback every operation is released")
				}
			case "fail":
				if refused == 0 && dhRefused == 0 {
					t.Fatal("no operation refused")
				}
				if uint64(refused+dhRefused) > st.DeviceErrors {
					t.Fatalf("refused %d+%d, device errors %d", refused, dhRefused, st.DeviceErrors)
				}
			}
		})
	}
}
