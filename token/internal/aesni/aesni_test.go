package aesni

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/modexp-token/modexp-token/token/symtest"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// sp38a are the CBC examples of NIST SP 800-38A, Appendix F.2 (the
// encryption direction): the same four plaintext blocks and IV under
// AES-128, -192 and -256.
var (
	sp38aIV = mustHex("000102030405060708090a0b0c0d0e0f")
	sp38aPT = mustHex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51" +
		"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
	sp38a = []struct{ name, key, ct string }{
		{"F.2.1 CBC-AES128", "2b7e151628aed2a6abf7158809cf4f3c",
			"7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7"},
		{"F.2.3 CBC-AES192", "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
			"4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd"},
		{"F.2.5 CBC-AES256", "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
			"f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b"},
	}
)

// keyKinds are the Keys a test runs on: the kernel where this machine has
// it, and crypto/aes (the fallback) everywhere.
func keyKinds(t *testing.T, key []byte) map[string]*Key {
	t.Helper()
	k, err := NewKey(key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]*Key{"crypto/aes": {rounds: k.rounds, block: b}}
	if k.Accelerated() {
		kinds["kernel"] = k
	}
	return kinds
}

// refCBC is crypto/cipher's CBC encryption of src from iv.
func refCBC(key, iv, src []byte) []byte {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	out := make([]byte, len(src))
	cipher.NewCBCEncrypter(b, iv).CryptBlocks(out, src)
	return out
}

func TestSP80038A(t *testing.T) {
	for _, tc := range sp38a {
		for kind, k := range keyKinds(t, mustHex(tc.key)) {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				iv := [16]byte(sp38aIV)
				dst := make([]byte, len(sp38aPT))
				k.CBCEncrypt(&iv, dst, sp38aPT)
				if got := hex.EncodeToString(dst); got != tc.ct {
					t.Fatalf("got %s, want %s", got, tc.ct)
				}
				if !bytes.Equal(iv[:], dst[len(dst)-16:]) {
					t.Error("the chaining value is not the last block")
				}
				var x [16]byte = [16]byte(sp38aIV)
				k.CBCMAC(&x, sp38aPT)
				if !bytes.Equal(x[:], dst[len(dst)-16:]) {
					t.Errorf("CBCMAC %x, want the last block %x", x, dst[len(dst)-16:])
				}
			})
		}
	}
}

// TestWycheproofCBC encrypts the valid cases of Wycheproof's
// aes_cbc_pkcs5_test.json (PKCS#7-padded here) and compares the
// ciphertext.
func TestWycheproofCBC(t *testing.T) {
	vs, err := symtest.Load(symtest.CBC)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vs {
		if !v.Valid {
			continue
		}
		p := 16 - len(v.Msg)%16
		pt := append(append([]byte(nil), v.Msg...), bytes.Repeat([]byte{byte(p)}, p)...)
		for kind, k := range keyKinds(t, v.Key) {
			iv := [16]byte(v.IV)
			dst := make([]byte, len(pt))
			k.CBCEncrypt(&iv, dst, pt)
			if !bytes.Equal(dst, v.CT) {
				t.Errorf("tcId %d (%s): got %x, want %x", v.TcID, kind, dst, v.CT)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no valid case in the file")
	}
}

// TestAgainstCryptoCipher compares CBC encryption, CBC-MAC and Encrypt
// with crypto/cipher on random keys and messages of 0 to 40 blocks, in one
// call and in parts, out of place and in place.
func TestAgainstCryptoCipher(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{16, 24, 32} {
		key := make([]byte, size)
		for trial := range 8 {
			fill(r, key)
			for kind, k := range keyKinds(t, key) {
				t.Run(fmt.Sprintf("AES-%d/%s/%d", 8*size, kind, trial), func(t *testing.T) {
					for blocks := range 41 {
						src := make([]byte, 16*blocks)
						fill(r, src)
						var iv [16]byte
						fill(r, iv[:])
						want := refCBC(key, iv[:], src)
						// One call.
						got := make([]byte, len(src))
						c := iv
						k.CBCEncrypt(&c, got, src)
						if !bytes.Equal(got, want) {
							t.Fatalf("%d blocks: got %x, want %x", blocks, got, want)
						}
						// In place, in two parts through the BlockMode.
						inPlace := append([]byte(nil), src...)
						m := NewCBCEncrypter(k, iv[:])
						cut := 16 * r.IntN(blocks+1)
						m.CryptBlocks(inPlace[:cut], inPlace[:cut])
						m.CryptBlocks(inPlace[cut:], inPlace[cut:])
						if !bytes.Equal(inPlace, want) {
							t.Fatalf("%d blocks in place, cut at %d: got %x, want %x", blocks, cut, inPlace, want)
						}
						// CBC-MAC: the last ciphertext block.
						x := iv
						k.CBCMAC(&x, src)
						last := iv[:]
						if blocks > 0 {
							last = want[len(want)-16:]
						}
						if !bytes.Equal(x[:], last) {
							t.Fatalf("%d blocks: CBCMAC %x, want %x", blocks, x, last)
						}
					}
					var one, ref [16]byte
					fill(r, one[:])
					b, _ := aes.NewCipher(key)
					b.Encrypt(ref[:], one[:])
					k.Encrypt(one[:], one[:])
					if one != ref {
						t.Fatalf("Encrypt: got %x, want %x", one, ref)
					}
				})
			}
		}
	}
}

func fill(r *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// TestEmulatedKernels runs the generated kernels on the emulator (any
// machine), with the round keys expanded by expandKey over the emulated
// subWord, against crypto/cipher.
func TestEmulatedKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{16, 24, 32} {
		rounds := size/4 + 6
		enc := map[int]func(*aesMachine, int, int, int, int, int){10: cbcEnc10Emu, 12: cbcEnc12Emu, 14: cbcEnc14Emu}[rounds]
		mac := map[int]func(*aesMachine, int, int, int, int){10: cbcMAC10Emu, 12: cbcMAC12Emu, 14: cbcMAC14Emu}[rounds]
		for _, blocks := range []int{0, 1, 2, 5, 9} {
			key := make([]byte, size)
			fill(r, key)
			src := make([]byte, 16*blocks)
			fill(r, src)
			var iv [16]byte
			fill(r, iv[:])
			want := refCBC(key, iv[:], src)

			// Memory: round keys at 0, the chaining value at 240, src at 256, dst after it.
			m := &aesMachine{mem: make([]byte, 256+2*len(src))}
			expandKey(m.mem[:240], key, func(w uint32) uint32 { return subWordEmu(&aesMachine{}, w) })
			copy(m.mem[240:], iv[:])
			copy(m.mem[256:], src)
			enc(m, 0, 240, 256+len(src), 256, blocks)
			if got := m.mem[256+len(src):]; !bytes.Equal(got, want) {
				t.Fatalf("AES-%d, %d blocks: cbcEnc emulated %x, want %x", 8*size, blocks, got, want)
			}
			last := iv[:]
			if blocks > 0 {
				last = want[len(want)-16:]
			}
			if !bytes.Equal(m.mem[240:256], last) {
				t.Fatalf("AES-%d, %d blocks: chaining value %x, want %x", 8*size, blocks, m.mem[240:256], last)
			}
			copy(m.mem[240:], iv[:])
			mac(m, 0, 240, 256, blocks)
			if !bytes.Equal(m.mem[240:256], last) {
				t.Fatalf("AES-%d, %d blocks: cbcMAC emulated %x, want %x", 8*size, blocks, m.mem[240:256], last)
			}
			for i, v := range m.x {
				if v != [16]byte{} {
					t.Fatalf("X%d not cleared: %x", i, v)
				}
			}
		}
	}
}

// TestSubWord checks the emulated subWord against the S-box of FIPS 197
// (Figure 7's first row and the rest by the machine's own table, which
// TestEmulatedKernels vouches for against crypto/aes), and the assembly
// against the emulation on every byte in every position.
func TestSubWord(t *testing.T) {
	row0 := mustHex("637c777bf26b6fc53001672bfed7ab76")
	for i, want := range row0 {
		if got := subWordEmu(&aesMachine{}, uint32(i)); got != uint32(want)|0x63636363&^0xff {
			t.Fatalf("subWordEmu(%#x) = %#x", i, got)
		}
	}
	if !haveKernel {
		t.Skip("no AES-NI kernel here: the assembly is not run")
	}
	for b := range 256 {
		for shift := 0; shift < 32; shift += 8 {
			w := uint32(b)<<shift | 0x01020304&^(0xff<<shift)
			if got, want := subWord(w), subWordEmu(&aesMachine{}, w); got != want {
				t.Fatalf("subWord(%#x) = %#x, emulated %#x", w, got, want)
			}
		}
	}
}

// TestNewKeySizes refuses the sizes AES has not.
func TestNewKeySizes(t *testing.T) {
	for _, n := range []int{0, 8, 15, 17, 31, 33, 64} {
		if _, err := NewKey(make([]byte, n)); err == nil {
			t.Errorf("a %d-byte key was taken", n)
		}
	}
}

func TestPanics(t *testing.T) {
	k, err := NewKey(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	var iv [16]byte
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"partial block", func() { k.CBCEncrypt(&iv, buf, buf[:17]) }},
		{"short dst", func() { k.CBCEncrypt(&iv, buf[:16], buf[16:48]) }},
		{"inexact overlap", func() { k.CBCEncrypt(&iv, buf[1:33], buf[:32]) }},
		{"partial MAC block", func() { k.CBCMAC(&iv, buf[:15]) }},
		{"short Encrypt", func() { k.Encrypt(buf[:15], buf) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// perCPU runs f b.N times on a locked thread and reports MB per
// CPU-second of that thread beside the wall figure (the machine's other
// load leaves it alone).
func perCPU(b *testing.B, size int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(size))
	t0 := threadCPU()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(b.N)*float64(size)/1e6/(threadCPU()-t0).Seconds(), "MB/CPU-s")
}

func BenchmarkCBCEncrypt(b *testing.B) {
	key := make([]byte, 32)
	for _, size := range []int{1 << 10, 64 << 10} {
		src := make([]byte, size)
		dst := make([]byte, size)
		iv := make([]byte, 16)
		b.Run(fmt.Sprintf("crypto-cipher/%dK", size>>10), func(b *testing.B) {
			blk, _ := aes.NewCipher(key)
			m := cipher.NewCBCEncrypter(blk, iv)
			perCPU(b, size, func() { m.CryptBlocks(dst, src) })
		})
		b.Run(fmt.Sprintf("aesni/%dK", size>>10), func(b *testing.B) {
			k, _ := NewKey(key)
			m := NewCBCEncrypter(k, iv)
			perCPU(b, size, func() { m.CryptBlocks(dst, src) })
		})
		b.Run(fmt.Sprintf("aesni-MAC/%dK", size>>10), func(b *testing.B) {
			k, _ := NewKey(key)
			var x [16]byte
			perCPU(b, size, func() { k.CBCMAC(&x, src) })
		})
	}
}

// BenchmarkNewKey is the key setup an operation pays at Init: NewKey
// against crypto/aes.NewCipher.
func BenchmarkNewKey(b *testing.B) {
	key := make([]byte, 32)
	b.Run("crypto-aes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := aes.NewCipher(key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("aesni", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := NewKey(key); err != nil {
				b.Fatal(err)
			}
		}
	})
}
