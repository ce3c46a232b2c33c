package fork

import (
	"crypto"
	"crypto/rsa"
	"math/big"
	"syscall"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestForkedChildKilledMidCall: with no helper process in the design, what
// can die in the middle of a call is a forked child itself, its copy of
// the module inside. A child generates an RSA-8192 token key pair (seconds)
// and is killed with SIGKILL once the call has begun; a sibling signs
// while it runs and after, the parent signs after, and a child forked
// afterwards initialises, signs with the token's key and finds no trace of
// the killed child's key. (A copy that cannot be loaded, the other way a
// child's module can fail, is TestForkMissingPieces: CKR_GENERAL_ERROR at
// once, the reason in the log.)
func TestForkedChildKilledMidCall(t *testing.T) {
	h, p := startParent(t)
	pr := newRun(t, p, nil)
	victim := h.fork(p, "victim")
	sibling := h.fork(p, "sibling")
	vr, sr := newRun(t, victim, nil), newRun(t, sibling, nil)

	label := []byte("killed-mid-call")
	pub := tmpl{{ck.CKA_TOKEN, boolv(true)}, {ck.CKA_LABEL, label}, {ck.CKA_MODULUS_BITS, ulv(8192)},
		{ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}}, {ck.CKA_VERIFY, boolv(true)}}
	priv := tmpl{{ck.CKA_TOKEN, boolv(true)}, {ck.CKA_LABEL, label}, {ck.CKA_SIGN, boolv(true)}}
	if err := victim.send(opGenPair|opAck, vr.s, plain(ck.CKM_RSA_PKCS_KEY_PAIR_GEN), pub, priv); err != nil {
		t.Fatal(err)
	}
	if _, _, ack, err := victim.recv(); err != nil || !ack {
		t.Fatalf("victim: no acknowledgement of the call (%v)", err)
	}
	// The sibling works while the victim is inside its call.
	signRSA(t, sr, "sibling, victim in its call")
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := victim.recv(); err == nil {
		t.Fatalf("victim: a reply came before the kill; the call was not long enough to kill it inside")
	}
	rv, out := p.call(opWait, victim.pid)
	if st := syscall.WaitStatus(u64of(out[0])); rv != rvOK || !st.Signaled() || st.Signal() != syscall.SIGKILL {
		t.Fatalf("victim's wait status %v (%s), want killed by SIGKILL", st, rvName(rv))
	}
	signRSA(t, sr, "sibling, after the kill")
	signRSA(t, pr, "parent, after the kill")
	late := h.fork(p, "late child")
	if rv, _ := late.call(opInitialize); rv != rvOK {
		t.Fatalf("late child: C_Initialize = %s", rvName(rv))
	}
	lr := newRun(t, late, nil)
	signRSA(t, lr, "late child")
	if h := lr.find(ck.CKO_PRIVATE_KEY, string(label)); h != 0 {
		t.Errorf("late child: the killed child's key is on the token")
	}
}

// signRSA signs with the token's "rsa" key (newToken's) and checks the
// signature with Go and with the token.
func signRSA(t *testing.T, r *run, when string) {
	t.Helper()
	priv, pub := r.find(ck.CKO_PRIVATE_KEY, "rsa"), r.find(ck.CKO_PUBLIC_KEY, "rsa")
	if priv == 0 || pub == 0 {
		t.Fatalf("%s: the token's rsa key not found", when)
	}
	v := r.attrs(pub, ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT)
	k := &rsa.PublicKey{N: new(big.Int).SetBytes(v[0]), E: int(new(big.Int).SetBytes(v[1]).Int64())}
	m := plain(ck.CKM_SHA256_RSA_PKCS)
	rv, sig := r.sign(m, priv, rtMsg)
	if rv != rvOK {
		t.Fatalf("%s: C_Sign = %s", when, rvName(rv))
	}
	if err := rsa.VerifyPKCS1v15(k, crypto.SHA256, digestOf(crypto.SHA256, rtMsg), sig); err != nil {
		t.Errorf("%s: Go refuses the signature: %v", when, err)
	}
	if rv := r.verify(m, pub, rtMsg, sig); rv != rvOK {
		t.Errorf("%s: C_Verify = %s", when, rvName(rv))
	}
}
