package token

// The slot's mechanism offer (C_GetMechanismList and C_GetMechanismInfo of
// every listed mechanism) on several engines and options, compared with
// testdata/mechinfo.golden: a change of the registry that changes what a
// client sees shows here. Regenerate with
// go test ./token -run TestMechanismInfoGolden -update-mechinfo.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

var updateMechInfo = flag.Bool("update-mechinfo", false, "rewrite testdata/mechinfo.golden")

func TestMechanismInfoGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range []struct{ name, slot string }{
		{"soft", "engine = \"soft\"\n"},
		{"soft, rsa_pkcs_decrypt = false", "engine = \"soft\"\nrsa_pkcs_decrypt = false\n"},
		{"chip:pukcc, fallback fail", "engine = \"chip:pukcc\"\nfallback = \"fail\"\n"},
		{"chip:orup561, fallback fail", "engine = \"chip:orup561\"\nfallback = \"fail\"\n"},
		{"chip:orup561, fallback soft", "engine = \"chip:orup561\"\nfallback = \"soft\"\n"},
		{"chip:cryptech, fallback fail", "engine = \"chip:cryptech\"\nfallback = \"fail\"\n"},
	} {
		writeConfig(t, "label = \"Golden\"\n"+c.slot)
		m := load(t)
		slot := m.SlotList(true)[0]
		list, err := m.MechanismList(slot)
		must(t, err)
		fmt.Fprintf(&b, "# %s\n", c.name)
		for _, typ := range list {
			info, err := m.MechanismInfo(slot, typ)
			must(t, err)
			fmt.Fprintf(&b, "%s min=%d max=%d flags=%s\n", ck.Name("CKM_", typ), info.MinKeySize, info.MaxKeySize, flagNames(info.Flags))
		}
	}
	path := filepath.Join("testdata", "mechinfo.golden")
	if *updateMechInfo {
		must(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	must(t, err)
	if got := b.String(); got != string(want) {
		t.Fatalf("the mechanism offer changed:\n%s\nwant:\n%s", got, want)
	}
}

// flagNames spells CK_MECHANISM_INFO flags.
func flagNames(f uint64) string {
	var names []string
	for bit := uint64(1); bit != 0; bit <<= 1 {
		if f&bit != 0 {
			names = append(names, mechFlagName(bit))
		}
	}
	return strings.Join(names, "|")
}

func mechFlagName(bit uint64) string {
	for _, n := range []struct {
		bit  uint64
		name string
	}{
		{ck.CKF_HW, "HW"}, {ck.CKF_MESSAGE_ENCRYPT, "MESSAGE_ENCRYPT"}, {ck.CKF_MESSAGE_DECRYPT, "MESSAGE_DECRYPT"},
		{ck.CKF_MESSAGE_SIGN, "MESSAGE_SIGN"}, {ck.CKF_MESSAGE_VERIFY, "MESSAGE_VERIFY"}, {ck.CKF_MULTI_MESSAGE, "MULTI_MESSAGE"},
		{ck.CKF_ENCRYPT, "ENCRYPT"}, {ck.CKF_DECRYPT, "DECRYPT"}, {ck.CKF_DIGEST, "DIGEST"},
		{ck.CKF_SIGN, "SIGN"}, {ck.CKF_SIGN_RECOVER, "SIGN_RECOVER"}, {ck.CKF_VERIFY, "VERIFY"},
		{ck.CKF_VERIFY_RECOVER, "VERIFY_RECOVER"}, {ck.CKF_GENERATE, "GENERATE"},
		{ck.CKF_GENERATE_KEY_PAIR, "GENERATE_KEY_PAIR"}, {ck.CKF_WRAP, "WRAP"}, {ck.CKF_UNWRAP, "UNWRAP"},
		{ck.CKF_DERIVE, "DERIVE"}, {ck.CKF_EC_F_P, "EC_F_P"}, {ck.CKF_EC_NAMEDCURVE, "EC_NAMEDCURVE"},
		{ck.CKF_EC_UNCOMPRESS, "EC_UNCOMPRESS"}, {ck.CKF_ENCAPSULATE, "ENCAPSULATE"}, {ck.CKF_DECAPSULATE, "DECAPSULATE"},
	} {
		if n.bit == bit {
			return n.name
		}
	}
	return fmt.Sprintf("0x%X", bit)
}
