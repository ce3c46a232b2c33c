package token

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// The SHA-3 and SHA-512/t HMAC answers, Wycheproof's (testvectors_v1,
// hmac_sha3_*_test.json and hmac_sha512_{224,256}_test.json, Apache-2.0:
// testdata/wycheproof/LICENSE), by tcId: the empty message, a short one and
// a 24- or 32-byte one (valid), and for SHA-512/t the "TruncatedHmac" case:
// SHA-512's HMAC cut to the length, which must not verify.
var moreHMACVectors = []struct {
	mech          uint64
	tcID          int
	key, msg, tag string
	valid         bool
}{
	{ck.CKM_SHA3_224_HMAC, 1, "7eef1e40253350eb9307cc6bd8ab8df434bc2faf7095e45b50ffdd64", "", "f2aa17e549253ac51a9332c5c2390fc0c5003c40bed255df439c3d05", true},
	{ck.CKM_SHA3_224_HMAC, 2, "8648ee936c6ebc5ae4bb48c1139a54e3ac5d897beec492dc4d740752", "2e", "e4bbe7b3a8f173736a1b1e58283040bd20090a772ba1d1fa1f0f02ce", true},
	{ck.CKM_SHA3_224_HMAC, 20, "3b1b16e6dd2e69559dbeb964e10fc94c068471b2374d3a2d24d2d466", "8ecd55b56c668dcb8e8b1efd699c0e4a464204d29af140f87d3f5075495378a3", "9d849dee727eed22ae379f5bbd3f77a0f35d88f8f39a753013bdd4d0", true},
	{ck.CKM_SHA3_256_HMAC, 1, "1e225cafb90339bba1b24076d4206c3e79c355805d851682bc818baa4f5a7779", "", "a3c58470afa8835d6e2357fb7b1cd07f8c4bc4c7874ca59d83163f046a9e227e", true},
	{ck.CKM_SHA3_256_HMAC, 2, "8159fd15133cd964c9a6964c94f0ea269a806fd9f43f0da58b6cd1b33d189b2a", "77", "f709a35d41e82e36955512bf5fc1af0c1a9c580ff8fc3199bcb7454027029282", true},
	{ck.CKM_SHA3_256_HMAC, 20, "186e248ad824e1eb93329a7fdcd565b6cb4eaf3f85b90b910777128d8c538d27", "92ef9ff52f46eccc7e38b9ee19fd2de3b37726c8e6ce9e1b96db5dda4c317902", "d565faa179be14d8c6679e00235fda9db5b4bc13c00b876be62cf61c30dd8392", true},
	{ck.CKM_SHA3_384_HMAC, 1, "ee8df067857df2300fa71a10c30997178bb3796127b5ece5f2ccc170932be0e78ea9b0a5936c09157e671ce7ec9fc510", "", "7c87e3bf2a63428c2005a82c1ef0e0152537ce7a6f49344f3a85274724e075f9c833b6b2e6dd257e60222e7126312426", true},
	{ck.CKM_SHA3_384_HMAC, 2, "976696c0dc97182ca771975c3928ff9168ef89cd740cd2292858fd916068a702bc1df7c6cd8ee1f0d25e61d4c514cc5d", "2b", "b9c77f78d4e7928219105b1fa64d24a98a81816ca0c714d5424d0882ce7bb7be04b5bb4ac2a0092b4f5ce06f04c8654a", true},
	{ck.CKM_SHA3_384_HMAC, 20, "6bd2aee9dd98d6b6609fce82181b10c20bba861da68a1590586fab08c5e9e90ff584047db4760828643fea38087160e4", "33236a9de603c1e4f5e11164224740627d10f6008eb73ec2642321bf0b82d579", "d45174df3241ddb1a0890178fa4aa54523699b23be61a9616633631a4ef5e39bd2d88f42bd5016aa8bc1148056d8527c", true},
	{ck.CKM_SHA3_512_HMAC, 1, "5365244bb43f23f18dfc86c09d62db4741138bec1fbddc282d295e0a098eb5c3e37bd6f4cc16d5ce7d77b1d474a1eb4db313cc0c24e48992ac125196549df9a8", "", "8327dc85e33898f05724b34a89dfc74f2581b228203ff148f7c86aa328e0e5330c00015d1d983ab005fbc18d3695f2dd5f304bab7a4b7c34f6d010ca0af1acf5", true},
	{ck.CKM_SHA3_512_HMAC, 2, "00698977f7102c67b594166919aa99dc3e58c7b6697a6422e238d04d2f57b2c74e4e84f5c4c6b792952df72f1c09244802f0bcf8752efb90e836110703bfa21c", "01", "84185a2890b3f4c5ef8723c292db676c69104e7ff7def5ecf26928a41626d2b16b063d8a9df03917498467f5abd7af3c6c732957f67cb800a517b26963142a1d", true},
	{ck.CKM_SHA3_512_HMAC, 20, "b90226798dff2ffb91d1ee4103f26397d0bf84c13c1ec717392c5fe1d4d0f4dc790236d759fa1be852e305da585a3dbde0d3912bea60d6b140c25645eb00943f", "aa29c372f136993c65ace5e1d62078806eb787913bb35af33371056359d354b2", "8d6ef6ea9bf61d3e39535b1f3759c01da28d9ff7370491de117a520188e15a152050371d533ff4b927fd91bd33a6c7404cce34ce4701fc7a8f03ebf70ad188ba", true},
	{ck.CKM_SHA512_224_HMAC, 1, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "313233343030", "61d2fbea647212738aeb15d76ef078c3b66b0daa3bfdd55ce600145d", false},
	{ck.CKM_SHA512_224_HMAC, 2, "7eef1e40253350eb9307cc6bd8ab8df434bc2faf7095e45b50ffdd64", "", "de1ea6d2880770285591af1f04be43e44fd55ae0c5130b5a18af7d9b", true},
	{ck.CKM_SHA512_224_HMAC, 3, "8648ee936c6ebc5ae4bb48c1139a54e3ac5d897beec492dc4d740752", "2e", "5979cc5dcdaf49daaadfc3388de3f5a04d183ebc896fd4f9dbdcc513", true},
	{ck.CKM_SHA512_224_HMAC, 20, "9f9fb280adf12e739548b1d676cb794d685b9104e63b619b055cb60f", "91513dd6de40a1c23f8d1eb0ab8f5ea6f6835506ec750894", "ef1c83ce9ebbc0b210bf488534d56149d1e67f6f13e0b3b5c0eff85c", true},
	{ck.CKM_SHA512_256_HMAC, 1, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "313233343030", "61d2fbea647212738aeb15d76ef078c3b66b0daa3bfdd55ce600145d7c910753", false},
	{ck.CKM_SHA512_256_HMAC, 2, "1e225cafb90339bba1b24076d4206c3e79c355805d851682bc818baa4f5a7779", "", "baae6ac18c37dbf3a71b22741ced96e1e2dbe6e7a737142e14bd93fda144dad0", true},
	{ck.CKM_SHA512_256_HMAC, 3, "8159fd15133cd964c9a6964c94f0ea269a806fd9f43f0da58b6cd1b33d189b2a", "77", "aee7a277e0f36a042368ae52b1337ba13f1c00fdb2dfb1d5f0c304e485c3a7dc", true},
	{ck.CKM_SHA512_256_HMAC, 21, "186e248ad824e1eb93329a7fdcd565b6cb4eaf3f85b90b910777128d8c538d27", "92ef9ff52f46eccc7e38b9ee19fd2de3b37726c8e6ce9e1b96db5dda4c317902", "3fc7a4a6677c1b0b5b90555847d16819d285a5cff63ea21c98253e58031d4ff5", true},
}

// TestMoreHMACKnownAnswers runs moreHMACVectors through C_Sign (one part
// and in parts) and C_Verify, with a generic secret and with the
// mechanism's own HMAC key type; each valid tag is also checked with
// crypto/hmac, and its leading 12 bytes through the _GENERAL form.
func TestMoreHMACKnownAnswers(t *testing.T) {
	m, _, sh := readyToken(t)
	byMech := map[uint64]int{}
	for i, hm := range mech.HMACMechs {
		byMech[hm.MAC] = i
	}
	seen := map[uint64]bool{}
	for _, v := range moreHMACVectors {
		hm := mech.HMACMechs[byMech[v.mech]]
		if hm.MAC != v.mech {
			t.Fatalf("%s: not an HMAC mechanism of the token", ck.Name("CKM_", v.mech))
		}
		seen[v.mech] = true
		key, msg, tag := mustHex(v.key), mustHex(v.msg), mustHex(v.tag)
		name := fmt.Sprintf("%s tcId %d", ck.Name("CKM_", v.mech), v.tcID)
		ref := hmac.New(hm.Hash.New, key)
		ref.Write(msg)
		if hmac.Equal(ref.Sum(nil), tag) != v.valid {
			t.Fatalf("%s: crypto/hmac disagrees with Wycheproof", name)
		}
		for _, kt := range []uint64{ck.CKK_GENERIC_SECRET, hm.KeyType} {
			k := mustSecret(t, m, sh, kt, key)
			mc := &Mechanism{Type: v.mech}
			if !v.valid {
				wantRV(t, verifyOnce(m, sh, mc, k, msg, tag), ck.CKR_SIGNATURE_INVALID)
				continue
			}
			got, err := signOnce(m, sh, mc, k, msg)
			if err != nil || !bytes.Equal(got, tag) {
				t.Fatalf("%s, %s key: %x, %v; want %x", name, ck.Name("CKK_", kt), got, err, tag)
			}
			got, err = signParts(m, sh, mc, k, msg, []int{1, 7})
			if err != nil || !bytes.Equal(got, tag) {
				t.Fatalf("%s in parts: %x, %v", name, got, err)
			}
			must(t, verifyParts(m, sh, mc, k, msg, tag))
			general := generalMech(hm.General, 12)
			got, err = signOnce(m, sh, general, k, msg)
			if err != nil || !bytes.Equal(got, tag[:12]) {
				t.Fatalf("%s _GENERAL(12): %x, %v", name, got, err)
			}
			must(t, verifyOnce(m, sh, general, k, msg, tag[:12]))
			wantRV(t, m.SignInit(sh, generalMech(hm.General, hm.Hash.Size()+1), k), ck.CKR_MECHANISM_PARAM_INVALID)
		}
	}
	for _, mc := range []uint64{ck.CKM_SHA3_224_HMAC, ck.CKM_SHA3_256_HMAC, ck.CKM_SHA3_384_HMAC, ck.CKM_SHA3_512_HMAC,
		ck.CKM_SHA512_224_HMAC, ck.CKM_SHA512_256_HMAC} {
		if !seen[mc] {
			t.Errorf("%s: no vectors", ck.Name("CKM_", mc))
		}
	}
	// The key type of another hash is refused.
	k := make([]byte, 32)
	rand.Read(k)
	sha3Key := mustSecret(t, m, sh, ck.CKK_SHA3_256_HMAC, k)
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA256_HMAC}, sha3Key), ck.CKR_KEY_TYPE_INCONSISTENT)
	wantRV(t, m.SignInit(sh, &Mechanism{Type: ck.CKM_SHA512_256_HMAC}, sha3Key), ck.CKR_KEY_TYPE_INCONSISTENT)
}

// TestSHA512tDigests: CKM_SHA512_224 and CKM_SHA512_256 against FIPS
// 180-4's "abc" examples and crypto/sha512, in one part and in parts.
func TestSHA512tDigests(t *testing.T) {
	m, slot := newModule(t)
	sh := openRO(t, m, slot)
	long := bytes.Repeat([]byte("SHA-512/t through the token "), 50)
	for _, c := range []struct {
		mech uint64
		abc  string
		ref  func([]byte) []byte
	}{
		{ck.CKM_SHA512_224, "4634270f707b6a54daae7530460842e20e37ed265ceee9a43e8924aa",
			func(b []byte) []byte { d := sha512.Sum512_224(b); return d[:] }},
		{ck.CKM_SHA512_256, "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23",
			func(b []byte) []byte { d := sha512.Sum512_256(b); return d[:] }},
	} {
		for _, in := range [][]byte{[]byte("abc"), long} {
			got, parts := digestTwice(t, m, sh, c.mech, in, 13)
			if len(in) == 3 && hex.EncodeToString(got) != c.abc {
				t.Fatalf("%s(abc) = %x, want %s", ck.Name("CKM_", c.mech), got, c.abc)
			}
			if want := c.ref(in); !bytes.Equal(got, want) || !bytes.Equal(parts, want) {
				t.Fatalf("%s: %x / %x, crypto/sha512 %x", ck.Name("CKM_", c.mech), got, parts, want)
			}
		}
	}
}
