package main

// Cryptographic entry points: encryption, decryption, digests, signatures,
// key generation, key wrapping, key derivation and random numbers.

/*
#include "pkcs11_3.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// The shapes of token calls shared by several entry points. Method
// expressions ((*token.Module).Sign) keep the hot path free of closures.
type (
	initOp   func(m *token.Module, sh uint64, mech *token.Mechanism, key uint64) error
	dataOp   func(m *token.Module, sh uint64, in []byte, out token.Out) ([]byte, int, error)
	updateOp func(m *token.Module, sh uint64, in []byte) error
	finalOp  func(m *token.Module, sh uint64, out token.Out) ([]byte, int, error)
)

// opInit decodes the mechanism and starts an operation with key. A NULL
// mechanism ends the active operation of the kind (CKF_SIGN, CKF_ENCRYPT...),
// as PKCS#11 3.0 has it (pkcs11-provider cancels so); with none active it
// is CKR_ARGUMENTS_BAD, as before 3.0.
func opInit(fn string, h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE, op initOp, kind uint64) (rv C.CK_RV) {
	return opInitWith(fn, h, pMech, key, op, kind, mechanismIn)
}

// opInitWith is opInit with the mechanism decoded by decode.
func opInitWith(fn string, h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE, op initOp, kind uint64,
	decode func(*C.CK_MECHANISM) (*token.Mechanism, C.CK_RV)) (rv C.CK_RV) {
	c := enter(fn)
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(key)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pMech == nil && m.EndActive(uint64(h), kind) {
		return rvOK
	}
	mech, rv := decode(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	return c.rvOf(op(m, uint64(h), mech, uint64(key)))
}

// cipherMech is a CK_MECHANISM decoded as views of the caller's memory,
// for the Init of a mechanism whose binding copies what it keeps of its
// parameter (token.CipherInitCopiesParam: the AES modes), from a pool:
// C_EncryptInit and C_DecryptInit of those allocate nothing.
type cipherMech struct {
	m   token.Mechanism
	gcm token.GCMParams
}

var cipherMechs = sync.Pool{New: func() any { return new(cipherMech) }}

// opInitCipher is opInit for C_EncryptInit and C_DecryptInit.
func opInitCipher(fn string, h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE, op initOp, kind uint64) C.CK_RV {
	if pMech == nil || !token.CipherInitCopiesParam(uint64(pMech.mechanism)) {
		return opInit(fn, h, pMech, key, op, kind)
	}
	v := cipherMechs.Get().(*cipherMech)
	rv := opInitWith(fn, h, pMech, key, op, kind, v.decode) // recovers its panics
	*v = cipherMech{}                                       // no view of the caller's memory outlives the call
	cipherMechs.Put(v)
	return rv
}

// decode is mechanismIn for the mechanisms of opInitCipher: the same
// answers, the parameter's bytes not copied.
func (v *cipherMech) decode(p *C.CK_MECHANISM) (*token.Mechanism, C.CK_RV) {
	param, plen := p.pParameter, p.ulParameterLen
	if param == nil && plen != 0 {
		return nil, rvArgumentsBad
	}
	v.m = token.Mechanism{Type: uint64(p.mechanism)}
	if v.m.Type == ck.CKM_AES_GCM {
		if rv := gcmParamsDecode(&v.gcm, param, plen, viewOf); rv != rvOK {
			return nil, rv
		}
		v.m.GCM = &v.gcm
		return &v.m, rvOK
	}
	raw, ok := viewOf(param, plen)
	if !ok {
		return nil, rvArgumentsBad
	}
	v.m.Param = raw
	return &v.m, rvOK
}

// opData runs a call that consumes input and produces output under the
// two-call convention (C_Sign, C_Encrypt, C_DecryptUpdate...).
func opData(fn string, h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG, op dataOp, kind uint64) (rv C.CK_RV) {
	c := enter(fn)
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	in, ok1 := bytesView(pIn, inLen)
	out, ok2 := outOf(pOut, pOutLen)
	if !ok1 || !ok2 {
		return argumentsBad(m, h, kind)
	}
	data, need, err := op(m, uint64(h), in, out)
	return putOut(pOut, pOutLen, data, need, c.note(err))
}

// opUpdate feeds input to a multi-part operation.
func opUpdate(fn string, h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG, op updateOp, kind uint64) (rv C.CK_RV) {
	c := enter(fn)
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	in, ok := bytesView(pIn, inLen)
	if !ok {
		return argumentsBad(m, h, kind)
	}
	return c.rvOf(op(m, uint64(h), in))
}

// opFinal ends a multi-part operation with an output.
func opFinal(fn string, h C.CK_SESSION_HANDLE, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG, op finalOp, kind uint64) (rv C.CK_RV) {
	c := enter(fn)
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	out, ok := outOf(pOut, pOutLen)
	if !ok {
		return argumentsBad(m, h, kind)
	}
	data, need, err := op(m, uint64(h), out)
	return putOut(pOut, pOutLen, data, need, c.note(err))
}

// argumentsBad answers CKR_ARGUMENTS_BAD for a call on an active operation
// of the given kind (CKF_SIGN, CKF_ENCRYPT...; 0 for none) and ends that
// operation, as the standard says every error but CKR_BUFFER_TOO_SMALL does.
func argumentsBad(m *token.Module, h C.CK_SESSION_HANDLE, kind uint64) C.CK_RV {
	if kind != 0 {
		_ = m.SessionCancel(uint64(h), kind)
	}
	return rvArgumentsBad
}

//export goEncryptInit
func goEncryptInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE) C.CK_RV {
	return opInitCipher("C_EncryptInit", h, pMech, key, (*token.Module).EncryptInit, C.CKF_ENCRYPT)
}

//export goEncrypt
func goEncrypt(h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return opData("C_Encrypt", h, pIn, inLen, pOut, pOutLen, (*token.Module).Encrypt, C.CKF_ENCRYPT)
}

//export goEncryptUpdate
func goEncryptUpdate(h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return opData("C_EncryptUpdate", h, pIn, inLen, pOut, pOutLen, (*token.Module).EncryptUpdate, C.CKF_ENCRYPT)
}

//export goEncryptFinal
func goEncryptFinal(h C.CK_SESSION_HANDLE, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return opFinal("C_EncryptFinal", h, pOut, pOutLen, (*token.Module).EncryptFinal, C.CKF_ENCRYPT)
}

//export goDecryptInit
func goDecryptInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE) C.CK_RV {
	return opInitCipher("C_DecryptInit", h, pMech, key, (*token.Module).DecryptInit, C.CKF_DECRYPT)
}

//export goDecrypt
func goDecrypt(h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return opData("C_Decrypt", h, pIn, inLen, pOut, pOutLen, (*token.Module).Decrypt, C.CKF_DECRYPT)
}

//export goDecryptUpdate
func goDecryptUpdate(h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return opData("C_DecryptUpdate", h, pIn, inLen, pOut, pOutLen, (*token.Module).DecryptUpdate, C.CKF_DECRYPT)
}

//export goDecryptFinal
func goDecryptFinal(h C.CK_SESSION_HANDLE, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return opFinal("C_DecryptFinal", h, pOut, pOutLen, (*token.Module).DecryptFinal, C.CKF_DECRYPT)
}

//export goDigestInit
func goDigestInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM) (rv C.CK_RV) {
	c := enter("C_DigestInit")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if pMech == nil && m.EndActive(uint64(h), C.CKF_DIGEST) {
		return rvOK
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	return c.rvOf(m.DigestInit(uint64(h), mech))
}

//export goDigest
func goDigest(h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return opData("C_Digest", h, pIn, inLen, pOut, pOutLen, (*token.Module).Digest, C.CKF_DIGEST)
}

//export goDigestUpdate
func goDigestUpdate(h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG) C.CK_RV {
	return opUpdate("C_DigestUpdate", h, pIn, inLen, (*token.Module).DigestUpdate, C.CKF_DIGEST)
}

//export goDigestKey
func goDigestKey(h C.CK_SESSION_HANDLE, key C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_DigestKey")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(key)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return c.rvOf(m.DigestKey(uint64(h), uint64(key)))
}

//export goDigestFinal
func goDigestFinal(h C.CK_SESSION_HANDLE, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) C.CK_RV {
	return opFinal("C_DigestFinal", h, pOut, pOutLen, (*token.Module).DigestFinal, C.CKF_DIGEST)
}

//export goSignInit
func goSignInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE) C.CK_RV {
	return opInit("C_SignInit", h, pMech, key, (*token.Module).SignInit, C.CKF_SIGN)
}

//export goSign
func goSign(h C.CK_SESSION_HANDLE, pData *C.CK_BYTE, dataLen C.CK_ULONG, pSig *C.CK_BYTE, pSigLen *C.CK_ULONG) C.CK_RV {
	return opData("C_Sign", h, pData, dataLen, pSig, pSigLen, (*token.Module).Sign, C.CKF_SIGN)
}

//export goSignUpdate
func goSignUpdate(h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG) C.CK_RV {
	return opUpdate("C_SignUpdate", h, pIn, inLen, (*token.Module).SignUpdate, C.CKF_SIGN)
}

//export goSignFinal
func goSignFinal(h C.CK_SESSION_HANDLE, pSig *C.CK_BYTE, pSigLen *C.CK_ULONG) C.CK_RV {
	return opFinal("C_SignFinal", h, pSig, pSigLen, (*token.Module).SignFinal, C.CKF_SIGN)
}

//export goVerifyInit
func goVerifyInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE) C.CK_RV {
	return opInit("C_VerifyInit", h, pMech, key, (*token.Module).VerifyInit, C.CKF_VERIFY)
}

//export goVerify
func goVerify(h C.CK_SESSION_HANDLE, pData *C.CK_BYTE, dataLen C.CK_ULONG, pSig *C.CK_BYTE, sigLen C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_Verify")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	data, ok1 := bytesView(pData, dataLen)
	sig, ok2 := bytesView(pSig, sigLen)
	if !ok1 || !ok2 {
		return argumentsBad(m, h, C.CKF_VERIFY)
	}
	return c.rvOf(m.Verify(uint64(h), data, sig))
}

//export goVerifyUpdate
func goVerifyUpdate(h C.CK_SESSION_HANDLE, pIn *C.CK_BYTE, inLen C.CK_ULONG) C.CK_RV {
	return opUpdate("C_VerifyUpdate", h, pIn, inLen, (*token.Module).VerifyUpdate, C.CKF_VERIFY)
}

//export goVerifyFinal
func goVerifyFinal(h C.CK_SESSION_HANDLE, pSig *C.CK_BYTE, sigLen C.CK_ULONG) C.CK_RV {
	return opUpdate("C_VerifyFinal", h, pSig, sigLen, (*token.Module).VerifyFinal, C.CKF_VERIFY)
}

//export goGenerateKeyPair
func goGenerateKeyPair(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM,
	pPub *C.CK_ATTRIBUTE, nPub C.CK_ULONG, pPriv *C.CK_ATTRIBUTE, nPriv C.CK_ULONG,
	phPub, phPriv *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_GenerateKeyPair")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	pub, rv := templateIn(pPub, nPub)
	if rv != rvOK {
		return rv
	}
	priv, rv := templateIn(pPriv, nPriv)
	if rv != rvOK {
		return rv
	}
	if phPub == nil || phPriv == nil {
		return rvArgumentsBad
	}
	hPub, hPriv, err := m.GenerateKeyPair(uint64(h), mech, pub, priv)
	if err != nil {
		return c.rvOf(err)
	}
	*phPub, *phPriv = C.CK_OBJECT_HANDLE(hPub), C.CK_OBJECT_HANDLE(hPriv)
	return rvOK
}

//export goGenerateKey
func goGenerateKey(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG, ph *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_GenerateKey")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	if ph == nil {
		return rvArgumentsBad
	}
	key, err := m.GenerateKey(uint64(h), mech, tmpl)
	if err != nil {
		return c.rvOf(err)
	}
	*ph = C.CK_OBJECT_HANDLE(key)
	return rvOK
}

//export goDeriveKey
func goDeriveKey(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, base C.CK_OBJECT_HANDLE,
	pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG, phKey *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_DeriveKey")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(base)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	if phKey == nil {
		return rvArgumentsBad
	}
	hKey, err := m.DeriveKey(uint64(h), mech, uint64(base), tmpl)
	if err != nil {
		return c.rvOf(err)
	}
	*phKey = C.CK_OBJECT_HANDLE(hKey)
	return rvOK
}

//export goSeedRandom
func goSeedRandom(h C.CK_SESSION_HANDLE, pSeed *C.CK_BYTE, seedLen C.CK_ULONG) C.CK_RV {
	return opUpdate("C_SeedRandom", h, pSeed, seedLen, (*token.Module).SeedRandom, 0)
}

//export goGenerateRandom
func goGenerateRandom(h C.CK_SESSION_HANDLE, pOut *C.CK_BYTE, n C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_GenerateRandom")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	if (pOut == nil && n != 0) || n > maxLen {
		return rvArgumentsBad
	}
	data, err := m.GenerateRandom(uint64(h), int(n))
	if err != nil {
		return c.rvOf(err)
	}
	if len(data) != int(n) {
		return rvGeneralError // the token broke its contract
	}
	if n > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(pOut)), int(n)), data)
	}
	return rvOK
}

//export goWrapKey
func goWrapKey(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, wrapping, key C.CK_OBJECT_HANDLE, pOut *C.CK_BYTE, pOutLen *C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_WrapKey")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(wrapping)
	c.object(key)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	out, ok := outOf(pOut, pOutLen)
	if !ok {
		return rvArgumentsBad
	}
	data, need, err := m.WrapKey(uint64(h), mech, uint64(wrapping), uint64(key), out)
	return putOut(pOut, pOutLen, data, need, c.note(err))
}

//export goUnwrapKey
func goUnwrapKey(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, unwrapping C.CK_OBJECT_HANDLE,
	pWrapped *C.CK_BYTE, wrappedLen C.CK_ULONG, pTmpl *C.CK_ATTRIBUTE, n C.CK_ULONG, phKey *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_UnwrapKey")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(unwrapping)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	wrapped, ok := bytesView(pWrapped, wrappedLen)
	if !ok || phKey == nil {
		return rvArgumentsBad
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	key, err := m.UnwrapKey(uint64(h), mech, uint64(unwrapping), wrapped, tmpl)
	if err != nil {
		return c.rvOf(err)
	}
	*phKey = C.CK_OBJECT_HANDLE(key)
	return rvOK
}

//export goEncapsulateKey
func goEncapsulateKey(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, pub C.CK_OBJECT_HANDLE, pTmpl *C.CK_ATTRIBUTE,
	n C.CK_ULONG, pCt *C.CK_BYTE, pCtLen *C.CK_ULONG, phKey *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_EncapsulateKey")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(pub)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	out, ok := outOf(pCt, pCtLen)
	if !ok || phKey == nil {
		return rvArgumentsBad
	}
	ct, need, hKey, err := m.EncapsulateKey(uint64(h), mech, uint64(pub), tmpl, out)
	if rv := putOut(pCt, pCtLen, ct, need, c.note(err)); rv != rvOK || pCt == nil {
		return rv
	}
	*phKey = C.CK_OBJECT_HANDLE(hKey)
	return rvOK
}

//export goDecapsulateKey
func goDecapsulateKey(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, priv C.CK_OBJECT_HANDLE, pTmpl *C.CK_ATTRIBUTE,
	n C.CK_ULONG, pCt *C.CK_BYTE, ctLen C.CK_ULONG, phKey *C.CK_OBJECT_HANDLE) (rv C.CK_RV) {
	c := enter("C_DecapsulateKey")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(priv)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	tmpl, rv := templateIn(pTmpl, n)
	if rv != rvOK {
		return rv
	}
	ct, ok := bytesView(pCt, ctLen)
	if !ok || phKey == nil {
		return rvArgumentsBad
	}
	hKey, err := m.DecapsulateKey(uint64(h), mech, uint64(priv), tmpl, ct)
	if err != nil {
		return c.rvOf(err)
	}
	*phKey = C.CK_OBJECT_HANDLE(hKey)
	return rvOK
}

//export goVerifySignatureInit
func goVerifySignatureInit(h C.CK_SESSION_HANDLE, pMech *C.CK_MECHANISM, key C.CK_OBJECT_HANDLE, pSig *C.CK_BYTE, sigLen C.CK_ULONG) (rv C.CK_RV) {
	c := enter("C_VerifySignatureInit")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	c.object(key)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	mech, rv := mechanismIn(pMech)
	c.mech(mech)
	if rv != rvOK {
		return rv
	}
	sig, ok := bytesView(pSig, sigLen)
	if !ok {
		return rvArgumentsBad
	}
	return c.rvOf(m.VerifySignatureInit(uint64(h), mech, uint64(key), sig))
}

//export goVerifySignature
func goVerifySignature(h C.CK_SESSION_HANDLE, pData *C.CK_BYTE, dataLen C.CK_ULONG) C.CK_RV {
	return opUpdate("C_VerifySignature", h, pData, dataLen, (*token.Module).VerifySignature, C.CKF_VERIFY)
}

//export goVerifySignatureUpdate
func goVerifySignatureUpdate(h C.CK_SESSION_HANDLE, pPart *C.CK_BYTE, partLen C.CK_ULONG) C.CK_RV {
	return opUpdate("C_VerifySignatureUpdate", h, pPart, partLen, (*token.Module).VerifySignatureUpdate, C.CKF_VERIFY)
}

//export goVerifySignatureFinal
func goVerifySignatureFinal(h C.CK_SESSION_HANDLE) (rv C.CK_RV) {
	c := enter("C_VerifySignatureFinal")
	defer c.leave(&rv)
	m := c.m
	c.session(h)
	if rv := loaded(m); rv != rvOK {
		return rv
	}
	return c.rvOf(m.VerifySignatureFinal(uint64(h)))
}
