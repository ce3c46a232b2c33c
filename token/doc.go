// Package token is the PKCS#11 state of ModExp Token: the [Module] and
// its slots, each slot's token (login state, the object cache and its
// search index over the keystore), and the sessions, with one state
// machine per operation kind. The C layer (cgo/) calls the methods of
// [Module] with Go values (api.go) and maps the returned errors with
// ck.RV.
//
// What an operation computes is the mechanism library's (token/mech):
// an Init binds a mechanism of mech.Registry to its parameter and key;
// the mechanism then sees the operation as a mech.Op, its slot as a
// mech.Slot and its key object as a mech.Key (seam.go). Attributes
// follow the model of token/attr; engines are reached only through the
// slot's guard (engine/guard, engine.go).
//
// The package never prints; it logs through log/slog to the file named by
// MODEXP_TOKEN_LOG (or the configuration), and otherwise discards.
//
// # Concurrency
//
// Every method is safe for concurrent use. Locks, outermost first:
// session.mu (held for the duration of an operation call on that session,
// so calls on one session are serialised), slot.mu (login state and object
// cache; never held across an engine operation or key generation), and
// Module.mu (session table). A private-key operation runs with only its
// session's lock held, so operations on different sessions run in
// parallel.
//
// # Choices where the standard leaves room
//
//   - C_SeedRandom answers CKR_OK and mixes the seed into nothing:
//     randomness comes from crypto/rand (the operating system), which
//     cannot be seeded; clients that seed before generating keep working.
//   - C_WaitForSlotEvent: slots never change while the module is loaded,
//     so CKF_DONT_BLOCK answers CKR_NO_EVENT; a blocking wait would never
//     return and answers CKR_FUNCTION_NOT_SUPPORTED (as SoftHSMv2 does).
//   - Token flags include CKF_RESTORE_KEY_NOT_NEEDED: C_SetOperationState
//     is not offered, so no operation state ever needs a key restored.
//   - Keystore lock timeouts (another process holds the token file too
//     long) answer CKR_FUNCTION_FAILED: retrying may succeed.
//   - A private key with CKA_PRIVATE false still keeps its private values
//     sealed: it can be used without login only if its values were
//     unlocked in this process; otherwise CKR_USER_NOT_LOGGED_IN.
//   - C_CopyObject cannot make a private or secret key public (CKA_PRIVATE
//     TRUE→FALSE: CKR_TEMPLATE_INCONSISTENT, as SoftHSMv2), nor an
//     unmodifiable object modifiable; a copy of an unmodifiable object may
//     only move (CKA_TOKEN, CKA_PRIVATE) and tighten (CKA_SENSITIVE on,
//     CKA_EXTRACTABLE and CKA_COPYABLE off). The rules are listed at
//     applyChanges (objects.go).
//   - CKR_ACTION_PROHIBITED (3.0) for C_CopyObject of an uncopyable,
//     C_DestroyObject of an undestroyable and C_SetAttributeValue of an
//     unmodifiable object.
//   - Raw mechanisms (CKM_RSA_PKCS, CKM_RSA_X_509, CKM_RSA_PKCS_PSS,
//     CKM_RSA_PKCS_OAEP) are single-part: their Update calls answer
//     CKR_FUNCTION_NOT_SUPPORTED and end the operation.
//   - Sessions may be opened on an uninitialised token (SoftHSM answers
//     CKR_TOKEN_NOT_RECOGNIZED); logins there answer
//     CKR_USER_PIN_NOT_INITIALIZED, token objects cannot be created.
//   - CKA_PRIVATE defaults to true for private keys, false for every other
//     object (data objects included; SoftHSM makes data objects private).
//   - C_Logout forgets private objects: private session objects are
//     destroyed and handles of private token objects end; the next login
//     gives them new handles (PKCS#11 3.0 §5.6).
//   - C_Sign, C_Verify and C_Digest after an Update answer
//     CKR_OPERATION_ACTIVE and, like every error but a length report, end
//     the operation.
//   - C_GenerateRandom gives at most 1 MiB per call (CKR_ARGUMENTS_BAD
//     beyond).
//   - Secret keys default like private keys: CKA_PRIVATE and
//     CKA_SENSITIVE true, CKA_EXTRACTABLE false. A CKA_VALUE_LEN stating
//     the true length is accepted where the standard forbids it
//     (C_CreateObject, C_UnwrapKey of AES keys): clients send it.
//   - CKM_AES_GCM buffers the message until Final (Go's GCM is not
//     incremental): its Update calls return no output.
//   - C_DigestKey digests secret keys, sensitive ones too (the digest, not
//     the value, leaves the token); public and private keys are
//     CKR_KEY_INDIGESTIBLE.
//
// # Key material in memory
//
// Go moves and copies heap memory at will and cannot pin or lock it, so
// wiping is best effort. What is done: the token key unlocked by a login
// is zeroed at logout (keystore.Key.Wipe), and with it the cache forgets
// sealed values and prepared engine keys; [Module.Close] (C_Finalize)
// zeroes every secret attribute value of the cache in place before the
// sessions end. What is not: values dropped at logout, C_DestroyObject or
// C_SetAttributeValue are left to the garbage collector, not zeroed,
// because an operation of another session may still be reading that
// snapshot; the engine's prepared key (engine/alg/rsa's big.Int and limb
// copies) is dropped, not zeroed; PINs arrive as views of the caller's C
// memory and are not kept (the keystore derives from them and forgets).
package token
