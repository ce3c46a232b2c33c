package largetoken

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/pkcs11"
	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// TestLargeVsSoftHSM (-large) fills our token and a SoftHSMv2 token with
// the same number (-large.objects, default 100,000) of RSA public
// keys and measures, on each: opening (C_Initialize, C_OpenSession,
// C_Login, the first C_FindObjects by CKA_ID), finding a key by CKA_ID, and
// listing every public key by class; on ours also the first search after
// another process changed one object. It prints a Markdown table.
func TestLargeVsSoftHSM(t *testing.T) {
	if !*large {
		t.Skip("run with -large (takes minutes)")
	}
	n := objectCount(t, 100000)
	lib := os.Getenv("SOFTHSM")
	if lib == "" {
		lib = "/usr/lib/softhsm/libsofthsm2.so"
	}
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("SoftHSMv2 not found (%v): apt-get install softhsm2", err)
	}
	const rounds = 3
	const finds = 200
	key := rsaKey(t)
	dir := t.TempDir()

	start := time.Now()
	cfg := ourToken(t, filepath.Join(dir, "ours"), n, &key.PublicKey, false)
	t.Logf("ours: %d objects written in %v", n, time.Since(start))
	start = time.Now()
	hsm := newSoftHSM(t, lib, filepath.Join(dir, "softhsm"))
	hsm.fill(t, n, func(i int) []attr { return pubTemplate(&key.PublicKey, i) })
	t.Logf("SoftHSM: %d objects written in %v", n, time.Since(start))

	type result struct{ open, login, firstFind, find, list, afterChange time.Duration }
	var o, h result

	// Ours.
	var opens, logins, firsts []time.Duration
	for range rounds {
		t0 := time.Now()
		m, err := token.Load(cfg)
		must(t, err)
		sh, err := m.OpenSession(m.SlotList(true)[0], ck.CKF_SERIAL_SESSION)
		must(t, err)
		t1 := time.Now()
		must(t, m.Login(sh, ck.CKU_USER, []byte(userPIN)))
		t2 := time.Now()
		if got := findAll(t, m, sh, byID(n/2)); len(got) != 1 {
			t.Fatalf("ours: found %d", len(got))
		}
		t3 := time.Now()
		opens, logins, firsts = append(opens, t3.Sub(t0)), append(logins, t2.Sub(t1)), append(firsts, t3.Sub(t2))
		m.Close()
	}
	o.open, o.login, o.firstFind = median(opens), median(logins), median(firsts)
	m, err := token.Load(cfg)
	must(t, err)
	defer m.Close()
	sh, err := m.OpenSession(m.SlotList(true)[0], ck.CKF_SERIAL_SESSION)
	must(t, err)
	must(t, m.Login(sh, ck.CKU_USER, []byte(userPIN)))
	t0 := time.Now()
	for k := range finds {
		if got := findAll(t, m, sh, byID((k*7919)%n)); len(got) != 1 {
			t.Fatalf("ours: found %d", len(got))
		}
	}
	o.find = time.Since(t0) / finds
	var lists []time.Duration
	for range rounds {
		t0 := time.Now()
		if got := len(findAll(t, m, sh, classPub())); got != n {
			t.Fatalf("ours: listed %d", got)
		}
		lists = append(lists, time.Since(t0))
	}
	o.list = median(lists)
	other, err := keystore.Open(cfg.Slots[0].TokenFile, keystore.Options{})
	must(t, err)
	defer other.Close()
	var afters []time.Duration
	for r := range rounds {
		if _, err := other.Put(nil, keystore.Object{Attrs: map[uint64][]byte{
			ck.CKA_CLASS: ck.ULong(ck.CKO_DATA), ck.CKA_TOKEN: ck.Bool(true), ck.CKA_PRIVATE: ck.Bool(false),
			ck.CKA_LABEL: []byte("change " + strconv.Itoa(r))}}); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if got := findAll(t, m, sh, byID(n/3)); len(got) != 1 {
			t.Fatalf("ours: found %d", len(got))
		}
		afters = append(afters, time.Since(t0))
	}
	o.afterChange = median(afters)

	// SoftHSMv2.
	opens, logins, firsts = nil, nil, nil
	for range rounds {
		t0 := time.Now()
		hsm.init(t)
		s := hsm.session(t)
		t1 := time.Now()
		must(t, hsm.p.Login(s, pkcs11.CKU_USER, userPIN))
		t2 := time.Now()
		if got := hsm.find(t, s, byID(n/2)); got != 1 {
			t.Fatalf("softhsm: found %d", got)
		}
		t3 := time.Now()
		opens, logins, firsts = append(opens, t3.Sub(t0)), append(logins, t2.Sub(t1)), append(firsts, t3.Sub(t2))
		hsm.finalize(t)
	}
	h.open, h.login, h.firstFind = median(opens), median(logins), median(firsts)
	hsm.init(t)
	s := hsm.session(t)
	must(t, hsm.p.Login(s, pkcs11.CKU_USER, userPIN))
	hfinds := min(finds, 20)
	t0 = time.Now()
	for k := range hfinds {
		if got := hsm.find(t, s, byID((k*7919)%n)); got != 1 {
			t.Fatalf("softhsm: found %d", got)
		}
	}
	h.find = time.Since(t0) / time.Duration(hfinds)
	lists = nil
	for range rounds {
		t0 := time.Now()
		if got := hsm.find(t, s, classPub()); got != n {
			t.Fatalf("softhsm: listed %d", got)
		}
		lists = append(lists, time.Since(t0))
	}
	h.list = median(lists)
	hsm.finalize(t)

	var b strings.Builder
	fmt.Fprintf(&b, "\n%d RSA-2048 public key objects (median of %d; find by CKA_ID: mean of %d searches on ours, %d on SoftHSM)\n\n", n, rounds, finds, hfinds)
	fmt.Fprintf(&b, "| measure | ModExp Token | SoftHSMv2 |\n|---|---:|---:|\n")
	row := func(name string, a, b2 time.Duration, hasB bool) {
		hb := "—"
		if hasB {
			hb = fmtDur(b2)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, fmtDur(a), hb)
	}
	row("open: C_Initialize → first C_FindObjects by CKA_ID", o.open, h.open, true)
	row("  of which C_Login", o.login, h.login, true)
	row("  of which first search by CKA_ID", o.firstFind, h.firstFind, true)
	row("find one key by CKA_ID (Init+Find+Final)", o.find, h.find, true)
	row("list by class (all public keys)", o.list, h.list, true)
	row("first search after another process changed one object", o.afterChange, 0, false)
	t.Log(b.String())
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	}
}

// softHSM is a SoftHSMv2 token in its own configuration (SOFTHSM2_CONF).
type softHSM struct {
	p    *pkcs11.Ctx
	slot uint
}

func newSoftHSM(t *testing.T, lib, dir string) *softHSM {
	must(t, os.MkdirAll(filepath.Join(dir, "tokens"), 0o700))
	conf := filepath.Join(dir, "softhsm2.conf")
	backend := os.Getenv("SOFTHSM_BACKEND") // file (default) or db (SQLite)
	if backend == "" {
		backend = "file"
	}
	must(t, os.WriteFile(conf, []byte("directories.tokendir = "+filepath.Join(dir, "tokens")+
		"\nobjectstore.backend = "+backend+"\nlog.level = ERROR\n"), 0o600))
	t.Setenv("SOFTHSM2_CONF", conf)
	p := pkcs11.New(lib)
	if p == nil {
		t.Fatalf("cannot load %s", lib)
	}
	t.Cleanup(p.Destroy)
	h := &softHSM{p: p}
	must(t, p.Initialize())
	slots, err := p.GetSlotList(true)
	must(t, err)
	must(t, p.InitToken(slots[0], soPIN, "large"))
	must(t, p.Finalize())
	h.init(t)
	s := h.session(t)
	must(t, p.Login(s, pkcs11.CKU_SO, soPIN))
	must(t, p.InitPIN(s, userPIN))
	h.finalize(t)
	return h
}

// init is C_Initialize and finds the token's slot.
func (h *softHSM) init(t *testing.T) {
	must(t, h.p.Initialize())
	slots, err := h.p.GetSlotList(true)
	must(t, err)
	for _, sl := range slots {
		if ti, err := h.p.GetTokenInfo(sl); err == nil && strings.TrimRight(ti.Label, " ") == "large" {
			h.slot = sl
			return
		}
	}
	t.Fatal("softhsm: token not found")
}

func (h *softHSM) finalize(t *testing.T) { must(t, h.p.Finalize()) }

func (h *softHSM) session(t *testing.T) pkcs11.SessionHandle {
	s, err := h.p.OpenSession(h.slot, pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
	must(t, err)
	return s
}

func (h *softHSM) fill(t *testing.T, n int, tmpl func(int) []attr) {
	h.init(t)
	s := h.session(t)
	must(t, h.p.Login(s, pkcs11.CKU_USER, userPIN))
	for i := range n {
		var a []*pkcs11.Attribute
		for _, x := range tmpl(i) {
			a = append(a, pkcs11.NewAttribute(uint(x.typ), x.val))
		}
		if _, err := h.p.CreateObject(s, a); err != nil {
			t.Fatalf("softhsm: object %d: %v", i, err)
		}
	}
	h.finalize(t)
}

func (h *softHSM) find(t *testing.T, s pkcs11.SessionHandle, a token.Attribute) int {
	must(t, h.p.FindObjectsInit(s, []*pkcs11.Attribute{pkcs11.NewAttribute(uint(a.Type), a.Value)}))
	total := 0
	for {
		hs, _, err := h.p.FindObjects(s, 1000)
		must(t, err)
		if len(hs) == 0 {
			break
		}
		total += len(hs)
	}
	must(t, h.p.FindObjectsFinal(s))
	return total
}
