package dh

import (
	"math/big"
	"testing"
)

func TestGroupByName(t *testing.T) {
	for _, name := range GroupNames() {
		t.Run(name, func(t *testing.T) {
			g, err := GroupByName(name)
			if err != nil {
				t.Fatal(err)
			}
			// The group found by name is the one LookupGroup recognises.
			lg, err := LookupGroup(g.P, g.G)
			if err != nil || lg.Name != name {
				t.Fatalf("LookupGroup of %s = %v, %v", name, lg, err)
			}
			if g.G.Cmp(big.NewInt(2)) != 0 || g.Q == nil {
				t.Fatalf("%s: g = %v, q = %v", name, g.G, g.Q)
			}
		})
	}
	for _, bad := range []string{"", "ffdhe1024", "modp2048"} {
		if _, err := GroupByName(bad); err == nil {
			t.Errorf("GroupByName(%q) succeeded", bad)
		}
	}
}
