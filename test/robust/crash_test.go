package robust

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/ck"
)

// crashRounds is the number of kill -9 rounds: ROBUST_CRASHES, or 100 (20
// with -short).
func crashRounds(t *testing.T) int {
	if s := os.Getenv("ROBUST_CRASHES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ROBUST_CRASHES=%q: %v", s, err)
		}
		return n
	}
	if testing.Short() {
		return 20
	}
	return 100
}

// killRun starts robusthelper crash op, waits for it to be ready, kills it
// with SIGKILL after a random delay and returns the step lines it printed.
func killRun(t *testing.T, env []string, op string, maxDelay time.Duration, rng *mrand.Rand) []string {
	t.Helper()
	cmd := exec.Command(helperBin, "crash", op)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	timeout := time.After(2 * time.Minute) // a hang guard
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("crash %s: helper exited before ready: %v", op, got)
			}
			got = append(got, l)
			ready = l == "ready"
		case <-timeout:
			_ = cmd.Process.Kill()
			t.Fatalf("crash %s: helper not ready", op)
		}
	}
	time.Sleep(time.Duration(rng.Int64N(int64(maxDelay))))
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatalf("kill: %v", err)
	}
	for l := range lines {
		got = append(got, l)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(interface{ Signaled() bool }); !ok || !ws.Signaled() {
		t.Fatalf("crash %s: helper ended by itself (%v) before the kill:\n%s", op, err, strings.Join(got, "\n"))
	}
	for _, l := range got {
		if strings.HasPrefix(l, "FAIL") {
			t.Fatalf("crash %s: %s", op, l)
		}
	}
	return got
}

// inFlight returns the argument of the last "step begin" without its
// "step end", and the last completed one.
func inFlight(lines []string) (begun, ended string, interrupted bool) {
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "step" {
			continue
		}
		switch f[1] {
		case "begin":
			begun, interrupted = f[2], true
		case "end":
			ended, interrupted = f[2], false
		}
	}
	return begun, ended, interrupted
}

// lastStep is the last "step" line's second word (begin, token, end, idle).
func lastStep(lines []string) string {
	s := ""
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "step" {
			s = f[1]
		}
	}
	return s
}

// TestKillNine kills a process with SIGKILL at random moments of key
// generation, key import, key deletion, a PIN change (user or SO) and
// token initialisation, and checks the token after every kill:
//
//   - it opens (C_GetTokenInfo says initialised), and the SO PIN and the
//     user PIN both log in;
//   - after an interrupted PIN change exactly one of the old and the new
//     PIN works (the other gives CKR_PIN_INCORRECT); after a completed one
//     only the new PIN works;
//   - after an interrupted C_InitToken the objects are all there or all
//     gone, the SO PIN works, and the user PIN works or is not initialised
//     (CKR_USER_PIN_NOT_INITIALIZED: the kill fell between C_InitToken and
//     C_InitPIN, two calls); the test then sets it again as the SO;
//   - every object is whole: each private key has all its attributes and
//     signs (verified in software with its own public values); each public
//     key has its private half (C_GenerateKeyPair stores the pair at once;
//     import creates the private half first and deletion removes the
//     public half first, so no sequence of kills leaves a lone public
//     key).
func TestKillNine(t *testing.T) {
	k := newTok(t, "")
	k.initToken(t)
	priv, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(k.dir, "import.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(priv)})
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	rounds := crashRounds(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d rounds", seed, rounds)
	rng := mrand.New(mrand.NewPCG(seed, 0))
	user, so := userPIN, soPIN
	other := func(p, a, b string) string {
		if p == a {
			return b
		}
		return a
	}
	signed := map[string]bool{} // private keys already checked to sign
	start := time.Now()
	counts := map[string]int{}
	interrupted := 0
	for round := range rounds {
		ops := []string{"keygen", "import", "delete", "pin", "init"}
		op := ops[round%len(ops)]
		if op == "pin" {
			op = []string{"pinuser", "pinso"}[(round/len(ops))%2]
		}
		counts[op]++
		before := objectLabels(t, k, user)
		env := k.with("ROBUST_USER_PIN="+user, "ROBUST_SO_PIN="+so, "ROBUST_IMPORT_KEY="+keyFile)
		switch op {
		case "pinuser":
			env = append(env, "ROBUST_NEW_PIN="+other(user, userPIN, newPIN))
		case "pinso":
			env = append(env, "ROBUST_NEW_PIN="+other(so, soPIN, newPIN))
		}
		maxDelay := 60 * time.Millisecond
		if op == "keygen" {
			maxDelay = 300 * time.Millisecond
		}
		lines := killRun(t, env, op, maxDelay, rng)
		x := loadModule(t, k)
		ti, err := x.m.TokenInfo(x.slot)
		if err != nil || ti.Flags&ck.CKF_TOKEN_INITIALIZED == 0 {
			t.Fatalf("round %d (%s): token info %+v, %v", round, op, ti, err)
		}
		begun, ended, cut := inFlight(lines)
		if cut {
			interrupted++
		}
		// Which PINs must work now.
		switch op {
		case "pinuser", "pinso":
			cur := &user
			who := uint64(ck.CKU_USER)
			if op == "pinso" {
				cur, who = &so, ck.CKU_SO
			}
			want := *cur
			if ended != "" {
				want = ended
			}
			candidates := []string{want}
			if cut {
				candidates = append(candidates, begun)
			}
			works := ""
			for _, pin := range candidates {
				sh := x.session(0, "")
				err := x.m.Login(sh, who, []byte(pin))
				switch {
				case err == nil:
					if works != "" {
						t.Fatalf("round %d (%s): both %q and %q log in", round, op, works, pin)
					}
					works = pin
					x.must("logout", x.m.Logout(sh))
				case ck.RV(err) != uint64(ck.CKR_PIN_INCORRECT):
					t.Fatalf("round %d (%s): login with %q: %v", round, op, pin, err)
				}
				x.must("close", x.m.CloseSession(sh))
			}
			if works == "" {
				t.Fatalf("round %d (%s): none of %q logs in (lines %v)", round, op, candidates, lines)
			}
			*cur = works
		case "init":
			sh := x.session(0, "")
			err := x.m.Login(sh, ck.CKU_USER, []byte(user))
			switch {
			case err == nil:
				x.must("logout", x.m.Logout(sh))
			case ck.RV(err) == uint64(ck.CKR_USER_PIN_NOT_INITIALIZED) && lastStep(lines) != "end":
				// Killed between C_InitToken and C_InitPIN: finish as the SO.
				x.must("SO login", x.m.Login(sh, ck.CKU_SO, []byte(so)))
				x.must("init PIN", x.m.InitPIN(sh, []byte(user)))
				x.must("logout", x.m.Logout(sh))
			default:
				t.Fatalf("round %d (init, last step %q): user login: %v", round, lastStep(lines), err)
			}
			x.must("close", x.m.CloseSession(sh))
		}
		x.m.Close()
		after := objectLabels(t, k, user)
		if op == "init" && lastStep(lines) != "" {
			if len(after) != 0 && !sameLabels(before, after) {
				t.Fatalf("round %d (init): objects neither kept nor all gone: before %v, after %v", round, before, after)
			}
		}
		checkWhole(t, k, user, so, signed, fmt.Sprintf("round %d (%s)", round, op))
	}
	t.Logf("%d kills in %v (%v), %d interrupted an operation in flight; %d private keys signed",
		rounds, time.Since(start).Round(time.Millisecond), counts, interrupted, len(signed))
	if interrupted < rounds/4 {
		t.Errorf("only %d of %d kills interrupted an operation: the kills are not landing inside operations", interrupted, rounds)
	}
}

// objectLabels lists "class:label" of every object (logged in as the user).
func objectLabels(t *testing.T, k *tok, user string) map[string]int {
	t.Helper()
	x := loadModule(t, k)
	defer x.m.Close()
	sh := x.session(ck.CKU_USER, user)
	out := map[string]int{}
	for _, o := range x.find(sh) {
		a := x.attrs(sh, o, ck.CKA_CLASS, ck.CKA_LABEL)
		c, _ := ck.ParseULong(a[ck.CKA_CLASS])
		out[fmt.Sprintf("%s:%s", ck.Name("CKO_", c), a[ck.CKA_LABEL])]++
	}
	return out
}

func sameLabels(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// checkWhole checks both PINs and that every object is whole (see
// TestKillNine). Private keys not yet in signed sign a message.
func checkWhole(t *testing.T, k *tok, user, so string, signed map[string]bool, where string) {
	t.Helper()
	x := loadModule(t, k)
	defer x.m.Close()
	sh := x.session(0, "")
	if err := x.m.Login(sh, ck.CKU_SO, []byte(so)); err != nil {
		t.Fatalf("%s: SO PIN %q: %v", where, so, err)
	}
	x.must("logout", x.m.Logout(sh))
	if err := x.m.Login(sh, ck.CKU_USER, []byte(user)); err != nil {
		t.Fatalf("%s: user PIN %q: %v", where, user, err)
	}
	privs := map[string]bool{}
	var pubs []string
	for _, o := range x.find(sh) {
		a := x.attrs(sh, o, ck.CKA_CLASS, ck.CKA_LABEL, ck.CKA_KEY_TYPE, ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT)
		c, _ := ck.ParseULong(a[ck.CKA_CLASS])
		label := string(a[ck.CKA_LABEL])
		switch c {
		case ck.CKO_PRIVATE_KEY:
			privs[label] = true
			pub := x.publicKey(sh, o)
			if signed[label] {
				continue
			}
			msg := []byte("whole? " + label)
			sig, err := x.sign(sh, o, msg)
			if err != nil {
				t.Fatalf("%s: private key %s does not sign: %v", where, label, err)
			}
			if err := verify(pub, msg, sig); err != nil {
				t.Fatalf("%s: private key %s: bad signature: %v", where, label, err)
			}
			signed[label] = true
		case ck.CKO_PUBLIC_KEY:
			x.publicKey(sh, o)
			pubs = append(pubs, label)
		default:
			t.Fatalf("%s: unexpected object class %d (%s)", where, c, label)
		}
	}
	for _, label := range pubs {
		if !privs[label] {
			t.Fatalf("%s: public key %s without its private half", where, label)
		}
	}
}
