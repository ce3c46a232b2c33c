package token

import "github.com/modexp-token/modexp-token/token/ck"

// NOTE: temporary stubs fixing the method set the C layer calls. The token
// implementation replaces these bodies (and this file) with the real ones;
// the signatures are the contract and change only together with cgo/.

// Module is the loaded PKCS#11 module: configuration, slots, tokens and
// sessions. One Module lives between C_Initialize and C_Finalize.
type Module struct{}

// LoadFromEnv reads the configuration (MODEXP_TOKEN_CONF, MODEXP_TOKEN_ENGINE,
// defaults) and opens every slot's engine and token file. An unknown engine
// or a bad configuration is an error (the C layer answers C_Initialize with
// it), never a silent default.
func LoadFromEnv() (*Module, error) { return nil, ck.CKR_FUNCTION_NOT_SUPPORTED }

func (m *Module) Close() error                        { return nil }
func (m *Module) Info() ModuleInfo                    { return ModuleInfo{} }
func (m *Module) SlotList(tokenPresent bool) []uint64 { return nil }
func (m *Module) SlotInfo(slot uint64) (SlotInfo, error) {
	return SlotInfo{}, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) TokenInfo(slot uint64) (TokenInfo, error) {
	return TokenInfo{}, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) MechanismList(slot uint64) ([]uint64, error) {
	return nil, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) MechanismInfo(slot, mech uint64) (MechanismInfo, error) {
	return MechanismInfo{}, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) InitToken(slot uint64, soPIN []byte, label string) error {
	return ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) InitPIN(sh uint64, pin []byte) error           { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) SetPIN(sh uint64, oldPIN, newPIN []byte) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) OpenSession(slot, flags uint64) (uint64, error) {
	return 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) CloseSession(sh uint64) error       { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) CloseAllSessions(slot uint64) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) SessionInfo(sh uint64) (SessionInfo, error) {
	return SessionInfo{}, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) Login(sh, userType uint64, pin []byte) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) Logout(sh uint64) error                      { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) SessionCancel(sh uint64, flags uint64) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }

func (m *Module) CreateObject(sh uint64, tmpl []Attribute) (uint64, error) {
	return 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) CopyObject(sh, obj uint64, tmpl []Attribute) (uint64, error) {
	return 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) DestroyObject(sh, obj uint64) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) GetObjectSize(sh, obj uint64) (uint64, error) {
	return 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}

// GetAttributeValue answers each requested type; the error is for the call
// as a whole (bad session/object), per-attribute problems go in the results.
func (m *Module) GetAttributeValue(sh, obj uint64, types []uint64) ([]AttributeResult, error) {
	return nil, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) SetAttributeValue(sh, obj uint64, tmpl []Attribute) error {
	return ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) FindObjectsInit(sh uint64, tmpl []Attribute) error {
	return ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) FindObjects(sh uint64, max int) ([]uint64, error) {
	return nil, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) FindObjectsFinal(sh uint64) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }

// Encryption, decryption, signing, verification and digesting. Init takes
// the key handle (0 for digests); single-part calls end the operation
// except when reporting a length (see Out).
func (m *Module) EncryptInit(sh uint64, mech *Mechanism, key uint64) error {
	return ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) Encrypt(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) EncryptUpdate(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) EncryptFinal(sh uint64, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) DecryptInit(sh uint64, mech *Mechanism, key uint64) error {
	return ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) Decrypt(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) DecryptUpdate(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) DecryptFinal(sh uint64, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) DigestInit(sh uint64, mech *Mechanism) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) Digest(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) DigestUpdate(sh uint64, in []byte) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) DigestKey(sh, key uint64) error          { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) DigestFinal(sh uint64, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) SignInit(sh uint64, mech *Mechanism, key uint64) error {
	return ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) Sign(sh uint64, in []byte, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) SignUpdate(sh uint64, in []byte) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) SignFinal(sh uint64, out Out) ([]byte, int, error) {
	return nil, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) VerifyInit(sh uint64, mech *Mechanism, key uint64) error {
	return ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) Verify(sh uint64, in, sig []byte) error  { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) VerifyUpdate(sh uint64, in []byte) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) VerifyFinal(sh uint64, sig []byte) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) GenerateKeyPair(sh uint64, mech *Mechanism, pub, priv []Attribute) (uint64, uint64, error) {
	return 0, 0, ck.CKR_FUNCTION_NOT_SUPPORTED
}
func (m *Module) SeedRandom(sh uint64, seed []byte) error { return ck.CKR_FUNCTION_NOT_SUPPORTED }
func (m *Module) GenerateRandom(sh uint64, n int) ([]byte, error) {
	return nil, ck.CKR_FUNCTION_NOT_SUPPORTED
}
