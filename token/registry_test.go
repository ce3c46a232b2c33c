package token

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// TestRegistryFlagsMatchOperations walks the registry: every mechanism's
// advertised operation flags are exactly the operations its type
// implements, its other flags are capability flags, and the registry
// holds every mechanism under its own CKM_ value.
func TestRegistryFlagsMatchOperations(t *testing.T) {
	if len(mech.Registry) == 0 {
		t.Fatal("empty registry")
	}
	for typ, m := range mech.Registry {
		b := m.Base()
		name := b.Name()
		if b.Type != typ {
			t.Errorf("%s registered as %s", name, ck.Name("CKM_", typ))
		}
		implements := map[uint64]bool{}
		_, stream := m.(mech.StreamCipher)
		_, implements[ck.CKF_SIGN] = m.(mech.Signer)
		_, implements[ck.CKF_VERIFY] = m.(mech.Verifier)
		_, enc := m.(mech.Encrypter)
		_, dec := m.(mech.Decrypter)
		implements[ck.CKF_ENCRYPT], implements[ck.CKF_DECRYPT] = enc || stream, dec || stream
		_, implements[ck.CKF_DIGEST] = m.(mech.Digester)
		_, kg := m.(mech.KeyGenerator)
		_, pg := m.(mech.ParamGenerator)
		implements[ck.CKF_GENERATE] = kg || pg
		_, implements[ck.CKF_GENERATE_KEY_PAIR] = m.(mech.KeyPairGenerator)
		_, implements[ck.CKF_WRAP] = m.(mech.Wrapper)
		_, implements[ck.CKF_UNWRAP] = m.(mech.Unwrapper)
		_, implements[ck.CKF_DERIVE] = m.(mech.Deriver)
		_, mc := m.(mech.MessageCipher)
		implements[ck.CKF_MESSAGE_ENCRYPT], implements[ck.CKF_MESSAGE_DECRYPT] = mc, mc
		implements[ck.CKF_MESSAGE_SIGN], implements[ck.CKF_MESSAGE_VERIFY] = implements[ck.CKF_SIGN], implements[ck.CKF_VERIFY]
		implements[ck.CKF_MULTI_MESSAGE] = mc || implements[ck.CKF_SIGN] || implements[ck.CKF_VERIFY]
		for flag, ok := range implements {
			if (b.Flags&flag != 0) != ok {
				t.Errorf("%s: flag %s is %v, implemented %v", name, mechFlagName(flag), b.Flags&flag != 0, ok)
			}
		}
		if rest := b.Flags &^ mech.OperationMask; rest&^(ck.CKF_EC_F_P|ck.CKF_EC_NAMEDCURVE|ck.CKF_EC_UNCOMPRESS) != 0 {
			t.Errorf("%s: unexpected flags %s", name, flagNames(rest))
		}
		// The accumulation policy belongs to signatures and MACs only.
		if _, ok := m.(mech.MultiPart); ok && !implements[ck.CKF_SIGN] && !implements[ck.CKF_VERIFY] {
			t.Errorf("%s accumulates but neither signs nor verifies", name)
		}
		if kg && pg {
			t.Errorf("%s generates both keys and domain parameters", name)
		}
		for kind := mech.OpKind(0); kind < mech.OpKinds; kind++ {
			if mech.Offers(m, kind) != implements[mech.OpFlag[kind]] {
				t.Errorf("%s: offers(%s) = %v", name, mech.OpNames[kind], mech.Offers(m, kind))
			}
		}
		// Binding to an empty parameter never panics and keeps the type.
		if bound, err := mech.BindParam(m, &Mechanism{Type: typ}); err == nil && mech.OperationFlags(bound) != mech.OperationFlags(m) {
			t.Errorf("%s: bound to no parameter, operations %#x, want %#x", name, mech.OperationFlags(bound), mech.OperationFlags(m))
		}
	}
}

// TestRegistryRefusesInconsistency: a mechanism registered twice, one
// serving no operation, one whose capability flags claim an operation,
// and one taking no key type are programming errors.
func TestRegistryRefusesInconsistency(t *testing.T) {
	for name, fam := range map[string][]mech.Mechanism{
		"twice":        {&mech.RSARaw{MechBase: mech.RSABase(ck.CKM_RSA_X_509)}, &mech.RSARaw{MechBase: mech.RSABase(ck.CKM_RSA_X_509)}},
		"no operation": {&struct{ mech.MechBase }{mech.MechBase{Type: 0x7777, KeyTypes: []uint64{ck.CKK_RSA}}}},
		"ext claims":   {&mech.RSARaw{MechBase: mech.MechBase{Type: ck.CKM_RSA_X_509, Ext: ck.CKF_DERIVE, KeyTypes: []uint64{ck.CKK_RSA}}}},
		"no key type":  {&mech.RSARaw{MechBase: mech.MechBase{Type: ck.CKM_RSA_X_509}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			mech.NewRegistry(fam)
		})
	}
}
