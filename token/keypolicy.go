package token

// The key-management policy (docs/THREATS.md, "Key-management policy").
// PKCS#11 lets a user who holds the PIN read a sensitive, extractable
// key's value through the API: wrap it under a key that can also decrypt,
// under a key of a value the user chose, under itself, under a weaker key,
// or unwrap it again as a readable key, or derive a readable key from it
// (Clulow 2003; Bortolozzo, Centenaro, Focardi, Steel 2010; Fröschle,
// Steel 2009). The safe policy, the default of every slot, refuses each
// of those ways; the slot option key_policy = "standard" restores the
// standard's permissive rules. The rules, each where it is enforced:
//
//   - Separation of roles (newKeyPolicy, wrapPolicy): a key that can
//     decrypt does not wrap a sensitive key (the wrapped key would be
//     decrypted). A creation template that asks for CKA_WRAP (CKA_UNWRAP)
//     and says nothing of CKA_DECRYPT (CKA_ENCRYPT) gets it false
//     (C_CreateObject, C_GenerateKey, C_UnwrapKey, C_DeriveKey); a
//     template that asks for both gets both, as the clients' default
//     templates do (python-pkcs11, graphene, SoftHSMv2's keys), and the
//     key then wraps no sensitive key. A key that unwraps and encrypts
//     can unwrap a value of the user's choosing, but the key it makes is
//     not local, so it wraps no sensitive key either.
//   - Sticky roles (changePolicy): C_SetAttributeValue and C_CopyObject
//     may turn a secret key's CKA_WRAP, CKA_UNWRAP, CKA_ENCRYPT and
//     CKA_DECRYPT off, never on (CKR_ATTRIBUTE_READ_ONLY). A key that
//     wrapped and later decrypts, or two copies of one value that share
//     the two roles, would otherwise get around the separation.
//   - Wrapping a sensitive key (wrapPolicy): never under itself (nor a
//     copy of its value); only under a key that is CKA_TRUSTED (set by
//     the SO) or a secret key made on the token that was never readable
//     (CKA_LOCAL and CKA_ALWAYS_SENSITIVE), whose value therefore nobody
//     knows; never under a weaker key (keyStrength); never under a key
//     that can also decrypt.
//   - Unwrapping (newKeyPolicy): an unwrapped key is sensitive (the token
//     cannot tell what protected the wrapped key: it was extractable, and
//     may have been sensitive).
//   - Deriving from a secret key (derivePolicy, newKeyPolicy): the
//     derived key is sensitive if the base key is, not extractable if the
//     base key is not; CKM_HKDF_DATA (a readable data object) does not
//     take a sensitive base; the derivations by data encryption
//     (CKM_*_ENCRYPT_DATA) need the base key's CKA_ENCRYPT, since their
//     output is an encryption under it. A key agreement (ECDH, DH: a
//     private key as the base) yields a secret shared with the peer by
//     design, and follows its template.

import (
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// safePolicy reports whether the slot runs the safe key-management policy.
func (s *slot) safePolicy() bool { return !s.cfg.StandardKeyPolicy() }

// roleConflicts are the pairs of usage attributes whose first, asked for
// in a creation template, turns the unstated second off.
var roleConflicts = [...]struct{ role, conflict uint64 }{
	{ck.CKA_WRAP, ck.CKA_DECRYPT},
	{ck.CKA_UNWRAP, ck.CKA_ENCRYPT},
}

// stickyRoles are the usage attributes a change may clear but not set.
var stickyRoles = [...]uint64{ck.CKA_WRAP, ck.CKA_UNWRAP, ck.CKA_ENCRYPT, ck.CKA_DECRYPT}

// separateRoles applies the separation of roles to a secret key's
// creation template t: a role asked for turns its unstated conflicting
// attribute off (a template stating both keeps both: wrapPolicy then
// refuses the key for sensitive keys).
func separateRoles(t attr.Map) {
	for _, c := range roleConflicts {
		if _, stated := t[c.conflict]; t.Bool(c.role) && !stated {
			t[c.conflict] = attr.False
		}
	}
}

// newKeyPolicy applies the safe policy to the template t of a new key
// (class already defaulted) made as origin says: the separation of roles
// for a secret key, sensitivity for an unwrapped key, the base key's
// protection for a key derived from a secret key.
func newKeyPolicy(t attr.Map, origin keyOrigin) error {
	class, _ := t.ULong(ck.CKA_CLASS)
	if class != ck.CKO_SECRET_KEY && class != ck.CKO_PRIVATE_KEY {
		return nil
	}
	if class == ck.CKO_SECRET_KEY {
		separateRoles(t)
	}
	stated := func(at uint64) bool { _, ok := t[at]; return ok }
	switch origin.mode {
	case modeUnwrap:
		if stated(ck.CKA_SENSITIVE) && !t.Bool(ck.CKA_SENSITIVE) {
			return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "key policy: an unwrapped key is sensitive (CKA_SENSITIVE false asked)")
		}
		t[ck.CKA_SENSITIVE] = attr.True
	case modeDerive:
		if baseClass, _ := origin.base.ULong(ck.CKA_CLASS); baseClass != ck.CKO_SECRET_KEY {
			return nil // a key agreement
		}
		if origin.base.Bool(ck.CKA_SENSITIVE) {
			if stated(ck.CKA_SENSITIVE) && !t.Bool(ck.CKA_SENSITIVE) {
				return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "key policy: a key derived from a sensitive key is sensitive")
			}
			t[ck.CKA_SENSITIVE] = attr.True
		}
		if !origin.base.Bool(ck.CKA_EXTRACTABLE) {
			if t.Bool(ck.CKA_EXTRACTABLE) {
				return ck.Errorf(ck.CKR_TEMPLATE_INCONSISTENT, "key policy: a key derived from an unextractable key is unextractable")
			}
			t[ck.CKA_EXTRACTABLE] = attr.False
		}
	}
	return nil
}

// changePolicy applies the safe policy to a change of object attributes
// (C_SetAttributeValue, C_CopyObject) from old to new: a secret key's
// roles are only cleared.
func changePolicy(old, new attr.Map) error {
	if class, _ := old.ULong(ck.CKA_CLASS); class != ck.CKO_SECRET_KEY {
		return nil
	}
	for _, r := range stickyRoles {
		if new.Bool(r) && !old.Bool(r) {
			return ck.Errorf(ck.CKR_ATTRIBUTE_READ_ONLY, "key policy: %s cannot be turned on after the key is made", attr.Describe(r))
		}
	}
	return nil
}

// wrapPolicy applies the safe policy to C_WrapKey of key k (handle kh)
// under wk (handle wh).
func wrapPolicy(wk, k *object, wh, kh uint64) error {
	if wh == kh || (wk.class() == ck.CKO_SECRET_KEY && k.class() == ck.CKO_SECRET_KEY && sameValue(wk, k)) {
		return ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "key policy: key %d wrapped under itself", kh)
	}
	if !k.attrs.Bool(ck.CKA_SENSITIVE) {
		return nil // its value is readable anyway
	}
	trusted := wk.attrs.Bool(ck.CKA_TRUSTED)
	madeHere := wk.class() == ck.CKO_SECRET_KEY && wk.attrs.Bool(ck.CKA_LOCAL) && wk.attrs.Bool(ck.CKA_ALWAYS_SENSITIVE)
	if !trusted && !madeHere {
		return ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE,
			"key policy: sensitive key %d wrapped only under a CKA_TRUSTED key or a secret key made on the token and always sensitive (wrapping key %d is neither)", kh, wh)
	}
	if wk.attrs.Bool(ck.CKA_DECRYPT) {
		return ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "key policy: wrapping key %d can also decrypt: it wraps no sensitive key", wh)
	}
	if ws, ks := keyStrength(wk), keyStrength(k); ws < ks {
		return ck.Errorf(ck.CKR_KEY_NOT_WRAPPABLE, "key policy: a %d-bit-strength key (%d) wrapped under a %d-bit-strength key (%d)", ks, kh, ws, wh)
	}
	return nil
}

// sameValue reports whether two secret keys hold the same value (in time
// independent of the values; the lengths are not secret).
func sameValue(a, b *object) bool {
	va, vb := a.attrs[ck.CKA_VALUE], b.attrs[ck.CKA_VALUE]
	return len(va) != 0 && len(va) == len(vb) && mech.EqualCT(va, vb)
}

// derivePolicy applies the safe policy to C_DeriveKey's base key (handle
// h) and mechanism, before anything is computed: see the file comment.
func derivePolicy(base *object, h uint64, mc mech.Mechanism, data bool) error {
	if base.class() != ck.CKO_SECRET_KEY {
		return nil
	}
	if data && base.attrs.Bool(ck.CKA_SENSITIVE) {
		return ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "key policy: %s makes a readable data object; base key %d is sensitive", mc.Base().Name(), h)
	}
	if _, ok := mc.(*mech.EncryptData); ok && !base.attrs.Bool(ck.CKA_ENCRYPT) {
		return ck.Errorf(ck.CKR_KEY_FUNCTION_NOT_PERMITTED, "key policy: %s encrypts under base key %d, whose CKA_ENCRYPT is false", mc.Base().Name(), h)
	}
	return nil
}

// keyStrength is a key's security strength in bits, as NIST SP 800-57
// Part 1 (rev. 5) Table 2 estimates it: single DES 56, two-key Triple DES
// 80, three-key 112; AES and the other secret keys their size (a generic
// or HMAC key of more than 256 bits counts 256); RSA, DSA and DH by the
// modulus (1024: 80, 2048: 112, 3072: 128, 7680: 192, 15360: 256; below
// 1024: 0); EC and EdDSA keys half the order's size.
func keyStrength(o *object) int {
	kt := o.keyType()
	k, ok := mech.KeyTypes[kt]
	if !ok {
		return 0
	}
	bits := k.Bits(o.attrs)
	switch kt {
	case ck.CKK_DES:
		return 56
	case ck.CKK_DES2:
		return 80
	case ck.CKK_DES3:
		return 112
	case ck.CKK_RSA, ck.CKK_DSA, ck.CKK_DH:
		strength := 0
		for _, l := range [...]struct{ bits, strength int }{{1024, 80}, {2048, 112}, {3072, 128}, {7680, 192}, {15360, 256}} {
			if bits >= l.bits {
				strength = l.strength
			}
		}
		return strength
	case ck.CKK_EC, ck.CKK_EC_EDWARDS:
		return min(bits/2, 256)
	}
	if o.class() == ck.CKO_SECRET_KEY {
		return min(bits, 256)
	}
	return 0
}
