package soft_test

import (
	"context"
	"errors"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
	"github.com/modexp-token/modexp-token/engine/enginetest"
)

func TestConformance(t *testing.T) {
	enginetest.Run(t, soft.New(), enginetest.Options{Short: testing.Short()})
}

func TestRegistered(t *testing.T) {
	e, err := engine.Open("soft")
	if err != nil {
		t.Fatalf("Open(soft): %v", err)
	}
	info := e.Info()
	if info.Name != "soft" || info.Model != "soft-montgomery" || !info.ConstantTime || info.Cores < 1 {
		t.Fatalf("Info = %+v", info)
	}
	if _, err := engine.Open("soft:extra"); err == nil {
		t.Fatal("Open(soft:extra) succeeded")
	}
}

type foreignModulus struct{}

func (foreignModulus) BitLen() int   { return 8 }
func (foreignModulus) Bytes() []byte { return []byte{0xfb} }

func TestExpErrors(t *testing.T) {
	e := soft.New()
	if _, _, err := e.Exp(context.Background(), foreignModulus{}, []byte{1}, []byte{1}); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("foreign modulus: %v", err)
	}
	m, err := e.NewModulus([]byte{0xfb})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := e.Exp(ctx, m, []byte{1}, []byte{1}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
	if _, _, err := e.Exp(context.Background(), m, []byte{1}, make([]byte, 5000)); !errors.Is(err, engine.ErrOperandTooLarge) {
		t.Errorf("huge exponent: %v", err)
	}
}
