package token

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestRegistryFlagsMatchOperations walks the registry: every mechanism's
// advertised operation flags are exactly the operations its type
// implements, its other flags are capability flags, and the registry
// holds every mechanism under its own CKM_ value.
func TestRegistryFlagsMatchOperations(t *testing.T) {
	if len(mechanisms) == 0 {
		t.Fatal("empty registry")
	}
	for typ, m := range mechanisms {
		b := m.base()
		name := b.name()
		if b.typ != typ {
			t.Errorf("%s registered as %s", name, ck.Name("CKM_", typ))
		}
		implements := map[uint64]bool{}
		_, stream := m.(streamCipher)
		_, implements[ck.CKF_SIGN] = m.(signer)
		_, implements[ck.CKF_VERIFY] = m.(verifier)
		_, enc := m.(encrypter)
		_, dec := m.(decrypter)
		implements[ck.CKF_ENCRYPT], implements[ck.CKF_DECRYPT] = enc || stream, dec || stream
		_, implements[ck.CKF_DIGEST] = m.(digester)
		_, kg := m.(keyGenerator)
		_, pg := m.(paramGenerator)
		implements[ck.CKF_GENERATE] = kg || pg
		_, implements[ck.CKF_GENERATE_KEY_PAIR] = m.(keyPairGenerator)
		_, implements[ck.CKF_WRAP] = m.(wrapper)
		_, implements[ck.CKF_UNWRAP] = m.(unwrapper)
		_, implements[ck.CKF_DERIVE] = m.(deriver)
		_, mc := m.(messageCipher)
		implements[ck.CKF_MESSAGE_ENCRYPT], implements[ck.CKF_MESSAGE_DECRYPT] = mc, mc
		implements[ck.CKF_MESSAGE_SIGN], implements[ck.CKF_MESSAGE_VERIFY] = implements[ck.CKF_SIGN], implements[ck.CKF_VERIFY]
		implements[ck.CKF_MULTI_MESSAGE] = mc || implements[ck.CKF_SIGN] || implements[ck.CKF_VERIFY]
		for flag, ok := range implements {
			if (b.flags&flag != 0) != ok {
				t.Errorf("%s: flag %s is %v, implemented %v", name, mechFlagName(flag), b.flags&flag != 0, ok)
			}
		}
		if rest := b.flags &^ operationMask; rest&^(ck.CKF_EC_F_P|ck.CKF_EC_NAMEDCURVE|ck.CKF_EC_UNCOMPRESS) != 0 {
			t.Errorf("%s: unexpected flags %s", name, flagNames(rest))
		}
		// The accumulation policy belongs to signatures and MACs only.
		if _, ok := m.(multiPart); ok && !implements[ck.CKF_SIGN] && !implements[ck.CKF_VERIFY] {
			t.Errorf("%s accumulates but neither signs nor verifies", name)
		}
		if kg && pg {
			t.Errorf("%s generates both keys and domain parameters", name)
		}
		for kind := opKind(0); kind < opKinds; kind++ {
			if offers(m, kind) != implements[opFlag[kind]] {
				t.Errorf("%s: offers(%s) = %v", name, opNames[kind], offers(m, kind))
			}
		}
		// Binding to an empty parameter never panics and keeps the type.
		if bound, err := bindParam(m, &Mechanism{Type: typ}); err == nil && operationFlags(bound) != operationFlags(m) {
			t.Errorf("%s: bound to no parameter, operations %#x, want %#x", name, operationFlags(bound), operationFlags(m))
		}
	}
}

// TestRegistryRefusesInconsistency: a mechanism registered twice, one
// serving no operation, one whose capability flags claim an operation,
// and one taking no key type are programming errors.
func TestRegistryRefusesInconsistency(t *testing.T) {
	for name, fam := range map[string][]mechanism{
		"twice":        {&rsaRaw{rsaBase(ck.CKM_RSA_X_509)}, &rsaRaw{rsaBase(ck.CKM_RSA_X_509)}},
		"no operation": {&struct{ mechBase }{mechBase{typ: 0x7777, keyTypes: []uint64{ck.CKK_RSA}}}},
		"ext claims":   {&rsaRaw{mechBase{typ: ck.CKM_RSA_X_509, ext: ck.CKF_DERIVE, keyTypes: []uint64{ck.CKK_RSA}}}},
		"no key type":  {&rsaRaw{mechBase{typ: ck.CKM_RSA_X_509}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			newRegistry(fam)
		})
	}
}
