package main

import (
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

// TestMechanismNames: every mechanism the registry lists has a CKM_ name,
// and every flag bit of its CK_MECHANISM_INFO has a name in info's output.
func TestMechanismNames(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(testConf), dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := token.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	slot := cfg.Slots[0].ID
	list, err := m.MechanismList(slot)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) < 20 {
		t.Fatalf("only %d mechanisms", len(list))
	}
	var named uint64
	for _, n := range mechFlagNames {
		named |= n.bit
	}
	for _, mech := range list {
		name := ck.Name("CKM_", mech)
		if strings.HasPrefix(name, "CKM_0x") {
			t.Errorf("mechanism 0x%x has no name (add it to token/ck)", mech)
		}
		mi, err := m.MechanismInfo(slot, mech)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rest := mi.Flags &^ named; rest != 0 {
			t.Errorf("%s: flags 0x%x have no name in mechFlagNames", name, rest)
		}
		if mi.Flags != 0 && len(flagNames(mechFlagNames, mi.Flags)) == 0 {
			t.Errorf("%s: flags 0x%x print as nothing", name, mi.Flags)
		}
	}
}
