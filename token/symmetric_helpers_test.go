package token

import (
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// secretKeyOf imports a session secret key of type kt usable for every
// operation.
func secretKeyOf(m *Module, sh, kt uint64, v []byte) (uint64, error) {
	return m.CreateObject(sh, []Attribute{aULong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), aULong(ck.CKA_KEY_TYPE, kt),
		aBytes(ck.CKA_VALUE, v), aBool(ck.CKA_PRIVATE, false)})
}

func mustSecret(t *testing.T, m *Module, sh, kt uint64, v []byte) uint64 {
	t.Helper()
	h, err := secretKeyOf(m, sh, kt, v)
	must(t, err)
	return h
}

// cryptOnce runs Init and the single-part call, with a length query first.
func cryptOnce(m *Module, sh uint64, kind mech.OpKind, mc *Mechanism, key uint64, in []byte) ([]byte, error) {
	init, call := m.EncryptInit, m.Encrypt
	if kind == mech.OpDecrypt {
		init, call = m.DecryptInit, m.Decrypt
	}
	if err := init(sh, mc, key); err != nil {
		return nil, err
	}
	_, need, err := call(sh, in, Out{Query: true})
	if err != nil {
		return nil, err
	}
	out, _, err := call(sh, in, Out{Cap: need})
	return out, err
}

// cryptParts runs Init, one Update per part (each with a length query
// that must announce exactly the output), and Final.
func cryptParts(m *Module, sh uint64, kind mech.OpKind, mc *Mechanism, key uint64, in []byte, parts []int) ([]byte, error) {
	init, update, final := m.EncryptInit, m.EncryptUpdate, m.EncryptFinal
	if kind == mech.OpDecrypt {
		init, update, final = m.DecryptInit, m.DecryptUpdate, m.DecryptFinal
	}
	if err := init(sh, mc, key); err != nil {
		return nil, err
	}
	var out []byte
	for _, n := range parts {
		n = min(n, len(in))
		_, need, err := update(sh, in[:n], Out{Query: true})
		if err != nil {
			return nil, err
		}
		r, got, err := update(sh, in[:n], Out{Cap: need})
		if err != nil {
			return nil, err
		}
		if got != need || len(r) != need {
			return nil, ck.Errorf(ck.CKR_GENERAL_ERROR, "Update announced %d bytes, gave %d", need, len(r))
		}
		out = append(out, r...)
		in = in[n:]
	}
	if len(in) > 0 {
		r, _, err := update(sh, in, Out{Cap: len(in) + 64})
		if err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	_, need, err := final(sh, Out{Query: true})
	if err != nil {
		return nil, err
	}
	r, _, err := final(sh, Out{Cap: need})
	if err != nil {
		return nil, err
	}
	return append(out, r...), nil
}

// signOnce is SignInit + Sign; signParts feeds the data in parts.
func signOnce(m *Module, sh uint64, mc *Mechanism, key uint64, in []byte) ([]byte, error) {
	if err := m.SignInit(sh, mc, key); err != nil {
		return nil, err
	}
	out, _, err := m.Sign(sh, in, Out{Cap: 1024})
	return out, err
}

func signParts(m *Module, sh uint64, mc *Mechanism, key uint64, in []byte, parts []int) ([]byte, error) {
	if err := m.SignInit(sh, mc, key); err != nil {
		return nil, err
	}
	for _, n := range parts {
		n = min(n, len(in))
		if err := m.SignUpdate(sh, in[:n]); err != nil {
			return nil, err
		}
		in = in[n:]
	}
	if err := m.SignUpdate(sh, in); err != nil {
		return nil, err
	}
	out, _, err := m.SignFinal(sh, Out{Cap: 1024})
	return out, err
}

// verifyOnce is VerifyInit + Verify; verifyParts feeds the data in two parts.
func verifyOnce(m *Module, sh uint64, mc *Mechanism, key uint64, in, sig []byte) error {
	if err := m.VerifyInit(sh, mc, key); err != nil {
		return err
	}
	return m.Verify(sh, in, sig)
}

func verifyParts(m *Module, sh uint64, mc *Mechanism, key uint64, in, sig []byte) error {
	if err := m.VerifyInit(sh, mc, key); err != nil {
		return err
	}
	h := len(in) / 2
	if err := m.VerifyUpdate(sh, in[:h]); err != nil {
		return err
	}
	if err := m.VerifyUpdate(sh, in[h:]); err != nil {
		return err
	}
	return m.VerifyFinal(sh, sig)
}

// gcmMech is CKM_AES_GCM with its parameters.
func gcmMech(iv, aad []byte, tagBits int) *Mechanism {
	return &Mechanism{Type: ck.CKM_AES_GCM, GCM: &GCMParams{IV: iv, AAD: aad, IVBits: uint64(8 * len(iv)), TagBits: uint64(tagBits)}}
}

// ctrMech is CKM_AES_CTR with CK_AES_CTR_PARAMS.
func ctrMech(bits uint64, cb []byte) *Mechanism {
	return &Mechanism{Type: ck.CKM_AES_CTR, Param: append(ck.ULong(bits), cb...)}
}

// generalMech is a _GENERAL MAC mechanism with CK_MAC_GENERAL_PARAMS.
func generalMech(typ uint64, n int) *Mechanism {
	return &Mechanism{Type: typ, Param: ck.ULong(uint64(n))}
}
