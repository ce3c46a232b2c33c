package fleet

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// TestFleetFollowerKill: a follower of a three-member cluster is killed
// with SIGKILL (and started again) during a mixed load of two module host
// processes — each signs from one thread while another generates key
// pairs and destroys some, with its own session — and of a process next
// to each guessing the user PIN. Every acknowledged key generation is on
// both hosts afterwards and every acknowledged destruction gone from
// both, every signature verifies, no sign call fails or waits (< 250 ms),
// no host hangs, and the wrong PINs acknowledged never exceed the
// lockout limit.
func TestFleetFollowerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	mixedKill(t, false)
}

// TestFleetLeaderKill is TestFleetFollowerKill with the leader killed: the
// hosts' writes and logins wait for (or fail during) the election, their
// signatures do not.
func TestFleetLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	mixedKill(t, true)
}

// mixedKill runs the mixed load of two hosts and two PIN guessers on a
// three-member cluster and kills a member during it: the leader, or a
// follower.
func mixedKill(t *testing.T, leader bool) {
	const limit = 20
	// A cheap Argon2id (the token's policy, set at init): guesses come
	// fast enough to reach the limit during the run.
	f := newFleet(t, 3, "max_pin_tries = "+strconv.Itoa(limit)+"\n"+e2e.CheapKDF)
	const seconds = 4
	hctx, hcancel := context.WithTimeout(f.ctx, 3*time.Minute) // a hang guard
	defer hcancel()
	hostArgs := []string{f.lib, "fleet", "123456", "fault-key", strconv.Itoa(seconds), "mixed"}
	hosts, ins, waitHosts := f.startHosts(t, hctx, hostArgs, hostArgs)
	// The hosts start together once both are logged in, and the guessers
	// then (else the lockout could refuse the hosts' logins).
	waitOutput(t, hctx, "hosts not ready", "POINT", hosts)
	send(t, "go", ins...)
	guessArgs := []string{f.lib, "fleet", "999999", "-", strconv.Itoa(seconds), "guess"}
	guessers, _, waitGuessers := f.startHosts(t, hctx, guessArgs, guessArgs)
	time.Sleep(1200 * time.Millisecond)
	lead := f.leader()
	var victim *etcdMember
	for _, m := range f.members {
		if (m == lead) == leader {
			victim = m
			break
		}
	}
	if lead == nil || victim == nil {
		t.Fatal("no leader, or no follower")
	}
	role := map[bool]string{false: "follower", true: "leader"}[leader]
	down := time.Now()
	victim.kill()
	time.Sleep(1500 * time.Millisecond)
	up := time.Now()
	if err := victim.start(f.member); err != nil {
		t.Fatal(err)
	}
	// The hosts' writers have stopped once each says WRITTEN.
	waitOutput(t, hctx, "hosts' writes", "WRITTEN", hosts)
	t.Logf("%s %s killed for %v", role, victim.name, up.Sub(down).Round(time.Millisecond))

	// Writes: acknowledged generations and destructions, and what each
	// host finds at the end.
	gen := map[string]bool{} // label → acknowledged (true) or failed
	del := map[string]bool{} // label → destruction acknowledged or failed
	for i := range hosts {
		out := hosts[i].String()
		var l signLog
		var gens, genFailed, dels, delFailed int
		for line := range strings.Lines(out) {
			fl := strings.Fields(line)
			if l.line(t, fl) || len(fl) < 2 {
				continue
			}
			switch fl[0] {
			case "GEN":
				gen[fl[1]] = fl[2] == "0x0"
				gens++
				if fl[2] != "0x0" {
					genFailed++
				}
			case "DEL":
				del[fl[1]] = fl[2] == "0x0"
				dels++
				if fl[2] != "0x0" {
					delFailed++
				}
			}
		}
		t.Logf("host %d: %d signatures (slowest sign call %.1f ms), %d key generations (%d failed), %d destructions (%d failed)",
			i, len(l.at), l.maxUS/1e3, gens, genFailed, dels, delFailed)
		l.check(t, i, out)
		// The load must have happened: writes to check below. How many
		// fit in the run is a figure (a loaded machine makes fewer), not
		// a bound.
		if gens-genFailed < 2 {
			t.Errorf("host %d: only %d key generations acknowledged: nothing to check", i, gens-genFailed)
		}
	}
	// What each host finds: asked again (its view follows the store
	// through its watch) until it holds every acknowledged outcome, a
	// two-minute hang guard; the last answer's misses are the errors.
	wrong := func(i int, have map[string]bool) []string {
		var bad []string
		for label, ok := range gen {
			d, deleted := del[label]
			switch {
			case !ok || (deleted && !d):
				// Failed: may have been applied or not; either is right.
			case deleted:
				if have[label] {
					bad = append(bad, fmt.Sprintf("host %d still finds %s, whose destruction was acknowledged", i, label))
				}
			default:
				if !have[label] {
					bad = append(bad, fmt.Sprintf("host %d does not find %s, whose generation was acknowledged", i, label))
				}
			}
		}
		return bad
	}
	for i := range hosts {
		var bad []string
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			bad = wrong(i, listing(t, hctx, &hosts[i], ins[i]))
			if len(bad) == 0 || time.Now().After(deadline) {
				break
			}
		}
		for _, b := range bad {
			t.Error(b)
		}
	}
	send(t, "done", ins...)
	for _, in := range ins {
		in.Close()
	}
	errs := append(waitHosts(), waitGuessers()...)
	for i := range hosts {
		if errs[i] != nil {
			t.Fatalf("host %d: %v\n%s", i, errs[i], tail(hosts[i].String()))
		}
	}

	// Logins: the wrong PINs acknowledged never exceed the limit.
	incorrect, locked := 0, 0
	for i := range guessers {
		out := guessers[i].String()
		if errs[2+i] != nil {
			t.Fatalf("guesser %d: %v\n%s", i, errs[2+i], tail(out))
		}
		for line := range strings.Lines(out) {
			switch strings.TrimSpace(line) {
			case "GUESS 0xa0": // CKR_PIN_INCORRECT
				incorrect++
			case "GUESS 0xa4": // CKR_PIN_LOCKED
				locked++
			}
		}
	}
	t.Logf("guessers: %d wrong PINs counted, %d refused as locked (limit %d)", incorrect, locked, limit)
	if incorrect > limit || locked == 0 {
		t.Errorf("%d wrong PINs acknowledged as incorrect (limit %d), %d refused as locked", incorrect, limit, locked)
	}
}

// listing asks a mixed host (after WRITTEN) for the mixed-* private keys
// it finds and returns them.
func listing(t *testing.T, ctx context.Context, out *e2e.SyncBuffer, in io.Writer) map[string]bool {
	t.Helper()
	before := strings.Count(out.String(), "LISTED\n")
	if _, err := io.WriteString(in, "list\n"); err != nil {
		t.Fatalf("host stdin: %v", err)
	}
	var s string
	for s = out.String(); strings.Count(s, "LISTED\n") == before; s = out.String() {
		if ctx.Err() != nil {
			t.Fatalf("host does not list:\n%s", tail(s))
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The lines between the last two LISTED (or WRITTEN and the first).
	s = strings.TrimSuffix(s[strings.LastIndex(s, "WRITTEN\n"):], "LISTED\n")
	if k := strings.LastIndex(s, "LISTED\n"); k >= 0 {
		s = s[k:]
	}
	have := map[string]bool{}
	for line := range strings.Lines(s) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "HAVE" {
			have[f[1]] = true
		}
	}
	return have
}
