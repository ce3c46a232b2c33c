// Package mech is the token's mechanism library: every PKCS#11 mechanism
// (RSA, DSA, DH, ECDSA, ECDH, EdDSA, ML-DSA, SLH-DSA, ML-KEM, XDH, the
// digests, HMAC, AES, DES, HKDF, the key generations), the key types and
// their attribute rules, and the PKCS#8 encodings of private keys.
//
// The contract with the PKCS#11 state (package token) is three
// interfaces, seam.go: a mechanism receives its operation as an Op (the
// key, the kind of operation, the accumulator or stream made at Init, and
// the slot), the slot as a Slot (the engine guard that runs every private
// operation, the slot's policy and logger, the mapping of an engine
// failure to a CK_RV, the module's GCM IV window), and a key object as a
// Key (its attributes, read only, its handle, and its prepared form,
// cached by the state and built here through preparedKey). The state
// implements them; this package does not import it (test/layout checks).
//
// A mechanism is a value whose type says what it does: MechBase is the
// common part, and the operations are small interfaces (Signer, Verifier,
// Encrypter, StreamCipher, Deriver ...) found by type assertion.
// NewRegistry derives each mechanism's CK_MECHANISM_INFO flags from
// them, and Registry (registry.go) lists every family, one line each.
package mech
