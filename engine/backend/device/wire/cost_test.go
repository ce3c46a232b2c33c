package wire

import (
	"bytes"
	"testing"
	"time"
)

func TestCostModelEncoding(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want CostModel
		ok   bool
	}{
		{"three", CostModel{FixedNS: 20000, ModExpPS: 4000, ECPS: 5000}.Encode(), CostModel{20000, 4000, 5000}, true},
		{"zero", make([]byte, 24), CostModel{}, true},
		{"extra coefficient ignored", append(CostModel{1, 2, 3}.Encode(), 0, 0, 0, 0, 0, 0, 0, 9), CostModel{1, 2, 3}, true},
		{"short", make([]byte, 16), CostModel{}, false},
		{"not a multiple of 8", make([]byte, 25), CostModel{}, false},
		{"fixed too large", CostModel{FixedNS: uint64(11 * time.Minute)}.Encode(), CostModel{}, false},
		{"coefficient too large", CostModel{ModExpPS: 1 << 40}.Encode(), CostModel{}, false},
	}
	for _, tc := range cases {
		got, err := ParseCostModel(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v, ok %v", tc.name, got, err, tc.want, tc.ok)
		}
		if tc.ok && len(tc.in) == 24 && !bytes.Equal(got.Encode(), tc.in) {
			t.Errorf("%s: not canonical", tc.name)
		}
	}
}

func TestCostModelPredictions(t *testing.T) {
	m := CostModel{FixedNS: 10_000, ModExpPS: 4000, ECPS: 5000}
	cases := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		// 10 µs + 4 ns × 1024 bits × 16² words.
		{"modexp 1024/1024", m.ModExp(1024, 1024), 10*time.Microsecond + 4*1024*256},
		{"modexp 1025 bits takes 17 words", m.ModExp(1025, 1024), 10*time.Microsecond + 4*1024*289},
		{"public exponent", m.ModExp(2048, 17), 10*time.Microsecond + 4*17*1024},
		// Two 1024-bit halves.
		{"crt 2048", m.ModExpCRT(2048), 10*time.Microsecond + 2*4*1024*256},
		{"ec 256", m.ECMul(256), 10*time.Microsecond + 5*256*16},
		{"unknown model", CostModel{}.ModExp(2048, 2048), 0},
		{"unknown ec", CostModel{ModExpPS: 1}.ECMul(256), 0},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestFitModExp(t *testing.T) {
	u1, u2 := Units(512, 512), Units(1024, 1024)
	line := func(fixed, ps float64, u float64) time.Duration { return time.Duration(fixed + ps*u/1000) }
	cases := []struct {
		name          string
		t1, t2        time.Duration
		u2            float64
		fixed, ps     uint64
		tolFix, tolPS uint64
	}{
		{"exact line", line(30000, 3500, u1), line(30000, 3500, u2), u2, 30000, 3500, 1, 1},
		{"negative intercept clamps to 0", line(0, 3500, u1) / 2, line(0, 3500, u2), u2, 0, 3750, 0, 200},
		{"one point", line(0, 2000, u1), 0, 0, 0, 2000, 0, 1},
		{"second point faster than the first", line(0, 3000, u1), line(0, 3000, u1) / 2, u2, 0, 187, 0, 2},
	}
	for _, tc := range cases {
		fixed, ps := FitModExp(u1, tc.t1, tc.u2, tc.t2)
		if diff(fixed, tc.fixed) > tc.tolFix || diff(ps, tc.ps) > tc.tolPS {
			t.Errorf("%s: fixed %d ps %d, want %d, %d", tc.name, fixed, ps, tc.fixed, tc.ps)
		}
	}
}

func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

func FuzzParseCostModel(f *testing.F) {
	f.Add(CostModel{1, 2, 3}.Encode())
	f.Add(make([]byte, 32))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCostModel(b)
		if err != nil {
			return
		}
		// Predictions of an accepted model are finite and not negative.
		for _, d := range []time.Duration{c.ModExp(8192, 8192), c.ModExpCRT(8192), c.ECMul(521)} {
			if d < 0 {
				t.Fatalf("%+v: negative prediction %v", c, d)
			}
		}
		if c2, err := ParseCostModel(c.Encode()); err != nil || c2 != c {
			t.Fatalf("round trip %+v: %+v, %v", c, c2, err)
		}
	})
}
