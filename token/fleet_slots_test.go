//go:build modexp_etcd

package token

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/keystore/etcdtest"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

// TestFleetSlotBySlot: a file slot beside an etcd slot where nothing
// listens and one whose port accepts connections but never answers, with
// request timeouts far above the latter's connect budget. The module
// loads; the file slot works at once; each dead slot reports its cause
// (in StoreStatus, its calls' error and the log) and every later call
// gets that recorded reason without contacting the cluster. When a member
// starts on the first endpoint the background retries make the slot
// usable again.
//
// The refused slot's budget is only a guard against a hang: the first
// request waits for a connection until its timeout, and the refusal is
// diagnosed in what the budget leaves, which a loaded machine can eat
// (300 ms can leave too little: the refusal is then taken for a
// timeout). Its port is reserved, not listened on: refused at any load,
// and taken by no other process before the member binds it.
func TestFleetSlotBySlot(t *testing.T) {
	dir := t.TempDir()
	cu := etcdtest.ReserveLoopbackURL(t) // nothing listens there (until the member starts)
	pu := etcdtest.ReserveLoopbackURL(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { silent.Close() })
	go func() { // accept and hold every connection: a port that never answers
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	logPath := filepath.Join(dir, "module.log")
	slotConf := `
[[slot]]
label = %q
engine = "soft"
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
`
	etcdConf := slotConf + `etcd_endpoints = [%q]
etcd_prefix = %q
etcd_dial_timeout = "10s"
etcd_request_timeout = "10s"
etcd_connect_budget = %q
`
	body := fmt.Sprintf("log = %q\nlog_level = \"debug\"\n", logPath) +
		fmt.Sprintf(slotConf+"token_file = %q\n", "File", filepath.Join(dir, "file.token")) +
		fmt.Sprintf(etcdConf, "Refused", cu.String(), "/refused/", "2m") +
		fmt.Sprintf(etcdConf, "Silent", "http://"+silent.Addr().String(), "/silent/", "300ms")
	cfg, err := config.Parse([]byte(body), dir)
	must(t, err)
	start := time.Now()
	m, err := Load(cfg)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Logf("C_Initialize (Load) with two dead etcd slots: %v", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { m.Close() })
	slots := m.SlotList(true)
	if len(slots) != 3 {
		t.Fatalf("slots = %v", slots)
	}
	file, refused, silentSlot := slots[0], slots[1], slots[2]

	// The file slot works at once.
	initToken(t, m, file)
	sh := openRW(t, m, file)
	must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
	pub, priv := genEC(t, m, sh, "P-256", true)
	digest := sha256.Sum256([]byte("beside dead slots"))
	sig, err := signWith(t, m, sh, priv, ck.CKM_ECDSA, digest[:])
	must(t, err)
	must(t, verifyWith(t, m, sh, pub, ck.CKM_ECDSA, digest[:], sig))

	logs, err := os.ReadFile(logPath)
	must(t, err)
	for _, c := range []struct {
		slot  uint64
		cause string
	}{{refused, "connection refused"}, {silentSlot, "timeout"}} {
		st, err := m.StoreStatus(c.slot)
		must(t, err)
		if st.Usable || !strings.HasPrefix(st.Cause, c.cause) || st.Code != uint64(ck.CKR_DEVICE_ERROR) {
			t.Fatalf("slot %d: store status %+v, want unusable: %s, CKR_DEVICE_ERROR", c.slot, st, c.cause)
		}
		if !strings.Contains(string(logs), `cause="`+c.cause) {
			t.Errorf("slot %d: no log line naming %q:\n%s", c.slot, c.cause, logs)
		}
		// Every call gets the recorded reason: the same since, no new
		// contact (each would log a new "unusable" line with its cause).
		for range 3 {
			_, err = m.TokenInfo(c.slot)
			wantRV(t, err, ck.CKR_DEVICE_ERROR)
			if !strings.Contains(err.Error(), c.cause) || !strings.Contains(err.Error(), "tried again in the background") {
				t.Fatalf("slot %d: C_GetTokenInfo: %v, want the recorded cause", c.slot, err)
			}
			_, err = m.OpenSession(c.slot, ck.CKF_SERIAL_SESSION)
			wantRV(t, err, ck.CKR_DEVICE_ERROR)
		}
		if st2, _ := m.StoreStatus(c.slot); !st2.Since.Equal(st.Since) {
			t.Fatalf("slot %d: unusable since %v, then %v", c.slot, st.Since, st2.Since)
		}
		si, err := m.SlotInfo(c.slot)
		must(t, err)
		if si.Flags&ck.CKF_TOKEN_PRESENT == 0 {
			t.Errorf("slot %d: an unreachable store reported as no token (CKF_TOKEN_PRESENT off)", c.slot)
		}
	}

	// The cluster comes: the background retries find it.
	e, err := etcdtest.StartAt(t.TempDir(), "slots", cu, pu)
	must(t, err)
	t.Cleanup(func() { e.Close() })
	for st, _ := m.StoreStatus(refused); !st.Usable; st, _ = m.StoreStatus(refused) {
		time.Sleep(50 * time.Millisecond)
	}
	initToken(t, m, refused)
	ti, err := m.TokenInfo(refused)
	must(t, err)
	if ti.Flags&ck.CKF_TOKEN_INITIALIZED == 0 {
		t.Fatalf("token info %+v after the cluster came", ti)
	}
	logs, err = os.ReadFile(logPath)
	must(t, err)
	if !strings.Contains(string(logs), "token store usable again") {
		t.Errorf("no log line for the store's return:\n%s", logs)
	}
	if st, _ := m.StoreStatus(silentSlot); st.Usable {
		t.Fatal("the silent slot became usable")
	}
}

// TestFleetPermissionDenied: the fleet case on embedded members: a
// file slot, an etcd slot whose client certificate may read its prefix,
// one whose certificate may not read the prefix configured, and one at an
// endpoint where nothing listens. The module loads; the file and the
// permitted etcd slot work at once; the refused slot is
// CKR_TOKEN_NOT_PRESENT (no CKF_TOKEN_PRESENT) with "permission denied on
// the prefix" in its error and the log; the unreachable one
// CKR_DEVICE_ERROR, "connection refused".
func TestFleetPermissionDenied(t *testing.T) {
	dir := t.TempDir()
	ca, caKey, caFile, _ := etcdtest.Cert(t, dir, "ca", nil, nil, 0)
	_, _, serverCert, serverKey := etcdtest.Cert(t, dir, "server", ca, caKey, x509.ExtKeyUsageServerAuth)
	_, _, rootCert, rootKey := etcdtest.Cert(t, dir, "root", ca, caKey, x509.ExtKeyUsageClientAuth)
	_, _, hostCert, hostKey := etcdtest.Cert(t, dir, "host", ca, caKey, x509.ExtKeyUsageClientAuth)
	e, endpoint, err := etcdtest.StartTLS(t.TempDir(), "perm", serverCert, serverKey, caFile)
	must(t, err)
	t.Cleanup(func() { e.Close() })
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(caFile)
	must(t, err)
	pool.AppendCertsFromPEM(caPEM)
	root, err := tls.LoadX509KeyPair(rootCert, rootKey)
	must(t, err)
	etcdtest.GrantPrefixes(t, endpoint, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{root}},
		"root", map[string]string{"host": "/allowed/"})
	refused := etcdtest.ReserveLoopbackURL(t)

	logPath := filepath.Join(dir, "module.log")
	slotConf := `
[[slot]]
label = %q
engine = "soft"
kdf_time = 1
kdf_memory_kib = 64
kdf_threads = 1
kdf_insecure = true
`
	etcdConf := slotConf + `etcd_endpoints = [%q]
etcd_prefix = %q
etcd_ca = %q
etcd_cert = %q
etcd_key = %q
etcd_connect_budget = "10s"
`
	body := fmt.Sprintf("log = %q\n", logPath) +
		fmt.Sprintf(slotConf+"token_file = %q\n", "File", filepath.Join(dir, "file.token")) +
		fmt.Sprintf(etcdConf, "Allowed", endpoint, "/allowed/", caFile, hostCert, hostKey) +
		fmt.Sprintf(etcdConf, "Denied", endpoint, "/denied/", caFile, hostCert, hostKey) +
		fmt.Sprintf(slotConf+"etcd_endpoints = [%q]\netcd_prefix = \"/gone/\"\netcd_connect_budget = \"2m\"\netcd_request_timeout = \"300ms\"\n", "Gone", refused.String())
	cfg, err := config.Parse([]byte(body), dir)
	must(t, err)
	start := time.Now()
	m, err := Load(cfg)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Logf("C_Initialize (Load): %v", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { m.Close() })
	slots := m.SlotList(true)
	if len(slots) != 4 {
		t.Fatalf("slots = %v", slots)
	}
	file, allowed, denied, gone := slots[0], slots[1], slots[2], slots[3]
	for _, s := range []uint64{file, allowed} {
		initToken(t, m, s)
		sh := openRW(t, m, s)
		must(t, m.Login(sh, ck.CKU_USER, []byte(testUserPIN)))
		_, priv := genEC(t, m, sh, "P-256", true)
		digest := sha256.Sum256([]byte("beside a refused slot"))
		_, err := signWith(t, m, sh, priv, ck.CKM_ECDSA, digest[:])
		must(t, err)
	}
	logs, err := os.ReadFile(logPath)
	must(t, err)
	for _, c := range []struct {
		slot    uint64
		cause   string
		code    ck.Error
		present bool
	}{
		{denied, "permission denied on the prefix", ck.CKR_TOKEN_NOT_PRESENT, false},
		{gone, "connection refused", ck.CKR_DEVICE_ERROR, true},
	} {
		st, err := m.StoreStatus(c.slot)
		must(t, err)
		if st.Usable || st.Cause != c.cause || st.Code != uint64(c.code) {
			t.Errorf("slot %d: store status %+v, want %q, %v", c.slot, st, c.cause, c.code)
		}
		_, err = m.TokenInfo(c.slot)
		wantRV(t, err, c.code)
		if !strings.Contains(err.Error(), c.cause) {
			t.Errorf("slot %d: C_GetTokenInfo: %v, want the cause %q", c.slot, err, c.cause)
		}
		si, err := m.SlotInfo(c.slot)
		must(t, err)
		if (si.Flags&ck.CKF_TOKEN_PRESENT != 0) != c.present {
			t.Errorf("slot %d: slot flags %#x, want CKF_TOKEN_PRESENT %v", c.slot, si.Flags, c.present)
		}
		if !strings.Contains(string(logs), `cause="`+c.cause+`"`) {
			t.Errorf("slot %d: the log does not name %q:\n%s", c.slot, c.cause, logs)
		}
	}
}
