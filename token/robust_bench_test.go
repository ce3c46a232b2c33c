package token

// A token with many objects (-large.objects, default 100,000): what
// opening it, finding a key by CKA_ID, listing by class and noticing
// another process's change cost through Module. The objects are written
// straight through the keystore in batches (PutObjects), as copies of one
// public key object made through C_CreateObject, so they are exactly what
// the token stores.
//
//	go test -run '^$' -bench BenchmarkLargeToken -benchtime 20x ./token

import (
	"encoding/binary"
	"flag"
	"strconv"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

// benchObjectsFlag is the size of BenchmarkLargeToken's token.
var benchObjectsFlag = flag.Int("large.objects", 100000, "BenchmarkLargeToken: objects in the token")

func benchObjects(b *testing.B) int {
	if *benchObjectsFlag < 1 {
		b.Fatalf("-large.objects=%d: at least 1", *benchObjectsFlag)
	}
	return *benchObjectsFlag
}

// largeToken makes a token with n public key objects (CKA_ID = 8-byte
// big-endian index) and returns its configuration.
func largeToken(b *testing.B, n int) *config.Config {
	b.Helper()
	dir := b.TempDir()
	cfg, err := config.Parse([]byte("[[slot]]\nlabel = \"Large\"\ntoken_file = \"token.db\"\nengine = \"soft\"\n"+
		"kdf_time = 1\nkdf_memory_kib = 64\nkdf_threads = 1\nkdf_insecure = true\n"), dir)
	if err != nil {
		b.Fatal(err)
	}
	m, err := Load(cfg)
	if err != nil {
		b.Fatal(err)
	}
	slot := m.SlotList(true)[0]
	if err := m.InitToken(slot, []byte(testSOPIN), "Large"); err != nil {
		b.Fatal(err)
	}
	sh, _ := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	for _, err := range []error{m.Login(sh, ck.CKU_SO, []byte(testSOPIN)), m.InitPIN(sh, []byte(testUserPIN)), m.Logout(sh),
		m.Login(sh, ck.CKU_USER, []byte(testUserPIN))} {
		if err != nil {
			b.Fatal(err)
		}
	}
	_, pub := rsaKeyTemplates(fuzzRSAKey)
	pub = append(pub, aBool(ck.CKA_TOKEN, true), aBytes(ck.CKA_ID, []byte("model")))
	if _, err := m.CreateObject(sh, pub); err != nil {
		b.Fatal(err)
	}
	m.Close()

	st, err := keystore.Open(cfg.Slots[0].TokenFile, keystore.Options{KDF: keystore.InsecureTestKDFParams, AllowWeakKDF: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	objs, _, err := st.Objects(nil)
	if err != nil || len(objs) != 1 {
		b.Fatalf("model object: %d, %v", len(objs), err)
	}
	model := objs[0]
	const batch = 2000
	for done := 0; done < n; {
		var put []keystore.Object
		for ; done < n && len(put) < batch; done++ {
			o := keystore.Object{Attrs: map[uint64][]byte{}, Sealed: model.Sealed}
			for t, v := range model.Attrs {
				o.Attrs[t] = v
			}
			o.Attrs[ck.CKA_ID] = binary.BigEndian.AppendUint64(nil, uint64(done))
			o.Attrs[ck.CKA_LABEL] = []byte("key " + strconv.Itoa(done))
			put = append(put, o)
		}
		if _, err := st.PutObjects(nil, put); err != nil {
			b.Fatal(err)
		}
	}
	return cfg
}

// BenchmarkLargeToken reports, for a token of -large.objects objects:
//
//	open         Load + C_OpenSession + the first C_FindObjectsInit (loads every object)
//	find-by-id   C_FindObjectsInit(CKA_ID) .. C_FindObjectsFinal on a loaded cache
//	list-class   C_FindObjectsInit(CKA_CLASS) returning every object
//	after-change find-by-id after another writer changed the token (one object)
func BenchmarkLargeToken(b *testing.B) {
	n := benchObjects(b)
	start := time.Now()
	cfg := largeToken(b, n)
	b.Logf("%d objects written in %v", n, time.Since(start))
	open := func() (*Module, uint64) {
		m, err := Load(cfg)
		if err != nil {
			b.Fatal(err)
		}
		sh, err := m.OpenSession(m.SlotList(true)[0], ck.CKF_SERIAL_SESSION)
		if err != nil {
			b.Fatal(err)
		}
		return m, sh
	}
	findAll := func(m *Module, sh uint64, tmpl ...Attribute) int {
		if err := m.FindObjectsInit(sh, tmpl); err != nil {
			b.Fatal(err)
		}
		total := 0
		for {
			hs, err := m.FindObjects(sh, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(hs) == 0 {
				break
			}
			total += len(hs)
		}
		if err := m.FindObjectsFinal(sh); err != nil {
			b.Fatal(err)
		}
		return total
	}
	id := func(i int) Attribute { return aBytes(ck.CKA_ID, binary.BigEndian.AppendUint64(nil, uint64(i))) }

	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			m, sh := open()
			if got := findAll(m, sh, id(n/2)); got != 1 {
				b.Fatalf("found %d", got)
			}
			m.Close()
		}
	})
	m, sh := open()
	defer m.Close()
	findAll(m, sh)
	b.Run("find-by-id", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if got := findAll(m, sh, id(i%n)); got != 1 {
				b.Fatalf("found %d", got)
			}
			i += 7919
		}
	})
	b.Run("list-class", func(b *testing.B) {
		for b.Loop() {
			if got := findAll(m, sh, aULong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY)); got != n+1 {
				b.Fatalf("listed %d", got)
			}
		}
	})
	other, err := keystore.Open(cfg.Slots[0].TokenFile, keystore.Options{KDF: keystore.InsecureTestKDFParams, AllowWeakKDF: true})
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	b.Run("after-change", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			// Another process adds a data object.
			if _, err := other.Put(nil, keystore.Object{Attrs: map[uint64][]byte{
				ck.CKA_CLASS: ck.ULong(ck.CKO_DATA), ck.CKA_TOKEN: ck.Bool(true), ck.CKA_PRIVATE: ck.Bool(false)}}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if got := findAll(m, sh, id(n/3)); got != 1 {
				b.Fatalf("found %d", got)
			}
		}
	})
}
