package mech

import (
	"bytes"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
)

// TestBindingCopiesParam: for every mechanism CopiesParam names, the
// binding, new or reusing an earlier one, keeps none of the caller's
// parameter memory: overwriting the parameter after the binding changes
// nothing the binding holds.
func TestBindingCopiesParam(t *testing.T) {
	iv := bytes.Repeat([]byte{0x11}, 16)
	aad := []byte("additional data")
	params := map[uint64]func() *CKMechanism{
		ck.CKM_AES_GCM: func() *CKMechanism {
			return &CKMechanism{Type: ck.CKM_AES_GCM, GCM: &GCMParams{IV: iv[:12], AAD: aad, TagBits: 128}}
		},
		ck.CKM_AES_CBC:     func() *CKMechanism { return &CKMechanism{Type: ck.CKM_AES_CBC, Param: iv} },
		ck.CKM_AES_CBC_PAD: func() *CKMechanism { return &CKMechanism{Type: ck.CKM_AES_CBC_PAD, Param: iv} },
		ck.CKM_AES_CTR: func() *CKMechanism {
			return &CKMechanism{Type: ck.CKM_AES_CTR, Param: append(ck.ULong(128), iv...)}
		},
		ck.CKM_AES_ECB: func() *CKMechanism { return &CKMechanism{Type: ck.CKM_AES_ECB} },
	}
	held := func(m Mechanism) []byte {
		switch b := m.(type) {
		case *AESGCM:
			return append(append([]byte(nil), b.p.iv...), b.p.aad...)
		case *aesBlockMode:
			return append([]byte(nil), b.iv...)
		case *aesCTR:
			return append([]byte(nil), b.p.cb[:]...)
		}
		t.Fatalf("%T: no parameter known", m)
		return nil
	}
	n := 0
	for typ, reg := range Registry {
		if !CopiesParam(typ) {
			continue
		}
		n++
		mk, ok := params[typ]
		if !ok {
			t.Fatalf("%s: no test parameter", reg.Base().Name())
		}
		var prev Mechanism
		for round := range 2 { // a new binding, then one reusing it
			cm := mk()
			b, err := BindParamReusing(reg, cm, prev)
			if err != nil {
				t.Fatalf("%s: %v", reg.Base().Name(), err)
			}
			if b == reg {
				t.Fatalf("%s: the registry's value was returned", reg.Base().Name())
			}
			if round == 1 && b != prev {
				t.Fatalf("%s: the earlier binding was not reused", reg.Base().Name())
			}
			before := held(b)
			clear(iv)
			clear(aad)
			if after := held(b); !bytes.Equal(before, after) {
				t.Fatalf("%s: the binding shares the caller's memory", reg.Base().Name())
			}
			copy(iv, bytes.Repeat([]byte{byte(0x22 + round)}, 16))
			copy(aad, "additional data")
			prev = b
		}
	}
	if n != len(params) {
		t.Fatalf("%d registered mechanisms copy their parameter, want %d", n, len(params))
	}
}
