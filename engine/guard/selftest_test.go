package guard_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/guard"
)

// TestDeferSelfTest: a deferred self-test does not run at open; it runs
// once, at the guard's first use (before that use's known-answer test,
// so before any result) or at the first Status, and never again.
func TestDeferSelfTest(t *testing.T) {
	const selfTest, kat = "engine self-test passed", "engine known-answer test passed"
	for _, tc := range []struct {
		name   string
		use    func(t *testing.T, g *guard.Guard)
		wantKA bool // the use runs a known-answer test
	}{
		{"rsa", func(t *testing.T, g *guard.Guard) {
			priv := key(t, 2048)
			k, err := g.RSAKey(priv)
			if err != nil {
				t.Fatal(err)
			}
			if err := private(t, k, priv); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"ec", func(t *testing.T, g *guard.Guard) {
			rt, ok := g.EC("P-256")
			if !ok {
				t.Fatal("no P-256 route")
			}
			if _, err := rt.Run(context.Background(), func(engine.ECEngine) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"status", func(t *testing.T, g *guard.Guard) { g.Status() }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			sw := soft.New()
			g := guard.New(sw, guard.Options{Software: sw, Log: slog.New(slog.NewTextHandler(&log, nil))})
			g.DeferSelfTest()
			if strings.Contains(log.String(), "self-test") {
				t.Fatalf("self-test ran before the first use:\n%s", log.String())
			}
			for range 2 {
				tc.use(t, g)
			}
			out := log.String()
			if n := strings.Count(out, selfTest); n != 1 {
				t.Fatalf("%d self-test records after two uses, want 1:\n%s", n, out)
			}
			if i := strings.Index(out, kat); tc.wantKA && (i < 0 || i < strings.Index(out, selfTest)) {
				t.Fatalf("the known-answer test did not follow the self-test:\n%s", out)
			}
			if st := g.Status(); st.SelfTest != "passed" || st.Faults != 0 {
				t.Fatalf("status %+v, want the self-test passed", st)
			}
			if n := strings.Count(log.String(), selfTest); n != 1 {
				t.Fatalf("Status ran the self-test again (%d records)", n)
			}
		})
	}
}
