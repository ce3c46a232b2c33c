package engines

import (
	"crypto/ecdh"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// TestDeviceECDH: ECDH derivations (CKM_ECDH1_DERIVE on P-256) through the
// token on a modexpd that flips a bit of 20% of its results; d·Q is a
// request to the daemon. With fallback "soft" every secret is released and
// right; with "fail" the faulty derivations answer CKR_DEVICE_ERROR; no
// wrong secret is ever released, and the token counts the faults.
func TestDeviceECDH(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 20
	}
	for _, fallback := range []string{"soft", "fail"} {
		t.Run(fallback, func(t *testing.T) {
			d, md := faultyDevice(t, "bitflip:0.2", fallback)
			sh := md.session()
			before := d.Status()
			mine, err := ecdh.P256().GenerateKey(rand.Reader)
			md.must(err)
			priv, err := md.m.CreateObject(sh, []token.Attribute{
				tattr(ck.CKA_CLASS, ck.ULong(ck.CKO_PRIVATE_KEY)), tattr(ck.CKA_KEY_TYPE, ck.ULong(ck.CKK_EC)),
				tattr(ck.CKA_DERIVE, ck.Bool(true)), tattr(ck.CKA_EC_PARAMS, []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}),
				tattr(ck.CKA_VALUE, mine.Bytes()),
			})
			md.must(err)
			var released, refused int
			for i := range n {
				peer, err := ecdh.P256().GenerateKey(rand.Reader)
				md.must(err)
				want, err := mine.ECDH(peer.PublicKey())
				md.must(err)
				mech := &token.Mechanism{Type: ck.CKM_ECDH1_DERIVE,
					ECDH: &token.ECDH1DeriveParams{KDF: ck.CKD_NULL, PublicData: peer.PublicKey().Bytes()}}
				if md.deriveOrRefuse(sh, mech, priv, want, fmt.Sprintf("derivation %d", i)) {
					released++
				} else {
					refused++
				}
			}
			st, injected, _ := md.faultsShown(d, before)
			t.Logf("fallback %s: ECDH released %d refused %d; faults detected %d, injected %d", fallback, released, refused, st.Faults, injected)
			switch fallback {
			case "soft":
				if released != n {
					t.Fatal("with the software fallback every derivation is released")
				}
			case "fail":
				if refused == 0 {
					t.Fatal("no derivation refused")
				}
			}
		})
	}
}
