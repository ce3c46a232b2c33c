package fork

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestForkedChildEveryMechanism drives csrc/forkrpc.c from Go: the parent
// logs in, makes one token key pair per key type and runs the table of
// forkmech_test.go (the three interfaces' C_GetInfo and mechanism lists,
// every mechanism's info, and a round trip of every listed mechanism, each
// operation its flags claim, checked in Go) and the CKA_ALLOWED_MECHANISMS
// checks of allowed; then a forked child that calls
// C_Initialize, two threads of another child at once, a grandchild that
// never calls C_Initialize, and the parent again must leave the parent's
// transcript line for line (return values, and the fingerprints of every
// deterministic output). The round trips of slowMechs run in the first
// child only.
func TestForkedChildEveryMechanism(t *testing.T) {
	h, p := startParent(t)
	setup := newRun(t, p, nil)
	g := rtSetup(setup)
	allowedSetup(setup)
	start := time.Now()
	parent := tableRun(t, p, g, false, true)
	t.Logf("parent: %d transcript lines in %v", len(parent), time.Since(start).Round(time.Millisecond))

	child := h.fork(p, "child")
	start = time.Now()
	compareRuns(t, parent, quick(tableRun(t, child, g, true, false)), "child")
	t.Logf("child: the table in %v", time.Since(start).Round(time.Millisecond))

	// Two threads of one child at once, each on its own session.
	child2 := h.fork(p, "child2")
	if rv, _ := child2.call(opInitialize); rv != rvOK {
		t.Fatalf("child2: C_Initialize = %s", rvName(rv))
	}
	thread := h.thread(child2, "child2-thread")
	t.Run("threads", func(t *testing.T) {
		for _, c := range []*rpc{child2, thread} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.t = t
				compareRuns(t, parent, tableRun(t, c, g, false, true), c.name)
			})
		}
	})
	child2.t, thread.t = t, t

	// A grandchild (a new generation) that never calls C_Initialize: it
	// inherits the child's initialised module.
	grandchild := h.fork(child, "grandchild")
	compareRuns(t, parent, tableRun(t, grandchild, g, false, true), "grandchild")

	compareRuns(t, parent, tableRun(t, p, g, false, true), "parent-after")
}

// startParent makes a token, starts forkrpc on it and initialises the
// module in the parent.
func startParent(t *testing.T) (*rpcHost, *rpc) {
	t.Helper()
	h := startRPC(t, newToken(t))
	if rv, _ := h.main.call(opInitialize); rv != rvOK {
		t.Fatalf("parent: C_Initialize = %s", rvName(rv))
	}
	return h, h.main
}

// tableRun runs the info and the table over c (after C_Initialize when
// initialize is set; without slowMechs when skipSlow is) and returns the
// transcript.
func tableRun(t testing.TB, c *rpc, g *goKeys, initialize, skipSlow bool) []string {
	t.Helper()
	if initialize {
		if rv, _ := c.call(opInitialize); rv != rvOK {
			t.Fatalf("%s: C_Initialize = %s", c.name, rvName(rv))
		}
	}
	r := newRun(t, c, g)
	mechs, flags := r.info()
	if len(mechs) < 100 {
		t.Errorf("%s: %d mechanisms listed", c.name, len(mechs))
	}
	r.table(mechs, flags, skipSlow)
	r.allowed()
	r.c.call(opClose, r.s)
	return r.lines
}

// allowedLabel is the token's P-256 key pair whose private key allows
// CKM_ECDSA_SHA256 and CKM_ECDSA only (CKA_ALLOWED_MECHANISMS).
const allowedLabel = "rt-allowed"

// allowedSetup makes the allowedLabel pair when missing (parent only).
func allowedSetup(r *run) {
	r.t.Helper()
	if r.find(ck.CKO_PRIVATE_KEY, allowedLabel) != 0 {
		return
	}
	lab := attr{ck.CKA_LABEL, []byte(allowedLabel)}
	pub := tmpl{{ck.CKA_TOKEN, boolv(true)}, lab, {ck.CKA_EC_PARAMS, oidP256}, {ck.CKA_VERIFY, boolv(true)}}
	priv := tmpl{{ck.CKA_TOKEN, boolv(true)}, lab, {ck.CKA_SIGN, boolv(true)},
		{ck.CKA_ALLOWED_MECHANISMS, ulsv(ck.CKM_ECDSA_SHA256, ck.CKM_ECDSA)}}
	if rv, _ := r.c.call(opGenPair, r.s, plain(ck.CKM_EC_KEY_PAIR_GEN), pub, priv); rv != rvOK {
		r.t.Fatalf("%s: C_GenerateKeyPair(%s) = %s", r.name, allowedLabel, rvName(rv))
	}
}

// allowed checks keys with CKA_ALLOWED_MECHANISMS: the token's P-256 key
// signs with an allowed mechanism (Go verifies) and refuses another
// (CKR_MECHANISM_INVALID); a session AES key that allows CKM_AES_GCM only
// encrypts with it (Go's answer) and refuses CKM_AES_CBC_PAD.
func (r *run) allowed() {
	priv, pub := r.find(ck.CKO_PRIVATE_KEY, allowedLabel), r.find(ck.CKO_PUBLIC_KEY, allowedLabel)
	if priv == 0 || pub == 0 {
		r.t.Fatalf("%s: %s not found", r.name, allowedLabel)
	}
	m := uint64(ck.CKM_ECDSA_SHA256)
	al := r.attrs(priv, ck.CKA_ALLOWED_MECHANISMS)[0]
	r.rec(m, "allowed-mechanisms", rvOK, hex.EncodeToString(al))
	if !bytes.Equal(al, ulsv(ck.CKM_ECDSA_SHA256, ck.CKM_ECDSA)) {
		r.errorf(m, "allowed-mechanisms", "CKA_ALLOWED_MECHANISMS %x", al)
	}
	pt, err := octets(r.attrs(pub, ck.CKA_EC_POINT)[0])
	if err != nil {
		r.t.Fatalf("%s: %v", r.name, err)
	}
	k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pt)
	if err != nil {
		r.t.Fatalf("%s: %v", r.name, err)
	}
	rv, sig := r.sign(plain(m), priv, rtMsg)
	if r.want(m, "allowed-sign", rv, "") {
		a, b := rs(sig)
		if !ecdsa.Verify(k, digestOf(crypto.SHA256, rtMsg), a, b) {
			r.errorf(m, "allowed-sign", "crypto/ecdsa refuses the signature")
		}
	}
	refused := func(m uint64, op string, rv uint64) {
		r.rec(m, op, rv, "")
		if rv != uint64(ck.CKR_MECHANISM_INVALID) {
			r.errorf(m, op, "%s, want CKR_MECHANISM_INVALID", rvName(rv))
		}
	}
	rv, _ = r.c.call(opInit, kSign, r.s, plain(ck.CKM_ECDSA_SHA384), priv)
	refused(ck.CKM_ECDSA_SHA384, "not-allowed-sign-init", rv)

	yes := boolv(true)
	rv, out := r.c.call(opCreate, r.s, tmpl{{ck.CKA_CLASS, ulv(ck.CKO_SECRET_KEY)}, {ck.CKA_KEY_TYPE, ulv(ck.CKK_AES)},
		{ck.CKA_VALUE, rtAES32}, {ck.CKA_TOKEN, boolv(false)}, {ck.CKA_ENCRYPT, yes}, {ck.CKA_DECRYPT, yes},
		{ck.CKA_ALLOWED_MECHANISMS, ulsv(ck.CKM_AES_GCM)}})
	if !r.want(ck.CKM_AES_GCM, "allowed-create", rv, "") {
		return
	}
	h := u64of(out[0])
	c := r.gcmCipher()
	mm, iv := c.param()
	rv, ct := r.crypt(kEncrypt, mm, h, rtMsg)
	if r.want(ck.CKM_AES_GCM, "allowed-encrypt", rv, short(ct)) && !bytes.Equal(ct, c.want(iv, rtMsg)) {
		r.errorf(ck.CKM_AES_GCM, "allowed-encrypt", "%x, Go says %x", ct, c.want(iv, rtMsg))
	}
	rv, _ = r.c.call(opInit, kEncrypt, r.s, mech{typ: ck.CKM_AES_CBC_PAD, param: rtIV16}, h)
	refused(ck.CKM_AES_CBC_PAD, "not-allowed-encrypt-init", rv)
}

// quick is a full transcript without the round trips of slowMechs (their
// info lines stay).
func quick(lines []string) []string {
	slow := map[string]bool{}
	for m := range slowMechs {
		slow[mechName(m)] = true
	}
	var out []string
	for _, l := range lines {
		name, rest, _ := strings.Cut(l, " ")
		if slow[name] && !strings.HasPrefix(rest, "info ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// compareRuns reports every line of got that is not the parent's.
func compareRuns(t testing.TB, parent, got []string, name string) {
	t.Helper()
	if len(got) != len(parent) {
		t.Errorf("%s: %d transcript lines, parent %d", name, len(got), len(parent))
	}
	bad := 0
	for i := range min(len(got), len(parent)) {
		if got[i] != parent[i] {
			if bad++; bad <= 20 {
				t.Errorf("%s line %d:\n got %s\nwant %s", name, i+1, trim(got[i]), trim(parent[i]))
			}
		}
	}
}
