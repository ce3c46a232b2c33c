package token

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/modexp-token/modexp-token/token/ck"
)

// processCPU is the CPU time of the whole process.
func processCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// BenchmarkSymmetric64K is C_EncryptInit + C_Encrypt of 64 KiB per
// mechanism through the Module, in parallel (each goroutine its own
// session, one key): run with -cpu 1,2 to see whether sessions of
// different threads scale; MB/CPU-s is per CPU-second of the process.
// The output goes to the caller's buffer (Out.Buf), as from C. Every GCM
// encryption takes a fresh IV (the Module refuses a repeated one).
func BenchmarkSymmetric64K(b *testing.B) {
	m, slot := benchModule(b)
	sh0, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION)
	must2(b, err)
	key, err := secretKeyOf(m, sh0, ck.CKK_AES, make([]byte, 32))
	must2(b, err)
	var ivCount atomic.Uint64
	for _, c := range []struct {
		name  string
		mech  func(iv []byte) *Mechanism
		sign  bool
		parts bool // four 16 KiB Update calls and Final
	}{
		{"AES-256-GCM", func(iv []byte) *Mechanism { return gcmMech(iv[:12], nil, 128) }, false, false},
		{"AES-256-CBC", func(iv []byte) *Mechanism { return &Mechanism{Type: ck.CKM_AES_CBC, Param: iv} }, false, false},
		{"AES-256-CTR", func(iv []byte) *Mechanism { return ctrMech(128, iv) }, false, false},
		{"AES-256-CMAC", func([]byte) *Mechanism { return &Mechanism{Type: ck.CKM_AES_CMAC} }, true, false},
		{"AES-256-CBC-parts", func(iv []byte) *Mechanism { return &Mechanism{Type: ck.CKM_AES_CBC, Param: iv} }, false, true},
		{"AES-256-CTR-parts", func(iv []byte) *Mechanism { return ctrMech(128, iv) }, false, true},
		{"AES-256-CMAC-parts", func([]byte) *Mechanism { return &Mechanism{Type: ck.CKM_AES_CMAC} }, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(64 << 10)
			b.ReportAllocs()
			cpu0 := processCPU()
			defer func() {
				// Per CPU-second of the process, as make bench reports
				// (a figure the machine's other load leaves alone).
				b.ReportMetric(float64(b.N)*(64<<10)/1e6/(processCPU()-cpu0).Seconds(), "MB/CPU-s")
			}()
			b.RunParallel(func(pb *testing.PB) {
				sh, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION)
				must2(b, err)
				data := make([]byte, 64<<10)
				out := make([]byte, len(data)+32) // the caller's buffer, as the C layer hands it over
				iv := make([]byte, 16)
				for pb.Next() {
					binary.BigEndian.PutUint64(iv[4:], ivCount.Add(1))
					switch {
					case c.sign && c.parts:
						must2(b, m.SignInit(sh, c.mech(iv), key))
						for p := 0; p < len(data); p += 16 << 10 {
							must2(b, m.SignUpdate(sh, data[p:p+16<<10]))
						}
						_, _, err = m.SignFinal(sh, Out{Cap: 64})
					case c.parts:
						must2(b, m.EncryptInit(sh, c.mech(iv), key))
						for p := 0; p < len(data); p += 16 << 10 {
							_, _, err = m.EncryptUpdate(sh, data[p:p+16<<10], Out{Cap: len(out) - p, Buf: out[p:]})
							must2(b, err)
						}
						_, _, err = m.EncryptFinal(sh, Out{Cap: 32, Buf: out[len(data):]})
					case c.sign:
						must2(b, m.SignInit(sh, c.mech(iv), key))
						_, _, err = m.Sign(sh, data, Out{Cap: 64})
					default:
						must2(b, m.EncryptInit(sh, c.mech(iv), key))
						_, _, err = m.Encrypt(sh, data, Out{Cap: len(out), Buf: out})
					}
					must2(b, err)
				}
			})
		})
	}
}
