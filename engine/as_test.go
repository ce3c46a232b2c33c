package engine_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
)

// full has every optional method; has limits the abilities it claims
// (nil: not engine.Limited).
type full struct{ has map[engine.Ability]bool }

func (full) Info() engine.Info                         { return engine.Info{Name: "full", Cores: 1} }
func (full) NewModulus([]byte) (engine.Modulus, error) { return nil, engine.ErrUnsupported }
func (full) SelfTest(context.Context) error            { return nil }
func (full) Close() error                              { return nil }
func (full) ExpCRT(context.Context, *engine.CRTKey, []byte) ([]byte, engine.Cost, error) {
	return nil, engine.Cost{}, engine.ErrUnsupported
}
func (full) Exp(context.Context, engine.Modulus, []byte, []byte) ([]byte, engine.Cost, error) {
	return nil, engine.Cost{}, engine.ErrUnsupported
}
func (full) ExpVarTime(context.Context, engine.Modulus, []byte, []byte) ([]byte, engine.Cost, error) {
	return nil, engine.Cost{}, engine.ErrUnsupported
}
func (full) ExpPair(context.Context, engine.ExpOp, engine.ExpOp) ([]byte, []byte, engine.Cost, error) {
	return nil, nil, engine.Cost{}, engine.ErrUnsupported
}
func (full) ScalarBaseMult(context.Context, string, []byte) ([]byte, []byte, engine.Cost, error) {
	return nil, nil, engine.Cost{}, engine.ErrUnsupported
}
func (full) ScalarMult(context.Context, string, []byte, []byte, []byte) ([]byte, []byte, engine.Cost, error) {
	return nil, nil, engine.Cost{}, engine.ErrUnsupported
}

type limited struct{ full }

func (l limited) Has(a engine.Ability) bool { return l.has[a] }

// core has no optional method.
type core struct{ full }

func (core) ExpCRT()         {} // not CRTEngine's signature
func (core) ExpPair()        {}
func (core) ScalarBaseMult() {}

func abilities(e engine.Engine) (crt, pair, ec bool) {
	_, crt = engine.As[engine.CRTEngine](e)
	_, pair = engine.As[engine.PairEngine](e)
	_, ec = engine.As[engine.ECEngine](e)
	return
}

// TestAs: an ability is the interface, narrowed by Limited.Has.
func TestAs(t *testing.T) {
	for _, c := range []struct {
		name          string
		e             engine.Engine
		crt, pair, ec bool
	}{
		{"unlimited", full{}, true, true, true},
		{"limited to EC", limited{full{has: map[engine.Ability]bool{engine.AbilityEC: true}}}, false, false, true},
		{"limited to CRT and pairs", limited{full{has: map[engine.Ability]bool{engine.AbilityCRT: true, engine.AbilityPair: true}}}, true, true, false},
		{"core only", core{}, false, false, false},
	} {
		crt, pair, ec := abilities(c.e)
		if crt != c.crt || pair != c.pair || ec != c.ec {
			t.Errorf("%s: CRT %v, pair %v, EC %v; want %v, %v, %v", c.name, crt, pair, ec, c.crt, c.pair, c.ec)
		}
	}
	if e, ok := engine.As[engine.Engine](limited{}); !ok || e == nil {
		t.Error("As[Engine] refused an engine")
	}
}

// TestOneCapabilityQuery: no Go file of the module asserts an optional
// interface itself; they all ask engine.As (a device client or a pool
// implements every optional method and says by Has which it has).
func TestOneCapabilityQuery(t *testing.T) {
	assert := regexp.MustCompile(`\.\(\s*(engine\.)?(CRT|Pair|EC)Engine\s*\)`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "build") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || filepath.Base(path) == "engine.go" && filepath.Base(filepath.Dir(path)) == "engine" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := assert.FindIndex(b); loc != nil {
			t.Errorf("%s: %s: ask engine.As instead", path, b[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
