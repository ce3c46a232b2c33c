package token

// Sessions: the session state (derived from the token's login state and
// the session's R/W flag) and one state machine per operation kind.

import (
	"bytes"
	"hash"
	"sync"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// ckfFindObjects is PKCS#11 3.0's CKF_FIND_OBJECTS flag of C_SessionCancel.
const ckfFindObjects = 0x40

// cancelFlags maps C_SessionCancel flags to operation kinds.
var cancelFlags = [mech.OpKinds]uint64{
	mech.OpSign:    ck.CKF_SIGN,
	mech.OpVerify:  ck.CKF_VERIFY,
	mech.OpEncrypt: ck.CKF_ENCRYPT,
	mech.OpDecrypt: ck.CKF_DECRYPT,
	mech.OpDigest:  ck.CKF_DIGEST,

	mech.OpMessageEncrypt: ck.CKF_MESSAGE_ENCRYPT,
	mech.OpMessageDecrypt: ck.CKF_MESSAGE_DECRYPT,
	mech.OpMessageSign:    ck.CKF_MESSAGE_SIGN,
	mech.OpMessageVerify:  ck.CKF_MESSAGE_VERIFY,
}

// operation is one active operation.
type operation struct {
	kind mech.OpKind
	mech mech.Mechanism // the mechanism bound to its parameter (BindParam)
	key  *object
	slot *slot

	// Login binding: an operation with a private key needs the login it
	// started under (a logout in between ends it).
	needLogin bool
	epoch     uint64
	// CKA_ALWAYS_AUTHENTICATE: a CKU_CONTEXT_SPECIFIC login must follow
	// the Init before the key is used.
	needAuth bool
	authed   bool

	multi bool // an Update was made
	// digest is what the Update calls feed: the running digest of
	// C_Digest* or the accumulator of a MultiPart signature or MAC (nil:
	// a one-shot mechanism).
	digest hash.Hash
	stream mech.SymStream // a StreamCipher's encryption or decryption (mech/symstream.go)
	msg    *msgState      // a message-based operation's state (message.go)

	// sigGiven: a C_VerifySignatureInit operation (PKCS#11 3.2), whose
	// signature, given at Init, is kept in signature (verifysig.go).
	sigGiven  bool
	signature []byte

	// The two-call convention (output): the result of a call answered
	// with a length only (NULL buffer) or CKR_BUFFER_TOO_SMALL, kept for
	// the retry, with the call and the input it was computed for.
	result []byte
	done   bool
	keptBy outCall
	keptIn []byte // the single-part call's input (a copy)

	// out is the caller's buffer during the call that signs (OutBuf);
	// sum the digest of a hash-then-sign mechanism, signed from there.
	out []byte
	sum [64]byte
}

// outCall is the kind of call that produces an operation's final output.
type outCall int

const (
	callSingle outCall = iota + 1 // C_Encrypt, C_Decrypt, C_Sign, C_Digest: input and output in one call
	callFinal                     // C_EncryptFinal, C_DecryptFinal, C_SignFinal, C_DigestFinal
)

// session is one open session.
type session struct {
	h    uint64
	slot *slot
	rw   bool

	mu     sync.Mutex
	closed bool
	ops    [mech.OpKinds]*operation
	find   *findState
	// spare holds the last sign, encryption and decryption operations
	// ended, which the next Init of their kind reuses (newOperation), with
	// the mechanism bound to its parameter (mech.BindParamReusing):
	// signing and a symmetric encryption allocate no operation.
	spare [mech.OpKinds]*operation
	// info is initOp's working copy of the mechanism's offer.
	info MechanismInfo
}

// state is the CKS_ state of the session.
func (ss *session) state() uint64 {
	_, login := ss.slot.currentEpoch()
	switch {
	case login == soLoggedIn:
		return ck.CKS_RW_SO_FUNCTIONS
	case login == userLoggedIn && ss.rw:
		return ck.CKS_RW_USER_FUNCTIONS
	case login == userLoggedIn:
		return ck.CKS_RO_USER_FUNCTIONS
	case ss.rw:
		return ck.CKS_RW_PUBLIC_SESSION
	}
	return ck.CKS_RO_PUBLIC_SESSION
}

// close ends every operation and forgets the session in its slot
// (destroying its session objects; the last close logs out).
func (ss *session) close() {
	ss.mu.Lock()
	ss.closed = true
	ss.ops = [mech.OpKinds]*operation{}
	ss.spare = [mech.OpKinds]*operation{}
	ss.find = nil
	ss.mu.Unlock()
	ss.slot.removeSession(ss)
}

// lock finds and locks session h; callers defer ss.mu.Unlock().
func (m *Module) lock(h uint64) (*session, error) {
	ss, err := m.session(h)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, ck.Errorf(ck.CKR_SESSION_HANDLE_INVALID, "session %d closed", h)
	}
	return ss, nil
}

// begin installs op as the active operation of its kind.
func (ss *session) begin(op *operation) error {
	if ss.ops[op.kind] != nil {
		return ck.Errorf(ck.CKR_OPERATION_ACTIVE, "%s operation active", mech.OpNames[op.kind])
	}
	ss.ops[op.kind] = op
	return nil
}

// active returns the active operation of kind.
func (ss *session) active(kind mech.OpKind) (*operation, error) {
	op := ss.ops[kind]
	if op == nil {
		return nil, ck.Errorf(ck.CKR_OPERATION_NOT_INITIALIZED, "no %s operation", mech.OpNames[kind])
	}
	return op, nil
}

// end terminates the operation of kind.
func (ss *session) end(kind mech.OpKind) {
	if op := ss.ops[kind]; op != nil && reusesOperation(kind) {
		ss.spare[kind] = op
	}
	ss.ops[kind] = nil
}

// reusesOperation reports whether the operations of kind are kept for
// the next Init (session.spare).
func reusesOperation(kind mech.OpKind) bool {
	return kind == mech.OpSign || kind == mech.OpEncrypt || kind == mech.OpDecrypt
}

// spareMechanism is the bound mechanism of the spare operation of kind,
// which the next binding may overwrite (mech.BindParamReusing), or nil.
// No operation uses it: its operation ended.
func (ss *session) spareMechanism(kind mech.OpKind) mech.Mechanism {
	if op := ss.spare[kind]; op != nil {
		return op.mech
	}
	return nil
}

// newOperation is a fresh operation of kind with mc on the session's
// slot: the spare one of its kind, overwritten whole, when there is one.
func (ss *session) newOperation(kind mech.OpKind, mc mech.Mechanism) *operation {
	if op := ss.spare[kind]; op != nil {
		ss.spare[kind] = nil
		*op = operation{kind: kind, mech: mc, slot: ss.slot}
		return op
	}
	return &operation{kind: kind, mech: mc, slot: ss.slot}
}

// fail ends the operation of kind and returns err (an error other than a
// length report ends the operation, PKCS#11 3.0 §5.2).
func (ss *session) fail(kind mech.OpKind, err error) error {
	ss.end(kind)
	return err
}

// checkUse verifies that op's key may be used now: the login it started
// under still holds, and an always-authenticate key got its context login.
func (op *operation) checkUse() error {
	if op.needLogin {
		if epoch, _ := op.slot.currentEpoch(); epoch != op.epoch {
			return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "logged out since the operation started")
		}
	}
	if op.needAuth && !op.authed {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "key needs CKU_CONTEXT_SPECIFIC login")
	}
	return nil
}

// output applies the two-call convention to the final step of an
// operation (call, with input in for a single-part call): compute the
// result, keep it while the caller asks for the length (a NULL buffer:
// the length and CKR_OK) or offers too small a buffer
// (CKR_BUFFER_TOO_SMALL), release it (and end the operation) when it fits.
// Neither answer ends the operation (PKCS#11 3.0 §5.2).
//
// A kept result serves only the same call with the same input. A
// single-part call with another input (or after a Final's length query)
// is computed afresh from the state the Init left (resetInput): the
// answer is always the one for the input given, never an earlier call's.
// A Final after a single-part call's length report is
// CKR_OPERATION_ACTIVE and ends the operation (the operation is
// single-part).
func (ss *session) output(kind mech.OpKind, call outCall, in []byte, out Out, compute func(op *operation) ([]byte, error)) ([]byte, int, error) {
	op, err := ss.active(kind)
	if err != nil {
		return nil, 0, err
	}
	if op.done && (op.keptBy != call || (call == callSingle && !bytes.Equal(op.keptIn, in))) {
		if call == callFinal {
			return nil, 0, ss.fail(kind, ck.Errorf(ck.CKR_OPERATION_ACTIVE, "a single-part %s call reported its length: the operation is single-part", mech.OpNames[kind]))
		}
		clear(op.result)
		clear(op.keptIn)
		op.result, op.keptIn, op.done = nil, nil, false
		if err := op.resetInput(); err != nil {
			return nil, 0, ss.fail(kind, err)
		}
	}
	if !op.done {
		r, err := compute(op)
		if err != nil {
			return nil, 0, ss.fail(kind, err)
		}
		need := len(r)
		if !out.Query && out.Cap >= need {
			ss.end(kind)
			return r, need, nil
		}
		op.result, op.done, op.keptBy = r, true, call
		if call == callSingle {
			op.keptIn = bytes.Clone(in)
		}
	}
	need := len(op.result)
	if out.Query {
		return nil, need, nil
	}
	if out.Cap < need {
		return nil, need, ck.Errorf(ck.CKR_BUFFER_TOO_SMALL, "need %d bytes, have %d", need, out.Cap)
	}
	ss.end(kind)
	clear(op.keptIn)
	return op.result, need, nil
}

// contextLogin is C_Login(CKU_CONTEXT_SPECIFIC): it authorises the next use
// of the always-authenticate key of the session's active operation.
func (ss *session) contextLogin(pin []byte) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return ck.Errorf(ck.CKR_SESSION_HANDLE_INVALID, "session closed")
	}
	var target *operation
	for _, op := range ss.ops {
		if op != nil && op.needAuth {
			target = op
		}
	}
	if target == nil {
		return ck.Errorf(ck.CKR_OPERATION_NOT_INITIALIZED, "no operation needs a context-specific login")
	}
	s := ss.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.login != userLoggedIn {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "context-specific login needs the user logged in")
	}
	if err := checkPINLen(pin); err != nil {
		return err // before the KDF: no try used
	}
	st, err := s.st()
	if err != nil {
		return s.storeErr("context login", err)
	}
	epoch := s.epoch
	var key *keystore.Key
	s.unlocked(func() { key, err = st.Login(keystore.User, pin) }) // cache.go
	s.recordChangedLocked(err)
	if err != nil {
		return s.storeErr("context login", err)
	}
	key.Wipe()
	if s.epoch != epoch {
		return ck.Errorf(ck.CKR_USER_NOT_LOGGED_IN, "logged out during the context-specific login")
	}
	target.authed = true
	return nil
}

// EndActive ends the session's active operation of the kind the
// C_SessionCancel flag names (CKF_SIGN, CKF_VERIFY, CKF_ENCRYPT,
// CKF_DECRYPT, CKF_DIGEST, CKF_MESSAGE_*) and reports whether there was one: what
// C_SignInit, C_EncryptInit... do when called with a NULL mechanism while
// an operation is active (PKCS#11 3.0: "to terminate an active
// operation"). An invalid session has none.
func (m *Module) EndActive(sh uint64, flag uint64) bool {
	ss, err := m.lock(sh)
	if err != nil {
		return false
	}
	defer ss.mu.Unlock()
	for k, f := range cancelFlags {
		if f == flag && ss.ops[k] != nil {
			ss.ops[k] = nil
			return true
		}
	}
	return false
}

// SessionCancel is C_SessionCancel (3.0): it ends the operations named by
// flags (CKF_SIGN, CKF_VERIFY, CKF_ENCRYPT, CKF_DECRYPT, CKF_DIGEST,
// CKF_MESSAGE_ENCRYPT, CKF_MESSAGE_DECRYPT, CKF_MESSAGE_SIGN,
// CKF_MESSAGE_VERIFY, CKF_FIND_OBJECTS).
func (m *Module) SessionCancel(sh uint64, flags uint64) error {
	ss, err := m.lock(sh)
	if err != nil {
		return err
	}
	defer ss.mu.Unlock()
	for k, f := range cancelFlags {
		if flags&f != 0 {
			ss.ops[k] = nil
		}
	}
	if flags&ckfFindObjects != 0 {
		ss.find = nil
	}
	return nil
}
