package pool

import (
	"context"
	"math/big"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modexp-token/modexp-token/engine"
	_ "github.com/modexp-token/modexp-token/engine/backend/chip"
	_ "github.com/modexp-token/modexp-token/engine/backend/device"
	_ "github.com/modexp-token/modexp-token/engine/backend/soft"
)

// TestSpreadAndCorrect: concurrent Exp calls on a pool of two engines are
// right (against math/big) and reach both members.
func TestSpreadAndCorrect(t *testing.T) {
	e, err := engine.Open("pool:soft|chip:pukcc")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	n, _ := new(big.Int).SetString("f1a7c5e3d9b1a3c5e7f9d1b3a5c7e9f1d3b5a7c9e1f3d5b7a9c1e3f5d7b9a1c3e5f7d9b1a3c5e7f9d1b3a5c7e9f1d3b5a7c9e1f3d5b7a9c1e3f5d7b9a1c3e5", 16)
	m, err := e.NewModulus(n.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			base := big.NewInt(int64(1000 + i))
			exp := big.NewInt(int64(65537 + 2*i))
			got, _, err := e.Exp(context.Background(), m, base.Bytes(), exp.Bytes())
			if err != nil {
				t.Error(err)
				return
			}
			if want := new(big.Int).Exp(base, exp, n); new(big.Int).SetBytes(got).Cmp(want) != 0 {
				t.Errorf("wrong result for base %v", base)
			}
		})
	}
	wg.Wait()
	for _, ms := range e.(*Pool).Members() {
		if ms.Ops == 0 {
			t.Fatalf("member %s took no operation: %+v", ms.Spec, e.(*Pool).Members())
		}
	}
}

// TestMemberDownAtStart: a member that cannot be reached is kept (to be
// opened later); operations go to the others.
func TestMemberDownAtStart(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "absent.sock")
	e, err := New([]string{"soft", "device:unix:" + sock + ",timeout=1s"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, err := e.NewModulus([]byte{0xc5})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		got, _, err := e.ExpVarTime(context.Background(), m, []byte{3}, []byte{5})
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != byte(243%0xc5) {
			t.Fatalf("3^5 mod 197 = %d", got[0])
		}
	}
	st := e.(*Pool).Members()
	if !st[0].Open || st[1].Open || st[1].LastOpen == "" || st[0].Ops != 4 {
		t.Fatalf("members: %+v", st)
	}
}

// TestBadSpecs: empty, nested, duplicate and unknown members are refused.
func TestBadSpecs(t *testing.T) {
	for _, spec := range []string{"pool:", "pool:soft|soft", "pool:soft|pool:soft", "pool:soft|nosuch:x"} {
		if e, err := engine.Open(spec); err == nil {
			e.Close()
			t.Errorf("%q accepted", spec)
		}
	}
}
