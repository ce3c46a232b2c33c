package fleet

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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
	hctx, hcancel := context.WithTimeout(f.ctx, (seconds+20)*time.Second)
	defer hcancel()
	start := func(out *e2e.SyncBuffer, args ...string) func() error {
		cmd := exec.CommandContext(hctx, f.host, args...)
		cmd.Env = f.env
		cmd.Stdout, cmd.Stderr = out, out
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd.Wait
	}
	hosts := make([]e2e.SyncBuffer, 2)
	guessers := make([]e2e.SyncBuffer, 2)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range hosts {
		wait := start(&hosts[i], f.lib, "fleet", "123456", "fault-key", strconv.Itoa(seconds), "mixed")
		wg.Go(func() { errs[i] = wait() })
	}
	// The guessers start once both hosts are logged in (else the lockout
	// could refuse their logins).
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(hosts[0].String(), "POINT") || !strings.Contains(hosts[1].String(), "POINT"); {
		if time.Now().After(deadline) {
			t.Fatalf("hosts not ready after 15 s:\n%s\n%s", tail(hosts[0].String()), tail(hosts[1].String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := range guessers {
		wait := start(&guessers[i], f.lib, "fleet", "999999", "-", strconv.Itoa(seconds), "guess")
		wg.Go(func() { errs[2+i] = wait() })
	}
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
	wg.Wait()
	t.Logf("%s %s killed for %v", role, victim.name, up.Sub(down).Round(time.Millisecond))

	// Writes: acknowledged generations and destructions, and what each
	// host finds at the end.
	gen := map[string]bool{} // label → acknowledged (true) or failed
	del := map[string]bool{} // label → destruction acknowledged or failed
	have := make([]map[string]bool, 2)
	for i := range hosts {
		out := hosts[i].String()
		if errs[i] != nil {
			t.Fatalf("host %d: %v\n%s", i, errs[i], tail(out))
		}
		have[i] = map[string]bool{}
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
			case "HAVE":
				have[i][fl[1]] = true
			}
		}
		t.Logf("host %d: %d signatures (slowest sign call %.1f ms), %d key generations (%d failed), %d destructions (%d failed), finds %d",
			i, len(l.at), l.maxUS/1e3, gens, genFailed, dels, delFailed, len(have[i]))
		l.check(t, i, out)
		// The load must have happened: writes to check below. How many
		// fit in the run is a figure (a loaded machine makes fewer), not
		// a bound.
		if gens-genFailed < 2 {
			t.Errorf("host %d: only %d key generations acknowledged: nothing to check", i, gens-genFailed)
		}
	}
	for label, ok := range gen {
		d, deleted := del[label]
		switch {
		case !ok || (deleted && !d):
			// Failed: may have been applied or not; either is right.
		case deleted:
			for i := range have {
				if have[i][label] {
					t.Errorf("host %d still finds %s, whose destruction was acknowledged", i, label)
				}
			}
		default:
			for i := range have {
				if !have[i][label] {
					t.Errorf("host %d does not find %s, whose generation was acknowledged", i, label)
				}
			}
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
