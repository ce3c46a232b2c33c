package clients

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/miekg/pkcs11"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"github.com/modexp-token/modexp-token/token/ck"
)

// TestMigratePostQuantumKeys moves extractable ML-DSA-65,
// SLH-DSA-SHA2-128f and Ed448 key pairs from a second token of ours
// (the source module is our own .so, loaded by the CLI as any other
// module) into the first with `keys migrate`. Then each moved private
// key signs on the destination and the source's own public key verifies
// the signature on the source: the key that moved is the key that was
// there. A second run finds everything already here.
func TestMigratePostQuantumKeys(t *testing.T) {
	if moduleKind(t) != kindModExp {
		t.Skip("migrates between two tokens of ours")
	}
	tk := newToken(t)
	cli := ourCLI(t)
	// The source token: a second slot of the same configuration.
	conf := tk.path("modexp-token.toml")
	old, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	// The source slot takes the standard's key policy: migrate wraps its
	// keys under a temporary AES key it generates readable on the source
	// (to carry it to the destination), which the safe policy (a sensitive
	// key only under a trusted or never-readable token-made key) refuses,
	// as it should (docs/THREATS.md).
	tk.write("modexp-token.toml", string(old)+fmt.Sprintf("\n[[slot]]\nlabel = \"src\"\ntoken_file = %q\nengine = \"soft\"\nkey_policy = \"standard\"\n%s", tk.path("src.db"), e2e.CheapKDF))
	child := func(step string) {
		t.Helper()
		r := tk.runEnv([]string{"MODEXP_MIGRATE_PQ_STEP=" + step, "MODEXP_CLIENTS_LIB=" + tk.module}, nil, os.Args[0], "-test.run=^TestMigratePQChild$", "-test.v", "-test.count=1")
		if r.err != nil || !strings.Contains(r.stdout, "--- PASS: TestMigratePQChild") {
			t.Fatalf("%s on the two tokens: %v\n%s", step, r.err, r.combined())
		}
	}
	child("generate")

	env := []string{"MODEXP_TOKEN_FROM_PIN=" + userPIN, "MODEXP_TOKEN_PIN=" + userPIN}
	r := tk.runEnv(env, nil, cli, "keys", "migrate", "--from", tk.module, "--from-token", "src", "--token", tokenLabel)
	t.Logf("keys migrate:\n%s", r.stdout)
	if r.err != nil {
		t.Fatalf("keys migrate: %v\n%s", r.err, r.combined())
	}
	for _, want := range []string{
		`moved    private ml_dsa     label="pq-mldsa" id=11`,
		`moved    private slh_dsa    label="pq-slhdsa" id=12`,
		`moved    private ec_edwards label="ed448" id=13`,
		`copied   public ml_dsa      label="pq-mldsa" id=11`,
		`copied   public slh_dsa     label="pq-slhdsa" id=12`,
		`copied   public ec_edwards  label="ed448" id=13`,
		`6 moved, 0 already here, 0 not moved`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	child("check")

	r = tk.runEnv(env, nil, cli, "keys", "migrate", "--from", tk.module, "--from-token", "src", "--token", tokenLabel)
	if !strings.Contains(r.stdout, "0 moved, 6 already here, 0 not moved") {
		t.Errorf("second run:\n%s", r.combined())
	}
}

// TestMigratePQChild is TestMigratePostQuantumKeys's other process: the
// module reads MODEXP_TOKEN_CONF from the environment the process started
// with, so loading it in-process with the test tokens' configuration takes
// a process started with it. MODEXP_MIGRATE_PQ_STEP says what to do:
// "generate" the source token and its keys, or "check" the moved keys.
func TestMigratePQChild(t *testing.T) {
	step := os.Getenv("MODEXP_MIGRATE_PQ_STEP")
	if step == "" {
		t.Skip("run by TestMigratePostQuantumKeys")
	}
	keys := []struct {
		label, id string
		gen       uint
		pub       []*pkcs11.Attribute
		sign      uint
	}{
		{"pq-mldsa", "11", ck.CKM_ML_DSA_KEY_PAIR_GEN, []*pkcs11.Attribute{pkcs11.NewAttribute(ck.CKA_PARAMETER_SET, uint(ck.CKP_ML_DSA_65))}, ck.CKM_ML_DSA},
		{"pq-slhdsa", "12", ck.CKM_SLH_DSA_KEY_PAIR_GEN, []*pkcs11.Attribute{pkcs11.NewAttribute(ck.CKA_PARAMETER_SET, uint(ck.CKP_SLH_DSA_SHA2_128F))}, ck.CKM_SLH_DSA},
		{"ed448", "13", ck.CKM_EC_EDWARDS_KEY_PAIR_GEN, []*pkcs11.Attribute{pkcs11.NewAttribute(ck.CKA_EC_PARAMS, []byte{0x06, 0x03, 0x2b, 0x65, 0x71})}, ck.CKM_EDDSA},
	}
	if step == "generate" {
		withModule(t, func(p *pkcs11.Ctx, slots map[string]uint) {
			src, ok := slots[""]
			if !ok {
				t.Fatalf("no uninitialised slot for the source: %v", slots)
			}
			if err := p.InitToken(src, soPIN, "src"); err != nil {
				t.Fatalf("C_InitToken: %v", err)
			}
			sh := login(t, p, src, pkcs11.CKU_SO, soPIN)
			if err := p.InitPIN(sh, userPIN); err != nil {
				t.Fatalf("C_InitPIN: %v", err)
			}
			_ = p.Logout(sh)
			_ = p.CloseSession(sh)
			sh = login(t, p, src, pkcs11.CKU_USER, userPIN)
			defer p.CloseSession(sh)
			for _, k := range keys {
				common := []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true), pkcs11.NewAttribute(pkcs11.CKA_LABEL, k.label),
					pkcs11.NewAttribute(pkcs11.CKA_ID, unhexID(t, k.id))}
				_, _, err := p.GenerateKeyPair(sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(k.gen, nil)},
					append(append(common, pkcs11.NewAttribute(pkcs11.CKA_VERIFY, true)), k.pub...),
					append(common, pkcs11.NewAttribute(pkcs11.CKA_SIGN, true), pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, true)))
				if err != nil {
					t.Fatalf("%s: C_GenerateKeyPair on the source: %v", k.label, err)
				}
			}
		})
		return
	}
	if step != "check" {
		t.Fatalf("MODEXP_MIGRATE_PQ_STEP=%q: want generate or check", step)
	}
	msg := []byte("moved between two ModExp tokens")
	withModule(t, func(p *pkcs11.Ctx, slots map[string]uint) {
		dst := login(t, p, slots[tokenLabel], pkcs11.CKU_USER, userPIN)
		src := login(t, p, slots["src"], pkcs11.CKU_USER, userPIN)
		for _, k := range keys {
			priv := findOne(t, p, dst, pkcs11.CKO_PRIVATE_KEY, k.id)
			mech := []*pkcs11.Mechanism{pkcs11.NewMechanism(k.sign, nil)}
			if err := p.SignInit(dst, mech, priv); err != nil {
				t.Fatalf("%s: C_SignInit here: %v", k.label, err)
			}
			sig, err := p.Sign(dst, msg)
			if err != nil {
				t.Fatalf("%s: C_Sign here: %v", k.label, err)
			}
			pub := findOne(t, p, src, pkcs11.CKO_PUBLIC_KEY, k.id)
			if err := p.VerifyInit(src, mech, pub); err != nil {
				t.Fatalf("%s: C_VerifyInit on the source: %v", k.label, err)
			}
			if err := p.Verify(src, msg, sig); err != nil {
				t.Errorf("%s: the moved key's signature does not verify with the source's public key: %v", k.label, err)
			}
		}
	})
}

// withModule loads our module in this process, runs fn with the slots by
// token label ("" for an uninitialised one) and unloads it, so that the
// CLI run next finds the token files free.
func withModule(t *testing.T, fn func(p *pkcs11.Ctx, slots map[string]uint)) {
	t.Helper()
	p := pkcs11.New(ourModule(t))
	if p == nil {
		t.Fatal("cannot load the module")
	}
	defer p.Destroy()
	if err := p.Initialize(); err != nil {
		t.Fatalf("C_Initialize: %v", err)
	}
	defer p.Finalize()
	ids, err := p.GetSlotList(true)
	if err != nil {
		t.Fatalf("C_GetSlotList: %v", err)
	}
	slots := map[string]uint{}
	for _, id := range ids {
		info, err := p.GetTokenInfo(id)
		if err != nil {
			t.Fatalf("C_GetTokenInfo: %v", err)
		}
		label := strings.TrimRight(info.Label, " ")
		if info.Flags&pkcs11.CKF_TOKEN_INITIALIZED == 0 {
			label = ""
		}
		slots[label] = id
	}
	fn(p, slots)
}

func login(t *testing.T, p *pkcs11.Ctx, slot, user uint, pin string) pkcs11.SessionHandle {
	t.Helper()
	sh, err := p.OpenSession(slot, pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
	if err != nil {
		t.Fatalf("C_OpenSession: %v", err)
	}
	if err := p.Login(sh, user, pin); err != nil {
		t.Fatalf("C_Login: %v", err)
	}
	return sh
}

func findOne(t *testing.T, p *pkcs11.Ctx, sh pkcs11.SessionHandle, class uint, id string) pkcs11.ObjectHandle {
	t.Helper()
	if err := p.FindObjectsInit(sh, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, class), pkcs11.NewAttribute(pkcs11.CKA_ID, unhexID(t, id))}); err != nil {
		t.Fatalf("C_FindObjectsInit: %v", err)
	}
	hs, _, err := p.FindObjects(sh, 2)
	_ = p.FindObjectsFinal(sh)
	if err != nil || len(hs) != 1 {
		t.Fatalf("find class %d id %s: %v, %d objects", class, id, err, len(hs))
	}
	return hs[0]
}

func unhexID(t *testing.T, s string) []byte {
	t.Helper()
	var b []byte
	if _, err := fmt.Sscanf(s, "%x", &b); err != nil {
		t.Fatal(err)
	}
	return b
}
