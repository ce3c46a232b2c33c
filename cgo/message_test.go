//go:build modexp_testhooks

package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/symtest"
)

// goOpen decrypts with Go's crypto/cipher what the token encrypted, with
// the IV and tag the token wrote back.
func goOpen(t *testing.T, key, iv, aad, ct, tag []byte) []byte {
	t.Helper()
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	g, err := cipher.NewGCMWithNonceSize(b, len(iv))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := g.Open(nil, iv, append(append([]byte(nil), ct...), tag...), aad)
	if err != nil {
		t.Fatalf("crypto/cipher refuses the token's ciphertext (IV %x, tag %x): %v", iv, tag, err)
	}
	return pt
}

func wantRVC(t *testing.T, what string, rv uint64, want ck.Error) {
	t.Helper()
	if rv != uint64(want) {
		t.Fatalf("%s = %v, want %v", what, ck.Error(rv), want)
	}
}

// TestMessageGCMC: C_EncryptMessage with a token-generated IV through the
// C ABI: the two-call convention (a length report generates nothing and
// leaves pIv alone), the IV written back with its fixed prefix, the tag
// into pTag, both checked by crypto/cipher; several messages per Init;
// C_DecryptMessage of the result, a bad tag refused; Begin/Next both ways.
func TestMessageGCMC(t *testing.T) {
	h := readySession(t)
	val := bytes.Repeat([]byte{0x61}, 16)
	key := secretC(t, h, ck.CKK_AES, val)
	wantRVC(t, "C_MessageEncryptInit", tsMsgInit(h, tsKEncrypt, ck.CKM_AES_GCM, nil, key), ck.CKR_OK)
	wantRVC(t, "C_MessageDecryptInit", tsMsgInit(h, tsKDecrypt, ck.CKM_AES_GCM, nil, key), ck.CKR_OK)
	base := []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0, 0, 0, 0, 0}
	aad, msg := []byte("header"), []byte("message-based encryption through the C ABI")
	seen := map[string]bool{}
	for i := range 3 {
		p := &tsGCMMsg{IV: base, FixedBits: 32, Generator: ck.CKG_GENERATE_COUNTER, TagBits: 128}
		r := tsCryptMessage(h, true, p, aad, msg, true, 0)
		if r.RV != 0 || r.OutLen != uint64(len(msg)) || !bytes.Equal(r.IV, base) {
			t.Fatalf("length report = %v, %d, IV %x; want CKR_OK, %d, pIv untouched", ck.Error(r.RV), r.OutLen, r.IV, len(msg))
		}
		r = tsCryptMessage(h, true, p, aad, msg, false, 3)
		if r.RV != uint64(ck.CKR_BUFFER_TOO_SMALL) || r.OutLen != uint64(len(msg)) || !bytes.Equal(r.IV, base) {
			t.Fatalf("short buffer = %v, %d, IV %x", ck.Error(r.RV), r.OutLen, r.IV)
		}
		r = tsCryptMessage(h, true, p, aad, msg, false, len(msg))
		wantRVC(t, "C_EncryptMessage", r.RV, ck.CKR_OK)
		if !bytes.Equal(r.IV[:4], base[:4]) || bytes.Equal(r.IV, base) && i > 0 || seen[string(r.IV)] {
			t.Fatalf("message %d: IV %x (prefix %x, seen before %v)", i, r.IV, base[:4], seen[string(r.IV)])
		}
		seen[string(r.IV)] = true
		if pt := goOpen(t, val, r.IV, aad, r.Out, r.Tag); !bytes.Equal(pt, msg) {
			t.Fatalf("crypto/cipher decrypted %q", pt)
		}
		d := tsCryptMessage(h, false, &tsGCMMsg{IV: r.IV, Tag: r.Tag, TagBits: 128}, aad, r.Out, false, len(msg))
		if d.RV != 0 || !bytes.Equal(d.Out, msg) {
			t.Fatalf("C_DecryptMessage = %v, %q", ck.Error(d.RV), d.Out)
		}
		bad := append([]byte(nil), r.Tag...)
		bad[15] ^= 0x80
		d = tsCryptMessage(h, false, &tsGCMMsg{IV: r.IV, Tag: bad, TagBits: 128}, aad, r.Out, false, len(msg))
		wantRVC(t, "C_DecryptMessage(bad tag)", d.RV, ck.CKR_ENCRYPTED_DATA_INVALID)
	}

	// Begin/Next: the IV at Begin, the ciphertext and the tag with the
	// part flagged CKF_END_OF_MESSAGE.
	p := &tsGCMMsg{IV: make([]byte, 12), Generator: ck.CKG_GENERATE, TagBits: 96}
	b := tsCryptMessageBegin(h, true, p, aad)
	wantRVC(t, "C_EncryptMessageBegin", b.RV, ck.CKR_OK)
	iv := b.IV
	var ct []byte
	for i, part := range [][]byte{msg[:10], msg[10:20], msg[20:]} {
		var flags uint64
		if i == 2 {
			flags = ck.CKF_END_OF_MESSAGE
		}
		q := tsCryptMessageNext(h, true, &tsGCMMsg{IV: iv, TagBits: 96}, part, true, 0, flags)
		wantRVC(t, "C_EncryptMessageNext(length)", q.RV, ck.CKR_OK)
		r := tsCryptMessageNext(h, true, &tsGCMMsg{IV: iv, TagBits: 96}, part, false, int(q.OutLen), flags)
		wantRVC(t, "C_EncryptMessageNext", r.RV, ck.CKR_OK)
		ct = append(ct, r.Out...)
		if i == 2 {
			b.Tag = r.Tag
		}
	}
	g, _ := cipher.NewGCM(mustAES(t, val))
	full := g.Seal(nil, iv, msg, aad)
	if !bytes.Equal(ct, full[:len(msg)]) || !bytes.Equal(b.Tag, full[len(msg):len(msg)+12]) {
		t.Fatalf("multi-part %x/%x, crypto/cipher %x", ct, b.Tag, full)
	}
	dp := &tsGCMMsg{IV: iv, Tag: b.Tag, TagBits: 96}
	wantRVC(t, "C_DecryptMessageBegin", tsCryptMessageBegin(h, false, dp, aad).RV, ck.CKR_OK)
	d := tsCryptMessageNext(h, false, dp, ct[:5], false, 64, 0)
	if d.RV != 0 || d.OutLen != 0 {
		t.Fatalf("C_DecryptMessageNext(first part) = %v, %d bytes", ck.Error(d.RV), d.OutLen)
	}
	d = tsCryptMessageNext(h, false, dp, ct[5:], false, 64, ck.CKF_END_OF_MESSAGE)
	if d.RV != 0 || !bytes.Equal(d.Out, msg) {
		t.Fatalf("C_DecryptMessageNext(last) = %v, %q", ck.Error(d.RV), d.Out)
	}
	wantRVC(t, "C_MessageEncryptFinal", tsMsgFinal(h, tsKEncrypt), ck.CKR_OK)
	wantRVC(t, "C_MessageDecryptFinal", tsMsgFinal(h, tsKDecrypt), ck.CKR_OK)
	wantRVC(t, "C_MessageEncryptFinal again", tsMsgFinal(h, tsKEncrypt), ck.CKR_OPERATION_NOT_INITIALIZED)
}

func mustAES(t *testing.T, k []byte) cipher.Block {
	t.Helper()
	b, err := aes.NewCipher(k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMessageGCMParamsC: malformed CK_GCM_MESSAGE_PARAMS and arguments are
// the standard's codes, and leave the caller's pIv as it was.
func TestMessageGCMParamsC(t *testing.T) {
	h := readySession(t)
	key := secretC(t, h, ck.CKK_AES, make([]byte, 32))
	wantRVC(t, "C_MessageEncryptInit with a parameter", tsMsgInit(h, tsKEncrypt, ck.CKM_AES_GCM, make([]byte, 8), key), ck.CKR_MECHANISM_PARAM_INVALID)
	wantRVC(t, "C_EncryptMessage before Init", tsCryptMessage(h, true, &tsGCMMsg{IV: make([]byte, 12), TagBits: 128}, nil, []byte("x"), false, 1).RV, ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRVC(t, "C_MessageEncryptInit", tsMsgInit(h, tsKEncrypt, ck.CKM_AES_GCM, nil, key), ck.CKR_OK)
	wantRVC(t, "C_MessageEncryptInit again", tsMsgInit(h, tsKEncrypt, ck.CKM_AES_GCM, nil, key), ck.CKR_OPERATION_ACTIVE)
	iv := []byte("0123456789ab")
	ok := func() *tsGCMMsg { return &tsGCMMsg{IV: iv, Generator: ck.CKG_GENERATE_RANDOM, TagBits: 128} }
	for _, c := range []struct {
		name string
		p    *tsGCMMsg
		rv   ck.Error
	}{
		{"NULL parameter", &tsGCMMsg{NullParam: true}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"ulParameterLen one short", func() *tsGCMMsg { p := ok(); p.LenDelta = -1; return p }(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"ulParameterLen one long", func() *tsGCMMsg { p := ok(); p.LenDelta = 1; return p }(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"NULL pIv", func() *tsGCMMsg { p := ok(); p.NullIV = true; return p }(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"NULL pTag", func() *tsGCMMsg { p := ok(); p.NullTag = true; return p }(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"ulTagBits 136", func() *tsGCMMsg { p := ok(); p.TagBits = 136; return p }(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"ulTagBits 0", func() *tsGCMMsg { p := ok(); p.TagBits = 0; return p }(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"ulIvLen 4097", &tsGCMMsg{IV: make([]byte, 4097), Generator: ck.CKG_GENERATE, TagBits: 128}, ck.CKR_MECHANISM_PARAM_INVALID},
		{"generator 77", func() *tsGCMMsg { p := ok(); p.Generator = 77; return p }(), ck.CKR_MECHANISM_PARAM_INVALID},
		{"every bit fixed", func() *tsGCMMsg { p := ok(); p.FixedBits = 96; p.Generator = ck.CKG_GENERATE_COUNTER; return p }(), ck.CKR_MECHANISM_PARAM_INVALID},
	} {
		r := tsCryptMessage(h, true, c.p, nil, []byte("data"), false, 16)
		wantRVC(t, c.name, r.RV, c.rv)
		if r.IV != nil && !bytes.Equal(r.IV, c.p.IV) {
			t.Fatalf("%s: pIv changed to %x", c.name, r.IV)
		}
	}
	// CKR_ARGUMENTS_BAD: a NULL pParameter with a length, unknown Next
	// flags.
	wantRVC(t, "NULL pParameter with a length", tsCryptMessage(h, true, &tsGCMMsg{NullParam: true, LenDelta: 8}, nil, []byte("x"), false, 1).RV, ck.CKR_ARGUMENTS_BAD)
	wantRVC(t, "C_EncryptMessageBegin", tsCryptMessageBegin(h, true, ok(), nil).RV, ck.CKR_OK)
	wantRVC(t, "C_EncryptMessage during a message", tsCryptMessage(h, true, ok(), nil, []byte("x"), false, 1).RV, ck.CKR_OPERATION_ACTIVE)
	wantRVC(t, "C_EncryptMessageNext(flags 2)", tsCryptMessageNext(h, true, ok(), []byte("x"), false, 1, 2).RV, ck.CKR_ARGUMENTS_BAD)
	wantRVC(t, "C_MessageEncryptFinal", tsMsgFinal(h, tsKEncrypt), ck.CKR_OK)
	wantRVC(t, "C_EncryptMessageNext after Final", tsCryptMessageNext(h, true, ok(), []byte("x"), false, 1, 0).RV, ck.CKR_OPERATION_NOT_INITIALIZED)
}

// TestMessageGCMWycheproofC runs the Wycheproof AES-GCM vectors with a
// 128-bit tag through C_DecryptMessage.
func TestMessageGCMWycheproofC(t *testing.T) {
	vs, err := symtest.Load(symtest.GCM)
	if err != nil {
		t.Fatal(err)
	}
	h := readySession(t)
	keys := map[string]uint64{}
	ran := 0
	for _, v := range vs {
		if len(v.IV) == 0 || len(v.Tag) != 16 || (len(v.Key) != 16 && len(v.Key) != 24 && len(v.Key) != 32) {
			continue
		}
		key, ok := keys[string(v.Key)]
		if !ok {
			key = secretC(t, h, ck.CKK_AES, v.Key)
			keys[string(v.Key)] = key
		}
		wantRVC(t, "C_MessageDecryptInit", tsMsgInit(h, tsKDecrypt, ck.CKM_AES_GCM, nil, key), ck.CKR_OK)
		r := tsCryptMessage(h, false, &tsGCMMsg{IV: v.IV, Tag: v.Tag, TagBits: 128}, v.AAD, v.CT, false, len(v.CT))
		wantRVC(t, "C_MessageDecryptFinal", tsMsgFinal(h, tsKDecrypt), ck.CKR_OK)
		switch {
		case v.Valid && (r.RV != 0 || !bytes.Equal(r.Out, v.Msg)):
			t.Errorf("tcId %d (%s): %v, %x", v.TcID, v.Comment, ck.Error(r.RV), r.Out)
		case !v.Valid && !v.Acceptable && r.RV != uint64(ck.CKR_ENCRYPTED_DATA_INVALID):
			t.Errorf("tcId %d (%s): %v, want CKR_ENCRYPTED_DATA_INVALID", v.TcID, v.Comment, ck.Error(r.RV))
		}
		ran++
	}
	if ran < 100 {
		t.Fatalf("only %d vectors ran", ran)
	}
}

// TestMessageSignC: HMAC-SHA256 through C_SignMessage and
// C_SignMessageBegin/Next (a NULL pulSignatureLen continues), the
// two-call convention, against crypto/hmac; C_VerifyMessage and
// C_VerifyMessageNext accept it and refuse a changed one.
func TestMessageSignC(t *testing.T) {
	h := readySession(t)
	hk := []byte("an HMAC key of some length")
	key := secretC(t, h, ck.CKK_GENERIC_SECRET, hk)
	wantRVC(t, "C_MessageSignInit", tsMsgInit(h, tsKSign, ck.CKM_SHA256_HMAC, nil, key), ck.CKR_OK)
	wantRVC(t, "C_MessageVerifyInit", tsMsgInit(h, tsKVerify, ck.CKM_SHA256_HMAC, nil, key), ck.CKR_OK)
	for _, msg := range [][]byte{[]byte("one"), []byte("two messages, one Init"), {}} {
		mac := hmac.New(sha256.New, hk)
		mac.Write(msg)
		want := mac.Sum(nil)
		q := tsSignMessage(h, false, msg, true, 0)
		if q.RV != 0 || q.OutLen != 32 {
			t.Fatalf("C_SignMessage(NULL) = %v, %d", ck.Error(q.RV), q.OutLen)
		}
		r := tsSignMessage(h, false, msg, false, 32)
		if r.RV != 0 || !bytes.Equal(r.Out, want) {
			t.Fatalf("C_SignMessage = %v, %x; crypto/hmac says %x", ck.Error(r.RV), r.Out, want)
		}
		wantRVC(t, "C_VerifyMessage", tsVerifyMessage(h, false, msg, r.Out), ck.CKR_OK)
		bad := append([]byte(nil), r.Out...)
		bad[0] ^= 1
		wantRVC(t, "C_VerifyMessage(bad)", tsVerifyMessage(h, false, msg, bad), ck.CKR_SIGNATURE_INVALID)

		wantRVC(t, "C_SignMessageBegin", tsSignedBegin(h, true), ck.CKR_OK)
		half := len(msg) / 2
		wantRVC(t, "C_SignMessageNext(part)", tsSignMessageNext(h, msg[:half], false, false, 0).RV, ck.CKR_OK)
		s := tsSignMessageNext(h, msg[half:], true, false, 1)
		if s.RV != uint64(ck.CKR_BUFFER_TOO_SMALL) || s.OutLen != 32 {
			t.Fatalf("C_SignMessageNext(short) = %v, %d", ck.Error(s.RV), s.OutLen)
		}
		s = tsSignMessageNext(h, msg[half:], true, false, 32)
		if s.RV != 0 || !bytes.Equal(s.Out, want) {
			t.Fatalf("C_SignMessageNext(last) = %v, %x; want %x", ck.Error(s.RV), s.Out, want)
		}
		wantRVC(t, "C_VerifyMessageBegin", tsSignedBegin(h, false), ck.CKR_OK)
		wantRVC(t, "C_VerifyMessageNext(part)", tsVerifyMessage(h, true, msg[:half], nil), ck.CKR_OK)
		wantRVC(t, "C_VerifyMessageNext(last)", tsVerifyMessage(h, true, msg[half:], want), ck.CKR_OK)
	}
	wantRVC(t, "C_SignMessage with a parameter", tsSignMessage(h, true, []byte("x"), false, 32).RV, ck.CKR_MECHANISM_PARAM_INVALID)
	wantRVC(t, "C_SignMessageNext before Begin", tsSignMessageNext(h, []byte("x"), true, false, 32).RV, ck.CKR_OPERATION_NOT_INITIALIZED)
	wantRVC(t, "C_MessageSignFinal", tsMsgFinal(h, tsKSign), ck.CKR_OK)
	wantRVC(t, "C_MessageVerifyFinal", tsMsgFinal(h, tsKVerify), ck.CKR_OK)
	wantRVC(t, "C_SignMessage after Final", tsSignMessage(h, false, []byte("x"), false, 32).RV, ck.CKR_OPERATION_NOT_INITIALIZED)
}

// TestMessageFlagsC: C_GetMechanismInfo shows the message flags where the
// message functions work, and none where they do not.
func TestMessageFlagsC(t *testing.T) {
	slot := firstSlot(t)
	for _, c := range []struct {
		mech, want uint64
	}{
		{ck.CKM_AES_GCM, ck.CKF_MESSAGE_ENCRYPT | ck.CKF_MESSAGE_DECRYPT | ck.CKF_MULTI_MESSAGE},
		{ck.CKM_SHA256_HMAC, ck.CKF_MESSAGE_SIGN | ck.CKF_MESSAGE_VERIFY | ck.CKF_MULTI_MESSAGE},
		{ck.CKM_ECDSA_SHA256, ck.CKF_MESSAGE_SIGN | ck.CKF_MESSAGE_VERIFY | ck.CKF_MULTI_MESSAGE},
		{ck.CKM_AES_CBC_PAD, 0},
		{ck.CKM_SHA256, 0},
	} {
		rv, flags := tsMechFlags(slot, c.mech)
		const all = ck.CKF_MESSAGE_ENCRYPT | ck.CKF_MESSAGE_DECRYPT | ck.CKF_MESSAGE_SIGN | ck.CKF_MESSAGE_VERIFY | ck.CKF_MULTI_MESSAGE
		if rv != 0 || flags&all != c.want {
			t.Errorf("%s: %v, message flags %#x, want %#x", ck.Name("CKM_", c.mech), ck.Error(rv), flags&all, c.want)
		}
	}
}

// FuzzGCMMessageParamsC: any CK_GCM_MESSAGE_PARAMS through
// C_EncryptMessage is a CK_RV (never CKR_GENERAL_ERROR or a crash); an
// accepted one wrote an IV and tag crypto/cipher opens.
func FuzzGCMMessageParamsC(f *testing.F) {
	f.Add([]byte("twelve bytes"), uint64(32), uint64(ck.CKG_GENERATE_COUNTER), uint64(128), 0, false, false)
	f.Add([]byte{1, 2}, uint64(3), uint64(ck.CKG_GENERATE_COUNTER_XOR), uint64(32), 0, false, false)
	f.Add(make([]byte, 16), uint64(0), uint64(ck.CKG_GENERATE_RANDOM), uint64(104), 0, false, false)
	f.Add(make([]byte, 12), uint64(0), uint64(ck.CKG_NO_GENERATE), uint64(96), -3, true, false)
	f.Add([]byte{}, uint64(200), uint64(9), uint64(7), 5, false, true)
	rv, h := tsReadySession(firstSlotWith(f, ""))
	if rv != 0 {
		f.Fatalf("token setup = %v", ck.Error(rv))
	}
	f.Fuzz(func(t *testing.T, iv []byte, fixed, gen, tagBits uint64, delta int, nullIV, nullTag bool) {
		if len(iv) > 5000 || delta < -64 || delta > 64 {
			return
		}
		val := make([]byte, 16)
		key := secretC(t, h, ck.CKK_AES, val)
		if rv := tsMsgInit(h, tsKEncrypt, ck.CKM_AES_GCM, nil, key); rv != 0 {
			t.Fatalf("C_MessageEncryptInit = %v", ck.Error(rv))
		}
		msg := []byte("fuzzed parameter")
		p := &tsGCMMsg{IV: iv, FixedBits: fixed, Generator: gen, TagBits: tagBits, LenDelta: delta, NullIV: nullIV, NullTag: nullTag}
		r := tsCryptMessage(h, true, p, nil, msg, false, len(msg))
		switch r.RV {
		case 0:
			// A tag shorter than 16 bytes is the full tag's prefix.
			g, err := cipher.NewGCMWithNonceSize(mustAES(t, val), len(r.IV))
			if err != nil {
				t.Fatal(err)
			}
			full := g.Seal(nil, r.IV, msg, nil)
			if !bytes.Equal(r.Out, full[:len(msg)]) || !bytes.Equal(r.Tag, full[len(msg):len(msg)+len(r.Tag)]) {
				t.Fatalf("IV %x: token %x/%x, crypto/cipher %x", r.IV, r.Out, r.Tag, full)
			}
		case uint64(ck.CKR_GENERAL_ERROR):
			t.Fatalf("CKR_GENERAL_ERROR for %+v", p)
		}
		tsMsgFinal(h, tsKEncrypt)
	})
}
