// Command robusthelper is a process that drives a token through package
// token directly (the code the PKCS#11 module runs, without the C layer)
// for the tests in test/robust. It reads the configuration like the module
// (MODEXP_TOKEN_CONF) and the PINs from ROBUST_USER_PIN / ROBUST_SO_PIN,
// and prints one event per line on stdout, timestamped with the system's
// monotonic clock (CLOCK_MONOTONIC, nanoseconds) so that events of several
// processes can be ordered:
//
//	created T LABEL          an object with CKA_LABEL LABEL exists from T on
//	deleting T LABEL         its deletion starts at T
//	deleted T LABEL          and has finished at T
//	find T0 T1 LABEL...      a C_FindObjectsInit..Final between T0 and T1 saw these
//	step WHAT ARG            progress of a crash loop (see crash)
//	ready                    set up; the loop starts
//	done                     finished (modes with a fixed count)
//	FAIL MESSAGE             an operation failed (exit status 1)
//
// Modes:
//
//	gen N            generate N RSA-1024 key pairs (labels g-0..), list the
//	                 token after each, delete every other pair again
//	crash OP         loop OP until killed: keygen, import, delete, pinuser,
//	                 pinso or init (see crashLoop)
//	login PIN        one user login with PIN; prints "login CKR_..."
package main

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	_ "github.com/modexp-token/modexp-token/engine/backend/all" // the engines a slot may name
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: robusthelper gen N | crash OP | login PIN")
	}
	m, err := token.LoadFromEnv()
	if err != nil {
		fail("load: %v", err)
	}
	defer m.Close()
	slots := m.SlotList(true)
	if len(slots) == 0 {
		fail("no slot")
	}
	h := &helper{m: m, slot: slots[0]}
	switch os.Args[1] {
	case "gen":
		n, _ := strconv.Atoi(arg(2))
		h.gen(n)
	case "crash":
		h.crashLoop(arg(2))
	case "login":
		sh := h.open()
		err := m.Login(sh, ck.CKU_USER, []byte(arg(2)))
		fmt.Printf("login %s\n", ck.Name("CKR_", ck.RV(err)))
		return
	default:
		fail("unknown mode %q", os.Args[1])
	}
	fmt.Println("done")
}

func arg(i int) string {
	if i < len(os.Args) {
		return os.Args[i]
	}
	return ""
}

func fail(format string, args ...any) {
	fmt.Printf("FAIL "+format+"\n", args...)
	os.Exit(1)
}

// now is CLOCK_MONOTONIC in nanoseconds: the clock the C signer uses too.
func now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		fail("clock: %v", err)
	}
	return ts.Nano()
}

type helper struct {
	m    *token.Module
	slot uint64
}

func (h *helper) check(what string, err error) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func (h *helper) open() uint64 {
	sh, err := h.m.OpenSession(h.slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	h.check("open session", err)
	return sh
}

// userSession is a R/W session logged in as the user.
func (h *helper) userSession() uint64 {
	sh := h.open()
	h.check("login", h.m.Login(sh, ck.CKU_USER, []byte(os.Getenv("ROBUST_USER_PIN"))))
	return sh
}

func attr(t uint64, v []byte) token.Attribute   { return token.Attribute{Type: t, Value: v} }
func ulong(t, v uint64) token.Attribute         { return attr(t, ck.ULong(v)) }
func boolAttr(t uint64, v bool) token.Attribute { return attr(t, ck.Bool(v)) }

// findLabels lists every visible object's label.
func (h *helper) findLabels(sh uint64, tmpl ...token.Attribute) ([]uint64, []string) {
	h.check("find init", h.m.FindObjectsInit(sh, tmpl))
	var hs []uint64
	for {
		got, err := h.m.FindObjects(sh, 50)
		h.check("find", err)
		if len(got) == 0 {
			break
		}
		hs = append(hs, got...)
	}
	h.check("find final", h.m.FindObjectsFinal(sh))
	labels := make([]string, len(hs))
	for i, o := range hs {
		res, err := h.m.GetAttributeValue(sh, o, []uint64{ck.CKA_LABEL})
		h.check("label", err)
		labels[i] = string(res[0].Value)
	}
	return hs, labels
}

func (h *helper) generate(sh uint64, label string, id []byte) {
	pub := []token.Attribute{boolAttr(ck.CKA_TOKEN, true), attr(ck.CKA_LABEL, []byte(label)), attr(ck.CKA_ID, id),
		ulong(ck.CKA_MODULUS_BITS, 1024), boolAttr(ck.CKA_VERIFY, true)}
	priv := []token.Attribute{boolAttr(ck.CKA_TOKEN, true), attr(ck.CKA_LABEL, []byte(label)), attr(ck.CKA_ID, id),
		boolAttr(ck.CKA_PRIVATE, true), boolAttr(ck.CKA_SENSITIVE, true), boolAttr(ck.CKA_SIGN, true)}
	_, _, err := h.m.GenerateKeyPair(sh, &token.Mechanism{Type: ck.CKM_RSA_PKCS_KEY_PAIR_GEN}, pub, priv)
	h.check("generate "+label, err)
}

// destroyLabel destroys every object labelled label.
func (h *helper) destroyLabel(sh uint64, label string) {
	hs, _ := h.findLabels(sh, attr(ck.CKA_LABEL, []byte(label)))
	for _, o := range hs {
		h.check("destroy "+label, h.m.DestroyObject(sh, o))
	}
}

// gen is the key generator of the many-processes test.
func (h *helper) gen(n int) {
	sh := h.userSession()
	fmt.Println("ready")
	var live []string
	for i := range n {
		label := fmt.Sprintf("g-%d", i)
		h.generate(sh, label, []byte(label))
		fmt.Printf("created %d %s\n", now(), label)
		live = append(live, label)
		t0 := now()
		_, labels := h.findLabels(sh)
		fmt.Printf("find %d %d %s\n", t0, now(), strings.Join(labels, " "))
		if i%2 == 1 {
			victim := live[0]
			live = live[1:]
			fmt.Printf("deleting %d %s\n", now(), victim)
			h.destroyLabel(sh, victim)
			fmt.Printf("deleted %d %s\n", now(), victim)
		}
	}
	// The test checks this process's searches against the signer's
	// objects (c-<i>), so it goes on searching until it has seen one in
	// three searches: a fast generator may otherwise finish before the
	// signer (a C process that must load the module and log in) made its
	// first. The bound only keeps a broken signer from stalling it.
	for seen, tries := 0, 0; seen < 3 && tries < 2000; tries++ {
		t0 := now()
		_, labels := h.findLabels(sh)
		fmt.Printf("find %d %d %s\n", t0, now(), strings.Join(labels, " "))
		if slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, "c-") }) {
			seen++
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// importKey reads the PEM RSA key named by ROBUST_IMPORT_KEY.
func importKey() *rsa.PrivateKey {
	data, err := os.ReadFile(os.Getenv("ROBUST_IMPORT_KEY"))
	if err != nil {
		fail("import key: %v", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		fail("import key: no PEM block")
	}
	k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		fail("import key: %v", err)
	}
	k.Precompute()
	return k
}

// importPair creates the private key then the public key, as the CLI's
// import does (two C_CreateObject calls: a crash between them leaves a
// private key without its public half, never the reverse).
func (h *helper) importPair(sh uint64, k *rsa.PrivateKey, label string) {
	n, e := k.N.Bytes(), big.NewInt(int64(k.E)).Bytes()
	priv := []token.Attribute{ulong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), ulong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		boolAttr(ck.CKA_TOKEN, true), boolAttr(ck.CKA_PRIVATE, true), boolAttr(ck.CKA_SENSITIVE, true),
		boolAttr(ck.CKA_SIGN, true), attr(ck.CKA_LABEL, []byte(label)), attr(ck.CKA_ID, []byte(label)),
		attr(ck.CKA_MODULUS, n), attr(ck.CKA_PUBLIC_EXPONENT, e), attr(ck.CKA_PRIVATE_EXPONENT, k.D.Bytes()),
		attr(ck.CKA_PRIME_1, k.Primes[0].Bytes()), attr(ck.CKA_PRIME_2, k.Primes[1].Bytes()),
		attr(ck.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()), attr(ck.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
		attr(ck.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes())}
	pub := []token.Attribute{ulong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY), ulong(ck.CKA_KEY_TYPE, ck.CKK_RSA),
		boolAttr(ck.CKA_TOKEN, true), boolAttr(ck.CKA_VERIFY, true), attr(ck.CKA_LABEL, []byte(label)),
		attr(ck.CKA_ID, []byte(label)), attr(ck.CKA_MODULUS, n), attr(ck.CKA_PUBLIC_EXPONENT, e)}
	_, err := h.m.CreateObject(sh, priv)
	h.check("import private "+label, err)
	_, err = h.m.CreateObject(sh, pub)
	h.check("import public "+label, err)
}

// crashLoop runs one kind of operation until the process is killed,
// printing "step begin ARG" before and "step end ARG" after each, so the
// test knows which operation may have been interrupted:
//
//	keygen   C_GenerateKeyPair of RSA-1024 pairs labelled k-<pid>-<i>
//	import   private then public key of ROBUST_IMPORT_KEY, labelled i-<pid>-<i>
//	delete   destroy the imported objects (i-*), public half first
//	pinuser  C_SetPIN of the user PIN, alternating ROBUST_USER_PIN and ROBUST_NEW_PIN
//	pinso    likewise for the SO PIN (ROBUST_SO_PIN, ROBUST_NEW_PIN)
//	init     C_InitToken (same SO PIN) then C_InitPIN (ROBUST_USER_PIN);
//	         "step begin init", "step token init", "step end init"
func (h *helper) crashLoop(op string) {
	pid := os.Getpid()
	switch op {
	case "keygen", "import", "delete":
		sh := h.userSession()
		var k *rsa.PrivateKey
		if op == "import" {
			k = importKey()
		}
		fmt.Println("ready")
		for i := 0; ; i++ {
			switch op {
			case "keygen":
				label := fmt.Sprintf("k-%d-%d", pid, i)
				fmt.Printf("step begin %s\n", label)
				h.generate(sh, label, []byte(label))
				fmt.Printf("step end %s\n", label)
			case "import":
				label := fmt.Sprintf("i-%d-%d", pid, i)
				fmt.Printf("step begin %s\n", label)
				h.importPair(sh, k, label)
				fmt.Printf("step end %s\n", label)
			case "delete":
				hs, labels := h.findLabels(sh)
				var pubs, privs []uint64
				for j, o := range hs {
					if !strings.HasPrefix(labels[j], "i-") {
						continue
					}
					res, err := h.m.GetAttributeValue(sh, o, []uint64{ck.CKA_CLASS})
					h.check("class", err)
					if c, _ := ck.ParseULong(res[0].Value); c == ck.CKO_PUBLIC_KEY {
						pubs = append(pubs, o)
					} else {
						privs = append(privs, o)
					}
				}
				if len(pubs)+len(privs) == 0 {
					fmt.Println("step idle")
					select {} // nothing left: wait to be killed
				}
				for _, o := range append(pubs, privs...) {
					fmt.Printf("step begin delete\n")
					h.check("destroy", h.m.DestroyObject(sh, o))
					fmt.Printf("step end delete\n")
				}
			}
		}
	case "pinuser", "pinso":
		pins := []string{os.Getenv("ROBUST_USER_PIN"), os.Getenv("ROBUST_NEW_PIN")}
		user := uint64(ck.CKU_USER)
		if op == "pinso" {
			pins[0], user = os.Getenv("ROBUST_SO_PIN"), ck.CKU_SO
		}
		sh := h.open()
		h.check("login", h.m.Login(sh, user, []byte(pins[0])))
		fmt.Println("ready")
		for i := 0; ; i++ {
			from, to := pins[i%2], pins[(i+1)%2]
			fmt.Printf("step begin %s\n", to)
			h.check("set PIN", h.m.SetPIN(sh, []byte(from), []byte(to)))
			fmt.Printf("step end %s\n", to)
		}
	case "init":
		so, user := []byte(os.Getenv("ROBUST_SO_PIN")), []byte(os.Getenv("ROBUST_USER_PIN"))
		fmt.Println("ready")
		for {
			fmt.Println("step begin init")
			h.check("init token", h.m.InitToken(h.slot, so, "robust"))
			fmt.Println("step token init")
			sh := h.open()
			h.check("SO login", h.m.Login(sh, ck.CKU_SO, so))
			h.check("init PIN", h.m.InitPIN(sh, user))
			h.check("close", h.m.CloseSession(sh))
			fmt.Println("step end init")
		}
	default:
		fail("unknown crash operation %q", op)
	}
}
