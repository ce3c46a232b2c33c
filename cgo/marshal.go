package main

/*
#include "pkcs11_3.h"
*/
import "C"

import (
	"unsafe"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// Sizes of the structures whose parameters we decode.
const (
	sizeofPSS  = C.CK_ULONG(unsafe.Sizeof(C.CK_RSA_PKCS_PSS_PARAMS{}))
	sizeofOAEP = C.CK_ULONG(unsafe.Sizeof(C.CK_RSA_PKCS_OAEP_PARAMS{}))
	sizeofECDH = C.CK_ULONG(unsafe.Sizeof(C.CK_ECDH1_DERIVE_PARAMS{}))
	// The AES and DES derivations by data encryption.
	sizeofDeriveString = C.CK_ULONG(unsafe.Sizeof(C.CK_KEY_DERIVATION_STRING_DATA{}))
	sizeofAESCBCData   = C.CK_ULONG(unsafe.Sizeof(C.CK_AES_CBC_ENCRYPT_DATA_PARAMS{}))
	sizeofDESCBCData   = C.CK_ULONG(unsafe.Sizeof(C.CK_DES_CBC_ENCRYPT_DATA_PARAMS{}))
	sizeofEdDSA        = C.CK_ULONG(unsafe.Sizeof(C.CK_EDDSA_PARAMS{}))
	sizeofHKDF         = C.CK_ULONG(unsafe.Sizeof(C.CK_HKDF_PARAMS{}))
	// The 3.2 signature contexts (ML-DSA, SLH-DSA).
	sizeofSignContext     = C.CK_ULONG(unsafe.Sizeof(C.CK_SIGN_ADDITIONAL_CONTEXT{}))
	sizeofHashSignContext = C.CK_ULONG(unsafe.Sizeof(C.CK_HASH_SIGN_ADDITIONAL_CONTEXT{}))
	sizeofAttr            = C.CK_ULONG(unsafe.Sizeof(C.CK_ATTRIBUTE{}))
	// CK_GCM_PARAMS: the 3.0 form (with ulIvBits) and the 2.40 form.
	sizeofGCM    = C.CK_ULONG(unsafe.Sizeof(C.CK_GCM_PARAMS{}))
	sizeofGCM240 = C.CK_ULONG(unsafe.Sizeof(C.MODEXP_GCM_PARAMS_2_40{}))
)

// unavailable is CK_UNAVAILABLE_INFORMATION as a CK_ULONG.
const unavailable = ^C.CK_ULONG(0)

// bytesView returns the n bytes at p as a slice of the caller's memory,
// without copying: valid only during the call. A NULL p with n == 0 is nil
// (an empty input); a NULL p with n > 0, or n > maxLen, is not ok.
func bytesView(p *C.CK_BYTE, n C.CK_ULONG) ([]byte, bool) {
	if n == 0 {
		if p == nil {
			return nil, true
		}
		return []byte{}, true
	}
	if p == nil || n > maxLen {
		return nil, false
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)), true
}

// viewOf is bytesView of an untyped pointer.
func viewOf(p unsafe.Pointer, n C.CK_ULONG) ([]byte, bool) { return bytesView((*C.CK_BYTE)(p), n) }

// bytesCopy is bytesView copied into Go memory, for values the token keeps.
func bytesCopy(p unsafe.Pointer, n C.CK_ULONG) ([]byte, bool) {
	v, ok := bytesView((*C.CK_BYTE)(p), n)
	if !ok || v == nil {
		return v, ok
	}
	return append([]byte(nil), v...), true
}

// clampCap converts a caller's buffer length to an int capacity.
func clampCap(n C.CK_ULONG) int {
	if n > maxLen {
		return maxLen
	}
	return int(n)
}

// outOf describes the caller's output buffer p of *pLen bytes. A NULL pLen
// is not ok.
func outOf(p *C.CK_BYTE, pLen *C.CK_ULONG) (token.Out, bool) {
	if pLen == nil {
		return token.Out{}, false
	}
	o := token.Out{Query: p == nil, Cap: clampCap(*pLen)}
	if p != nil && o.Cap > 0 {
		o.Buf = unsafe.Slice((*byte)(unsafe.Pointer(p)), o.Cap)
	}
	return o, true
}

// putOut completes a two-call output: on success it copies data to p (or
// reports need when p is NULL); on CKR_BUFFER_TOO_SMALL it reports need; any
// other error leaves *pLen alone.
func putOut(p *C.CK_BYTE, pLen *C.CK_ULONG, data []byte, need int, err error) C.CK_RV {
	if err != nil {
		rv := rvOf(err)
		if rv == rvBufferTooSmall && need >= 0 {
			*pLen = C.CK_ULONG(need)
		}
		return rv
	}
	if p == nil {
		if need < 0 {
			return rvGeneralError
		}
		*pLen = C.CK_ULONG(need)
		return rvOK
	}
	if len(data) > clampCap(*pLen) {
		// The token broke the Out contract; never write past the buffer.
		return rvGeneralError
	}
	if len(data) > 0 && unsafe.Pointer(&data[0]) != unsafe.Pointer(p) { // else written in place (Out.Buf)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(p)), len(data)), data)
	}
	*pLen = C.CK_ULONG(len(data))
	return rvOK
}

// templateIn copies a caller's template. All values share one allocation.
// The value of an attribute-array attribute (CKA_WRAP_TEMPLATE...) is the
// caller's CK_ATTRIBUTE array, copied into token.EncodeAttributes form; a
// length that is not a whole number of CK_ATTRIBUTEs, or an array inside
// an array, is CKR_ATTRIBUTE_VALUE_INVALID.
func templateIn(p *C.CK_ATTRIBUTE, n C.CK_ULONG) ([]token.Attribute, C.CK_RV) {
	return templateInDepth(p, n, 0)
}

func templateInDepth(p *C.CK_ATTRIBUTE, n C.CK_ULONG, depth int) ([]token.Attribute, C.CK_RV) {
	if n == 0 {
		return nil, rvOK
	}
	if p == nil || n > maxLen {
		return nil, rvArgumentsBad
	}
	in := unsafe.Slice(p, int(n))
	total := 0
	for i := range in {
		l := in[i].ulValueLen
		if l > maxLen || (l > 0 && in[i].pValue == nil) || total > maxLen-int(l) {
			return nil, rvArgumentsBad
		}
		total += int(l)
	}
	backing := make([]byte, 0, total)
	out := make([]token.Attribute, len(in))
	for i := range in {
		t := uint64(in[i]._type)
		if token.IsAttributeArray(t) && in[i].ulValueLen > 0 {
			if depth > 0 || in[i].ulValueLen%sizeofAttr != 0 {
				return nil, C.CKR_ATTRIBUTE_VALUE_INVALID
			}
			inner, rv := templateInDepth((*C.CK_ATTRIBUTE)(in[i].pValue), in[i].ulValueLen/sizeofAttr, depth+1)
			if rv != rvOK {
				return nil, rv
			}
			out[i] = token.Attribute{Type: t, Value: token.EncodeAttributes(inner)}
			continue
		}
		start := len(backing)
		if l := int(in[i].ulValueLen); l > 0 {
			backing = append(backing, unsafe.Slice((*byte)(in[i].pValue), l)...)
		}
		out[i] = token.Attribute{Type: t, Value: backing[start:len(backing):len(backing)]}
	}
	return out, rvOK
}

// isPSS reports whether mechanism t takes CK_RSA_PKCS_PSS_PARAMS.
func isPSS(t uint64) bool {
	switch t {
	case ck.CKM_RSA_PKCS_PSS, ck.CKM_SHA1_RSA_PKCS_PSS, ck.CKM_SHA224_RSA_PKCS_PSS,
		ck.CKM_SHA256_RSA_PKCS_PSS, ck.CKM_SHA384_RSA_PKCS_PSS, ck.CKM_SHA512_RSA_PKCS_PSS,
		ck.CKM_SHA3_256_RSA_PKCS_PSS, ck.CKM_SHA3_384_RSA_PKCS_PSS, ck.CKM_SHA3_512_RSA_PKCS_PSS,
		ck.CKM_SHA3_224_RSA_PKCS_PSS:
		return true
	}
	return false
}

// mechanismIn decodes a CK_MECHANISM. PSS, OAEP, ECDH1 derive, HKDF, the
// signature contexts (when given) and the derivations by data encryption's parameters must have exactly their
// structure's size (else CKR_MECHANISM_PARAM_INVALID); other
// mechanisms' parameters are copied as raw bytes. A NULL pParameter with a
// non-zero length is CKR_ARGUMENTS_BAD.
func mechanismIn(p *C.CK_MECHANISM) (*token.Mechanism, C.CK_RV) {
	if p == nil {
		return nil, rvArgumentsBad
	}
	m := &token.Mechanism{Type: uint64(p.mechanism)}
	param, plen := p.pParameter, p.ulParameterLen
	if param == nil && plen != 0 {
		return nil, rvArgumentsBad
	}
	switch {
	case isPSS(m.Type):
		if param == nil || plen != sizeofPSS {
			return nil, rvMechParamInvalid
		}
		pss := (*C.CK_RSA_PKCS_PSS_PARAMS)(param)
		m.PSS = &token.PSSParams{Hash: uint64(pss.hashAlg), MGF: uint64(pss.mgf), SaltLen: uint64(pss.sLen)}
	case m.Type == ck.CKM_RSA_PKCS_OAEP:
		if param == nil || plen != sizeofOAEP {
			return nil, rvMechParamInvalid
		}
		oaep := (*C.CK_RSA_PKCS_OAEP_PARAMS)(param)
		src, ok := bytesCopy(oaep.pSourceData, oaep.ulSourceDataLen)
		if !ok {
			return nil, rvMechParamInvalid
		}
		m.OAEP = &token.OAEPParams{Hash: uint64(oaep.hashAlg), MGF: uint64(oaep.mgf),
			Source: uint64(oaep.source), SourceData: src}
	case m.Type == ck.CKM_ECDH1_DERIVE || m.Type == ck.CKM_ECDH1_COFACTOR_DERIVE:
		if param == nil || plen != sizeofECDH {
			return nil, rvMechParamInvalid
		}
		p := (*C.CK_ECDH1_DERIVE_PARAMS)(param)
		shared, ok1 := bytesCopy(unsafe.Pointer(p.pSharedData), p.ulSharedDataLen)
		public, ok2 := bytesCopy(unsafe.Pointer(p.pPublicData), p.ulPublicDataLen)
		if !ok1 || !ok2 {
			return nil, rvMechParamInvalid
		}
		m.ECDH = &token.ECDH1DeriveParams{KDF: uint64(p.kdf), SharedData: shared, PublicData: public}
	case m.Type == ck.CKM_EDDSA && param != nil:
		if plen != sizeofEdDSA {
			return nil, rvMechParamInvalid
		}
		p := (*C.CK_EDDSA_PARAMS)(param)
		context, ok := bytesCopy(unsafe.Pointer(p.pContextData), p.ulContextDataLen)
		if !ok || p.phFlag > 1 {
			return nil, rvMechParamInvalid
		}
		m.EdDSA = &token.EdDSAParams{PH: p.phFlag == 1, Context: context}
	case signContextKind(m.Type) != noSignContext:
		sc, rv := signContextIn(signContextKind(m.Type), param, plen)
		if rv != rvOK {
			return nil, rv
		}
		m.SignContext = sc
	case m.Type == ck.CKM_AES_ECB_ENCRYPT_DATA || m.Type == ck.CKM_DES_ECB_ENCRYPT_DATA || m.Type == ck.CKM_DES3_ECB_ENCRYPT_DATA:
		if param == nil || plen != sizeofDeriveString {
			return nil, rvMechParamInvalid
		}
		p := (*C.CK_KEY_DERIVATION_STRING_DATA)(param)
		data, ok := bytesCopy(unsafe.Pointer(p.pData), p.ulLen)
		if !ok {
			return nil, rvMechParamInvalid
		}
		m.EncryptData = &token.EncryptDataParams{Data: data}
	case m.Type == ck.CKM_AES_CBC_ENCRYPT_DATA:
		if param == nil || plen != sizeofAESCBCData {
			return nil, rvMechParamInvalid
		}
		p := (*C.CK_AES_CBC_ENCRYPT_DATA_PARAMS)(param)
		data, ok := bytesCopy(unsafe.Pointer(p.pData), p.length)
		if !ok {
			return nil, rvMechParamInvalid
		}
		iv := C.GoBytes(unsafe.Pointer(&p.iv[0]), C.int(len(p.iv)))
		m.EncryptData = &token.EncryptDataParams{IV: iv, Data: data}
	case m.Type == ck.CKM_DES_CBC_ENCRYPT_DATA || m.Type == ck.CKM_DES3_CBC_ENCRYPT_DATA:
		if param == nil || plen != sizeofDESCBCData {
			return nil, rvMechParamInvalid
		}
		p := (*C.CK_DES_CBC_ENCRYPT_DATA_PARAMS)(param)
		data, ok := bytesCopy(unsafe.Pointer(p.pData), p.length)
		if !ok {
			return nil, rvMechParamInvalid
		}
		iv := C.GoBytes(unsafe.Pointer(&p.iv[0]), C.int(len(p.iv)))
		m.EncryptData = &token.EncryptDataParams{IV: iv, Data: data}
	case m.Type == ck.CKM_HKDF_DERIVE || m.Type == ck.CKM_HKDF_DATA:
		h, rv := hkdfParamsIn(param, plen)
		if rv != rvOK {
			return nil, rv
		}
		m.HKDF = h
	case m.Type == ck.CKM_AES_GCM:
		g, rv := gcmParamsIn(param, plen)
		if rv != rvOK {
			return nil, rv
		}
		m.GCM = g
	default:
		// Raw bytes, CKM_DH_PKCS_DERIVE's peer public value among them.
		raw, ok := bytesCopy(param, plen)
		if !ok {
			return nil, rvArgumentsBad
		}
		m.Param = raw
	}
	return m, rvOK
}

// hkdfParamsIn decodes CK_HKDF_PARAMS, copying the salt and the info. A
// parameter of another size, a CK_BBOOL other than CK_TRUE or CK_FALSE, or
// a NULL pSalt or pInfo with a non-zero length is
// CKR_MECHANISM_PARAM_INVALID; the values themselves are the token's to
// check.
func hkdfParamsIn(param unsafe.Pointer, plen C.CK_ULONG) (*token.HKDFParams, C.CK_RV) {
	if param == nil || plen != sizeofHKDF {
		return nil, rvMechParamInvalid
	}
	p := (*C.CK_HKDF_PARAMS)(param)
	salt, ok1 := bytesCopy(unsafe.Pointer(p.pSalt), p.ulSaltLen)
	info, ok2 := bytesCopy(unsafe.Pointer(p.pInfo), p.ulInfoLen)
	if !ok1 || !ok2 || p.bExtract > 1 || p.bExpand > 1 {
		return nil, rvMechParamInvalid
	}
	return &token.HKDFParams{Extract: p.bExtract == 1, Expand: p.bExpand == 1, PRF: uint64(p.prfHashMechanism),
		SaltType: uint64(p.ulSaltType), Salt: salt, SaltKey: uint64(p.hSaltKey), Info: info}, rvOK
}

// The parameter a mechanism takes for its signature context.
const (
	noSignContext   = iota
	signContext     // CK_SIGN_ADDITIONAL_CONTEXT, optional
	hashSignContext // CK_HASH_SIGN_ADDITIONAL_CONTEXT, required
)

// signContextKind names the parameter of mechanism t: pure ML-DSA and
// SLH-DSA and the pre-hash forms with a fixed hash take
// CK_SIGN_ADDITIONAL_CONTEXT, CKM_HASH_ML_DSA and CKM_HASH_SLH_DSA
// CK_HASH_SIGN_ADDITIONAL_CONTEXT.
func signContextKind(t uint64) int {
	switch {
	case t == ck.CKM_HASH_ML_DSA || t == ck.CKM_HASH_SLH_DSA:
		return hashSignContext
	case t == ck.CKM_ML_DSA || t == ck.CKM_SLH_DSA,
		t >= ck.CKM_HASH_ML_DSA_SHA224 && t <= ck.CKM_HASH_ML_DSA_SHAKE256,
		t >= ck.CKM_HASH_SLH_DSA_SHA224 && t <= ck.CKM_HASH_SLH_DSA_SHAKE256:
		return signContext
	}
	return noSignContext
}

// signContextIn decodes the parameter of a signature with context: none
// (nil, for the optional CK_SIGN_ADDITIONAL_CONTEXT), or the structure of
// exactly its size with a pContext that is not NULL when ulContextLen is
// not 0 (else CKR_MECHANISM_PARAM_INVALID). The context is copied; its
// length and the hedge variant are the token's to judge.
func signContextIn(kind int, param unsafe.Pointer, plen C.CK_ULONG) (*token.SignContextParams, C.CK_RV) {
	var pContext C.CK_BYTE_PTR
	var ctxLen C.CK_ULONG
	sc := &token.SignContextParams{}
	switch {
	case param == nil && kind == signContext:
		return nil, rvOK
	case param != nil && kind == signContext && plen == sizeofSignContext:
		p := (*C.CK_SIGN_ADDITIONAL_CONTEXT)(param)
		sc.Hedge, pContext, ctxLen = uint64(p.hedgeVariant), p.pContext, p.ulContextLen
	case param != nil && kind == hashSignContext && plen == sizeofHashSignContext:
		p := (*C.CK_HASH_SIGN_ADDITIONAL_CONTEXT)(param)
		sc.Hedge, pContext, ctxLen = uint64(p.hedgeVariant), p.pContext, p.ulContextLen
		sc.Hash, sc.HasHash = uint64(p.hash), true
	default:
		return nil, rvMechParamInvalid
	}
	context, ok := bytesCopy(unsafe.Pointer(pContext), ctxLen)
	if !ok {
		return nil, rvMechParamInvalid
	}
	sc.Context = context
	return sc, rvOK
}

// gcmParamsIn decodes CK_GCM_PARAMS in either form, told apart by its
// size (3.0's has ulIvBits; for 2.40's IVBits is set to 8·ulIvLen). Any
// other size, or a NULL pIv or pAAD with a non-zero length, is
// CKR_MECHANISM_PARAM_INVALID.
func gcmParamsIn(param unsafe.Pointer, plen C.CK_ULONG) (*token.GCMParams, C.CK_RV) {
	g := new(token.GCMParams)
	if rv := gcmParamsDecode(g, param, plen, bytesCopy); rv != rvOK {
		return nil, rv
	}
	return g, rvOK
}

// gcmParamsDecode is gcmParamsIn into g, the IV and the AAD taken by
// bytes (bytesCopy, or viewOf for the length of the call).
func gcmParamsDecode(g *token.GCMParams, param unsafe.Pointer, plen C.CK_ULONG, bytes func(unsafe.Pointer, C.CK_ULONG) ([]byte, bool)) C.CK_RV {
	var pIv, pAAD C.CK_BYTE_PTR
	var ivLen, ivBits, aadLen, tagBits C.CK_ULONG
	switch {
	case param != nil && plen == sizeofGCM:
		g := (*C.CK_GCM_PARAMS)(param)
		pIv, ivLen, ivBits, pAAD, aadLen, tagBits = g.pIv, g.ulIvLen, g.ulIvBits, g.pAAD, g.ulAADLen, g.ulTagBits
	case param != nil && plen == sizeofGCM240:
		g := (*C.MODEXP_GCM_PARAMS_2_40)(param)
		pIv, ivLen, pAAD, aadLen, tagBits = g.pIv, g.ulIvLen, g.pAAD, g.ulAADLen, g.ulTagBits
		ivBits = 8 * ivLen
	default:
		return rvMechParamInvalid
	}
	iv, ok1 := bytes(unsafe.Pointer(pIv), ivLen)
	aad, ok2 := bytes(unsafe.Pointer(pAAD), aadLen)
	if !ok1 || !ok2 {
		return rvMechParamInvalid
	}
	*g = token.GCMParams{IV: iv, AAD: aad, IVBits: uint64(ivBits), TagBits: uint64(tagBits)}
	return rvOK
}

// pad writes s into dst blank-padded, truncated to len(dst) on a UTF-8
// character boundary; never NUL-terminated.
func pad(dst []C.uchar, s string) {
	n := len(s)
	if n > len(dst) {
		n = len(dst)
		for n > 0 && s[n]&0xC0 == 0x80 { // s[n] continues a character
			n--
		}
	}
	for i := range dst {
		if i < n {
			dst[i] = C.uchar(s[i])
		} else {
			dst[i] = ' '
		}
	}
}

// version converts a token.Version.
func version(v token.Version) C.CK_VERSION {
	return C.CK_VERSION{major: C.uchar(v.Major), minor: C.uchar(v.Minor)}
}

// labelOf decodes a 32-byte blank-padded label.
func labelOf(p *C.CK_UTF8CHAR) string {
	b := unsafe.Slice((*byte)(unsafe.Pointer(p)), 32)
	n := len(b)
	for n > 0 && (b[n-1] == ' ' || b[n-1] == 0) {
		n--
	}
	return string(b[:n])
}

// ulongsOut implements the two-call convention for CK_ULONG lists (slot and
// mechanism lists): NULL list → count; short list → CKR_BUFFER_TOO_SMALL with
// the count.
func ulongsOut[T ~uint64](list *T, pCount *C.CK_ULONG, vals []uint64) C.CK_RV {
	n := C.CK_ULONG(len(vals))
	if list == nil {
		*pCount = n
		return rvOK
	}
	if *pCount < n {
		*pCount = n
		return rvBufferTooSmall
	}
	dst := unsafe.Slice(list, len(vals))
	for i, v := range vals {
		dst[i] = T(v)
	}
	*pCount = n
	return rvOK
}
