package keystore

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Environment of the child process of TestTwoProcesses.
const (
	envTwoProcPath = "KEYSTORE_TWOPROC_PATH"
	envTwoProcName = "KEYSTORE_TWOPROC_NAME"
)

const twoProcObjects = 30

// TestTwoProcesses runs the same workload in this process and in a child
// (this test binary re-executed): both Put, Delete and list objects on one
// token (a file, or in etcd: two hosts) at once; every call must succeed and each must end up seeing
// exactly the other's surviving objects. Each process lists through a
// cache kept up to date by Changes (deltas), checked against Objects at the
// end.
func TestTwoProcesses(t *testing.T) {
	if path := os.Getenv(envTwoProcPath); path != "" {
		if backendFromEnv != nil {
			backendFromEnv(t) // the parent's token is in etcd (TestOnEtcd)
		}
		twoProcWorker(t, path, os.Getenv(envTwoProcName), "parent")
		return
	}
	s, _ := initStore(t, testOptions())
	cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcesses$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envTwoProcPath+"="+s.path, envTwoProcName+"=child")
	cmd.Env = append(cmd.Env, backendEnv...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	twoProcWorker(t, s.path, "parent", "child")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child process: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "--- PASS: TestTwoProcesses") {
		t.Fatalf("child did not run the worker:\n%s", out.String())
	}
}

// twoProcWorker's waits (the lock, the other process's steps) are hang
// guards: on a loaded machine with slow fsyncs the steps may crawl.
func twoProcWorker(t *testing.T, path, me, other string) {
	opts := testOptions()
	opts.LockTimeout = time.Minute
	s := openStore(t, path, opts)
	key, err := s.Login(User, userPIN)
	if err != nil {
		t.Fatalf("%s: Login: %v", me, err)
	}
	defer key.Wipe()

	// The view of the token is a cache kept by Changes, as the token
	// package keeps its object cache; at the end it must equal Objects.
	cache := map[uint64]Object{}
	var cacheGen uint64
	deltas := 0
	labels := func() map[string]Object {
		t.Helper()
		changed, deleted, gen, full, err := s.Changes(key, cacheGen)
		if err != nil {
			t.Fatalf("%s: Changes: %v", me, err)
		}
		if full {
			clear(cache)
		} else if gen != cacheGen {
			deltas++
		}
		for _, o := range changed {
			cache[o.ID] = o
		}
		for _, id := range deleted {
			delete(cache, id)
		}
		cacheGen = gen
		m := make(map[string]Object, len(cache))
		for _, o := range cache {
			m[string(o.Attrs[3])] = o
		}
		return m
	}
	put := func(label string) uint64 {
		t.Helper()
		id, err := s.Put(key, Object{
			Attrs:  map[uint64][]byte{3: []byte(label), 0x11: []byte("secret " + label), tID: []byte(label)},
			Sealed: map[uint64]bool{0x11: true},
		})
		if err != nil {
			t.Fatalf("%s: Put %s: %v", me, label, err)
		}
		return id
	}
	waitFor := func(label string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Minute)
		for {
			if _, ok := labels()[label]; ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s never appeared", me, label)
			}
			time.Sleep(time.Millisecond)
		}
	}

	put("ready " + me)
	waitFor("ready " + other)

	// Object i is put, and deleted at step i+1 when i is even: the odd
	// ones survive. The two processes go in lockstep: step i ends when the
	// other process has reached step i too (one of its objects with index
	// ≥ i is visible), so their calls really interleave.
	otherProgress := func(seen map[string]Object) int {
		best := -1
		for l := range seen {
			var i int
			if _, err := fmt.Sscanf(l, other+" %d", &i); err == nil && i > best {
				best = i
			}
		}
		return best
	}
	var prev uint64
	deadline := time.Now().Add(5 * time.Minute)
	for i := range twoProcObjects {
		id := put(fmt.Sprintf("%s %d", me, i))
		if i%2 == 1 {
			if err := s.Delete(prev); err != nil {
				t.Fatalf("%s: Delete: %v", me, err)
			}
		}
		prev = id
		for {
			seen := labels()
			if _, ok := seen[fmt.Sprintf("%s %d", me, i)]; !ok {
				t.Fatalf("%s: own object %d missing", me, i)
			}
			if otherProgress(seen) >= i {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the other process never reached step %d", me, i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	put("done " + me)
	waitFor("done " + other)

	final := labels()
	for i := range twoProcObjects {
		for _, who := range []string{me, other} {
			label := fmt.Sprintf("%s %d", who, i)
			o, ok := final[label]
			if want := i%2 == 1; ok != want {
				t.Errorf("%s: object %q present=%v, want %v", me, label, ok, want)
			}
			if ok && string(o.Attrs[0x11]) != "secret "+label {
				t.Errorf("%s: object %q sealed value %q", me, label, o.Attrs[0x11])
			}
		}
	}
	sameCache(t, s, key, cache)
	if deltas < twoProcObjects {
		t.Errorf("%s: only %d delta updates of the cache", me, deltas)
	}
	if found, _, err := findByID(s, nil, []byte(other+" 1")); err != nil || len(found) != 1 {
		t.Errorf("%s: findByID of the other's object: %d, %v", me, len(found), err)
	}
}
