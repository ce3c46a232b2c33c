package hashint

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestAppendBits2Int checks AppendBits2Int against its definition in
// math/big (the leftmost bits bits of b, as an integer) for inputs shorter
// than, as long as and longer than byteLen, order sizes that are and are
// not whole bytes, and a dst that already holds bytes.
func TestAppendBits2Int(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, bits := range []int{160, 224, 231, 256, 384, 521} {
		byteLen := (bits + 7) / 8
		for _, n := range []int{0, 1, byteLen - 1, byteLen, byteLen + 1, 64, 80} {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			v := new(big.Int).SetBytes(b)
			if excess := 8*n - bits; excess > 0 {
				v.Rsh(v, uint(excess))
			}
			want := v.FillBytes(make([]byte, byteLen))
			got := AppendBits2Int([]byte{0xaa}, b, byteLen, bits)
			if got[0] != 0xaa || !bytes.Equal(got[1:], want) {
				t.Fatalf("bits %d, len %d: %x, want aa%x", bits, n, got, want)
			}
		}
	}
}
