package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/token/config"
)

// TestNewToken checks that the configuration NewToken writes is one the
// module accepts, with the label, token file and extra lines asked for, and
// that the environment names it.
func TestNewToken(t *testing.T) {
	k := NewToken(t, "e2e label", `fallback = "fail"`)
	b, err := os.ReadFile(k.Conf)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(b, k.Dir)
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, b)
	}
	if len(cfg.Slots) != 1 || cfg.Slots[0].Label != "e2e label" || cfg.Slots[0].TokenFile != k.File {
		t.Fatalf("slots: %+v", cfg.Slots)
	}
	if !strings.Contains(string(b), CheapKDF) || !strings.Contains(string(b), `fallback = "fail"`) {
		t.Fatalf("config:\n%s", b)
	}
	for _, v := range []string{"MODEXP_TOKEN_CONF=" + k.Conf, "MODEXP_TOKEN_LOG=" + k.Log, "MODEXP_TOKEN_ENGINE="} {
		if !slices.Contains(k.Env, v) {
			t.Errorf("environment lacks %s", v)
		}
	}
	if env := k.With("A=1"); env[len(env)-1] != "A=1" || len(env) != len(k.Env)+1 {
		t.Errorf("With: %v", env[len(env)-1])
	}
}

// TestRunTimeout checks that Run ends a hanging command's process group at
// the deadline and says so.
func TestRunTimeout(t *testing.T) {
	// The command would run 30 s; its "timed out" error shows Run ended it
	// at the deadline instead.
	_, err := Run(os.Environ(), 200*time.Millisecond, "sh", "-c", "sleep 30 & wait")
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if out := MustRun(t, os.Environ(), "echo", "ok"); out != "ok\n" {
		t.Fatalf("MustRun: %q", out)
	}
}
