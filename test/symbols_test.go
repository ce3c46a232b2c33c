package test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
)

// entryPoints are the PKCS#11 2.40, 3.0 and 3.2 functions: the library
// exports exactly these.
var entryPoints = strings.Fields(`
C_Initialize C_Finalize C_GetInfo C_GetFunctionList C_GetSlotList C_GetSlotInfo
C_GetTokenInfo C_GetMechanismList C_GetMechanismInfo C_InitToken C_InitPIN C_SetPIN
C_OpenSession C_CloseSession C_CloseAllSessions C_GetSessionInfo C_GetOperationState
C_SetOperationState C_Login C_Logout C_CreateObject C_CopyObject C_DestroyObject
C_GetObjectSize C_GetAttributeValue C_SetAttributeValue C_FindObjectsInit C_FindObjects
C_FindObjectsFinal C_EncryptInit C_Encrypt C_EncryptUpdate C_EncryptFinal C_DecryptInit
C_Decrypt C_DecryptUpdate C_DecryptFinal C_DigestInit C_Digest C_DigestUpdate C_DigestKey
C_DigestFinal C_SignInit C_Sign C_SignUpdate C_SignFinal C_SignRecoverInit C_SignRecover
C_VerifyInit C_Verify C_VerifyUpdate C_VerifyFinal C_VerifyRecoverInit C_VerifyRecover
C_DigestEncryptUpdate C_DecryptDigestUpdate C_SignEncryptUpdate C_DecryptVerifyUpdate
C_GenerateKey C_GenerateKeyPair C_WrapKey C_UnwrapKey C_DeriveKey C_SeedRandom
C_GenerateRandom C_GetFunctionStatus C_CancelFunction C_WaitForSlotEvent
C_GetInterfaceList C_GetInterface C_LoginUser C_SessionCancel
C_MessageEncryptInit C_EncryptMessage C_EncryptMessageBegin C_EncryptMessageNext
C_MessageEncryptFinal C_MessageDecryptInit C_DecryptMessage C_DecryptMessageBegin
C_DecryptMessageNext C_MessageDecryptFinal C_MessageSignInit C_SignMessage
C_SignMessageBegin C_SignMessageNext C_MessageSignFinal C_MessageVerifyInit
C_VerifyMessage C_VerifyMessageBegin C_VerifyMessageNext C_MessageVerifyFinal
C_EncapsulateKey C_DecapsulateKey C_VerifySignatureInit C_VerifySignature
C_VerifySignatureUpdate C_VerifySignatureFinal C_GetSessionValidationFlags
C_AsyncComplete C_AsyncGetID C_AsyncJoin C_WrapKeyAuthenticated C_UnwrapKeyAuthenticated
`)

// TestExportedSymbols checks the version script: the dynamic symbol table
// holds the PKCS#11 entry points and nothing else (no _cgo_*, no Go
// exports, no runtime symbols).
func TestExportedSymbols(t *testing.T) {
	e2e.NeedTool(t, "nm")
	out, err := exec.Command("nm", "-D", "--defined-only", libPath).Output()
	if err != nil {
		t.Fatalf("nm -D: %v", err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name := f[len(f)-1]
		if !strings.HasPrefix(name, "C_") {
			t.Errorf("exported symbol %q is not a C_* entry point", name)
		}
		if len(f) >= 2 && f[len(f)-2] != "T" {
			t.Errorf("exported symbol %q has type %s, want T (code)", name, f[len(f)-2])
		}
		got = append(got, name)
	}
	want := slices.Clone(entryPoints)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		for _, n := range want {
			if !slices.Contains(got, n) {
				t.Errorf("entry point %s not exported", n)
			}
		}
		for _, n := range got {
			if !slices.Contains(want, n) {
				t.Errorf("unexpected export %s", n)
			}
		}
	}
	if len(want) != 104 {
		t.Fatalf("the list of entry points has %d names, want 104 (68 of 2.40, 24 of 3.0, 12 of 3.2)", len(want))
	}
}

// testOnly are marks of the test support of cgo/ (testsupport.go, the
// test hooks of fork.c and main.go), compiled only with the build tag
// modexp_testhooks: the built library must hold none of them.
var testOnly = []string{"Cfunc_ts_", "modexp_fork_test_", "main.ts", "main.testHookEnter", "ts_fake_", "ts_fork_"}

// TestNoTestSupport reads the full symbol table (static symbols too) and
// checks that no test support was linked into the library.
func TestNoTestSupport(t *testing.T) {
	e2e.NeedTool(t, "nm")
	out, err := exec.Command("nm", libPath).Output()
	if err != nil {
		t.Fatalf("nm: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 1000 {
		t.Fatalf("nm lists %d symbols: is the library stripped? This test needs its symbol table", len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name := f[len(f)-1]
		for _, m := range testOnly {
			if strings.Contains(name, m) {
				t.Errorf("test support in the library: %s", name)
			}
		}
	}
}
