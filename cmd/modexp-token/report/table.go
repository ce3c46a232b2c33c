// Package report reproduces the chip simulators' published figures (a table:
// every published figure beside its simulation) and draws the timing chart
// of docs/ENGINES.md (docs/chip-timing.svg). It is a tool for the docs and
// the CLI (modexp-token engine table|chart), not part of the module.
package report

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"fmt"
	"io"
	"math"
	"math/big"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/arith/randop"
	"github.com/modexp-token/modexp-token/engine/backend/chip"
)

// Row is one published figure and what the simulator gives for it.
type Row struct {
	Profile   string  // "orup561", "pukcc", "cryptech"
	Case      string  // what was measured, and the source
	Published float64 // the published number, in Unit
	Unit      string  // "ms", "s", "kbit/s", "Mcycles", ...
	Simulated float64 // the simulator's number, in Unit
	Criterion string  // how Published and Simulated are compared
	OK        bool    // the criterion holds and every result was right
	Note      string  // why a row failed, if it did
}

// DeviationPct is (Simulated − Published)/Published in percent (0 when
// both are 0).
func (r Row) DeviationPct() float64 {
	if r.Published == 0 {
		if r.Simulated == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return (r.Simulated - r.Published) / r.Published * 100
}

// criterion compares a simulated value with a published one.
type criterion struct {
	text string
	ok   func(pub, sim float64) bool
}

func withinAbs(tol float64, text string) criterion {
	return criterion{text, func(p, s float64) bool { return math.Abs(s-p) <= tol*(1+1e-9) }}
}

func roundsTo(dec int) criterion {
	f := math.Pow(10, float64(dec))
	return criterion{fmt.Sprintf("rounds to it (%d decimals)", dec), func(p, s float64) bool { return math.Round(s*f) == math.Round(p*f) }}
}

var (
	critAbove   = criterion{"more than", func(p, s float64) bool { return s > p }}
	critAtLeast = criterion{"at least", func(p, s float64) bool { return s >= p }}
	critEqual   = criterion{"equal", func(p, s float64) bool { return s == p }}
	critPct3    = criterion{"within 3%", func(p, s float64) bool { return math.Abs(s-p) <= 0.03*math.Abs(p) }}
	// critSecond: the post's timer printed whole elapsed seconds k (the
	// fraction was the start time's microseconds), so the true time lies
	// in (k−1, k+1) [research §C.1].
	critSecond = criterion{"in (⌊pub⌋−1, ⌊pub⌋+1) s", func(p, s float64) bool {
		k := math.Floor(p)
		return s > k-1 && s < k+1
	}}
)

// table accumulates rows.
type table struct {
	ctx  context.Context
	rows []Row
}

func (t *table) add(profile, what string, pub float64, unit string, sim float64, c criterion, note string) {
	ok := c.ok(pub, sim) && note == ""
	t.rows = append(t.rows, Row{Profile: profile, Case: what, Published: pub, Unit: unit, Simulated: sim, Criterion: c.text, OK: ok, Note: note})
}

// Reproduce runs the simulations behind every published figure of profile
// ("orup561", "pukcc", "cryptech", or "" / "all" for every profile), on
// real operands whose results are checked against math/big, and returns
// one row per figure.
func Reproduce(ctx context.Context, profile string) ([]Row, error) {
	t := &table{ctx: ctx}
	steps := map[string]func(*table) error{"orup561": (*table).orup, "pukcc": (*table).pukcc, "cryptech": (*table).cryptech}
	names := chip.Profiles()
	if profile != "" && profile != "all" {
		if steps[profile] == nil {
			return nil, fmt.Errorf("chip: table: unknown profile %q (want %s or all)", profile, strings.Join(names, ", "))
		}
		names = []string{profile}
	}
	for _, n := range []string{"orup561", "pukcc", "cryptech"} { // the order of the docs
		for _, want := range names {
			if want == n {
				if err := steps[n](t); err != nil {
					return nil, fmt.Errorf("chip: table: %s: %w", n, err)
				}
			}
		}
	}
	return t.rows, nil
}

// WriteTable writes the reproduction table of profile (see [Reproduce]) in
// format "text" (aligned columns) or "tsv" (a header line, then columns
// profile, case, published, unit, simulated, deviation_pct, ok). The last
// line is "N of M published figures reproduced".
func WriteTable(w io.Writer, profile, format string) error {
	if format != "text" && format != "tsv" {
		return fmt.Errorf("chip: table: unknown format %q (want text or tsv)", format)
	}
	rows, err := Reproduce(context.Background(), profile)
	if err != nil {
		return err
	}
	return FormatTable(w, rows, format)
}

// FormatTable writes rows as WriteTable does.
func FormatTable(w io.Writer, rows []Row, format string) error {
	good := 0
	for _, r := range rows {
		if r.OK {
			good++
		}
	}
	var err error
	switch format {
	case "tsv":
		var b strings.Builder
		b.WriteString("profile\tcase\tpublished\tunit\tsimulated\tdeviation_pct\tok\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\t%t\n", r.Profile, clean(r.Case), num(r.Published), r.Unit, num(sig(r.Simulated, 6)), dev(r), r.OK)
		}
		fmt.Fprintf(&b, "%d of %d published figures reproduced\n", good, len(rows))
		_, err = io.WriteString(w, b.String())
	case "text":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PROFILE\tCASE\tPUBLISHED\tUNIT\tSIMULATED\tDEV %\tCRITERION\tOK")
		for _, r := range rows {
			ok := "yes"
			if !r.OK {
				ok = "NO"
				if r.Note != "" {
					ok += " (" + r.Note + ")"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Profile, r.Case, num(r.Published), r.Unit, num(sig(r.Simulated, 6)), dev(r), r.Criterion, ok)
		}
		if err = tw.Flush(); err == nil {
			_, err = fmt.Fprintf(w, "%d of %d published figures reproduced\n", good, len(rows))
		}
	default:
		return fmt.Errorf("chip: table: unknown format %q (want text or tsv)", format)
	}
	if err != nil {
		return fmt.Errorf("chip: table: write: %w", err)
	}
	return nil
}

func clean(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// sig rounds v to n significant digits.
func sig(v float64, n int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	return f
}

func dev(r Row) string {
	d := r.DeviationPct()
	if math.IsInf(d, 0) {
		return "inf"
	}
	return strconv.FormatFloat(d, 'f', 2, 64)
}

// run performs one exponentiation and checks it against math/big; note is
// non-empty if the result was wrong.
func run(ctx context.Context, e engine.Engine, m, x, d *big.Int, public bool) (engine.Cost, string, error) {
	mod, err := e.NewModulus(m.Bytes())
	if err != nil {
		return engine.Cost{}, "", err
	}
	got, cost, err := engine.ExpMode(ctx, e, mod, x.Bytes(), d.Bytes(), public)
	if err != nil {
		return engine.Cost{}, "", err
	}
	if !bytes.Equal(got, fixedBytes(new(big.Int).Exp(x, d, m), len(m.Bytes()))) {
		return cost, "wrong result", nil
	}
	return cost, "", nil
}

// fixedBytes returns x big-endian in exactly size bytes (x fits).
func fixedBytes(x *big.Int, size int) []byte { return x.FillBytes(make([]byte, size)) }

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }

// ---- orup561 (thesis §4.4.5, §4.5; research §A) ----

func (t *table) orup() error {
	r := mrand.New(mrand.NewPCG(561, 1995))
	open := func(spec string) (*chip.Orup, error) {
		e, err := chip.New(spec)
		if err != nil {
			return nil, err
		}
		return e.(*chip.Orup), nil
	}
	operands := func(n int) (m, x, d *big.Int) {
		m = randop.Odd(r, n)
		return m, new(big.Int).Mod(randop.Bits(r, n), m), randop.Bits(r, n)
	}
	// 561 bits at 25 MHz, ni 115, nw 7 (the measured setting).
	e, err := open("orup561,f=25e6,nw=7,ni=115")
	if err != nil {
		return err
	}
	m, x, d := operands(561)
	c, note, err := run(t.ctx, e, m, x, d, false)
	if err != nil {
		return err
	}
	t.add("orup561", "561-bit exp at 25 MHz, ni 115, nw 7: measured time (§4.4.5)", 5.47, "ms", ms(c.Device), withinAbs(0.01, "±1 in the last digit"), note)
	t.add("orup561", "same: computing time, Table 4.6", 5.5, "ms", ms(c.Device), roundsTo(1), note)
	t.add("orup561", "same: throughput, \"about 102 Kbit/s\"", 102, "kbit/s", 561/c.Device.Seconds()/1e3, roundsTo(0), note)
	t.add("orup561", "same: busy power, Table 4.5 (calibration point)", 2.5, "W", c.Energy/c.Device.Seconds(), roundsTo(1), note)

	// The 512-bit design: ni = 105 (⌈512/5⌉+2).
	m, x, d = operands(512)
	e512, err := open("orup561,f=25e6,nw=7")
	if err != nil {
		return err
	}
	c, note, err = run(t.ctx, e512, m, x, d, false)
	if err != nil {
		return err
	}
	t.add("orup561", "512-bit design (ni 105, nw 7) at 25 MHz: time (§4.5)", 4.59, "ms", ms(c.Device), roundsTo(2), note)
	t.add("orup561", "same: throughput, \"more than 111 Kbit/s\"", 111, "kbit/s", 512/c.Device.Seconds()/1e3, critAbove, note)

	// 16 MHz gives at least 64 kbit/s (§4.5), and is the lowest whole MHz that does.
	e16, err := open("orup561,f=16e6")
	if err != nil {
		return err
	}
	m, x, d = operands(561)
	c, note, err = run(t.ctx, e16, m, x, d, false)
	if err != nil {
		return err
	}
	t.add("orup561", "561-bit at 16 MHz: throughput, \"greater than 64 Kbit/s\"", 64, "kbit/s", 561/c.Device.Seconds()/1e3, critAtLeast, note)
	lowest := 0.0
	for f := 10; f <= 25 && lowest == 0; f++ {
		ef, err := open(fmt.Sprintf("orup561,f=%de6", f))
		if err != nil {
			return err
		}
		c, note2, err := run(t.ctx, ef, m, x, d, false)
		if err != nil {
			return err
		}
		if note2 == "" && 561/c.Device.Seconds() >= 64e3 {
			lowest = float64(f)
		}
	}
	t.add("orup561", "lowest whole-MHz clock for 64 kbit/s (§4.5)", 16, "MHz", lowest, critEqual, "")

	// Physical limits: the highest working clock (0.1 MHz grid) per supply,
	// and the fewest wait states, found by running the simulated chip.
	m, x, d = operands(561)
	for _, v := range []struct {
		vdd, fmax float64
		src       string
	}{{4.5, 24.0, "Fig. 4.16"}, {5.0, 27, "Table 4.4, chip 66"}, {5.5, 29.5, "Fig. 4.16"}} {
		lo, hi := 100, 400 // tenths of MHz: lo works, hi fails
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			ef, err := open(fmt.Sprintf("orup561,vdd=%g,nw=7,f=%de5,seed=1", v.vdd, mid))
			if err != nil {
				return err
			}
			if _, bad, err := run(t.ctx, ef, m, x, d, false); err != nil {
				return err
			} else if bad == "" {
				lo = mid
			} else {
				hi = mid
			}
		}
		t.add("orup561", fmt.Sprintf("chip 66 max clock at %.1f V, %s (calibration point)", v.vdd, v.src), v.fmax, "MHz", float64(lo)/10, withinAbs(0.05, "±0.05 MHz"), "")
	}
	for _, v := range []struct {
		vdd, f float64
		nw     int
		what   string
	}{{5.0, 27e6, 6, "at 5.0 V and max clock: nw ≥ 6 (§4.4.5)"}, {4.5, 24e6, 7, "below 5.0 V: nw ≥ 7 (§4.4.5)"}} {
		min := -1
		for nw := 0; nw <= 10 && min < 0; nw++ {
			ef, err := open(fmt.Sprintf("orup561,vdd=%g,f=%g,nw=%d,seed=1", v.vdd, v.f, nw))
			if err != nil {
				return err
			}
			if _, bad, err := run(t.ctx, ef, m, x, d, false); err != nil {
				return err
			} else if bad == "" {
				min = nw
			}
		}
		t.add("orup561", "fewest wait states "+v.what+" (calibration point)", float64(v.nw), "wait states", float64(min), critEqual, "")
	}
	return nil
}

// ---- pukcc (datasheet §43.3.8; research §B) ----

func (t *table) pukcc() error {
	r := mrand.New(mrand.NewPCG(120, 6))
	for _, v := range []struct {
		bits         int
		plain, crt   float64
		wPlain, wCRT int
		public       float64
	}{{1024, 3.05, 1.04, 4, 4, 0.07}, {2048, 21.9, 6.19, 4, 4, 0.24}, {4096, 208, 45.5, 1, 3, 0.92}} {
		k, err := loadKey(v.bits)
		if err != nil {
			return err
		}
		x := new(big.Int).Mod(randop.Bits(r, v.bits), k.N)
		e, err := chip.New(fmt.Sprintf("pukcc,w=%d", v.wPlain))
		if err != nil {
			return err
		}
		c, note, err := run(t.ctx, e, k.N, x, k.D, false)
		if err != nil {
			return err
		}
		t.add("pukcc", fmt.Sprintf("RSA-%d private, no CRT, Regular, W=%d", v.bits, v.wPlain), v.plain, "Mcycles", float64(c.Cycles)/1e6, critPct3, note)

		ec, err := chip.New(fmt.Sprintf("pukcc,w=%d", v.wCRT))
		if err != nil {
			return err
		}
		ce, ok := engine.As[engine.CRTEngine](ec)
		if !ok {
			return fmt.Errorf("%s: no native CRT", ec.Info().Name)
		}
		got, c, err := ce.ExpCRT(t.ctx, &engine.CRTKey{P: k.P.Bytes(), Q: k.Q.Bytes(), DP: k.Dp.Bytes(), DQ: k.Dq.Bytes(), QInv: k.Qinv.Bytes()}, x.Bytes())
		if err != nil {
			return err
		}
		note = ""
		if !bytes.Equal(got, fixedBytes(new(big.Int).Exp(x, k.D, k.N), len(k.N.Bytes()))) {
			note = "wrong result"
		}
		t.add("pukcc", fmt.Sprintf("RSA-%d private, CRT, Regular, W=%d", v.bits, v.wCRT), v.crt, "Mcycles", float64(c.Cycles)/1e6, critPct3, note)

		for _, pe := range []int64{3, 65537} {
			c, note, err := run(t.ctx, e, k.N, x, big.NewInt(pe), true)
			if err != nil {
				return err
			}
			t.add("pukcc", fmt.Sprintf("RSA-%d public, Fast, W=1, e=%d", v.bits, pe), v.public, "Mcycles", float64(c.Cycles)/1e6, critPct3, note)
		}
	}
	e, err := chip.New("pukcc")
	if err != nil {
		return err
	}
	p := e.(*chip.PUKCC)
	for _, v := range []struct {
		curve       elliptic.Curve
		gen, verify float64
		wv          string
	}{{elliptic.P256(), 2.72, 1.78, "(6,6)"}, {elliptic.P384(), 6.28, 3.93, "(5,5)"}, {elliptic.P521(), 13.4, 8.4, "(4,5)"}} {
		name := v.curve.Params().Name
		n := v.curve.Params().N
		d := new(big.Int).Mod(randop.Bits(r, n.BitLen()), n)
		priv, err := ecdsa.ParseRawPrivateKey(v.curve, fixedBytes(d, (n.BitLen()+7)/8))
		if err != nil {
			return err
		}
		var hash []byte
		switch name {
		case "P-256":
			h := sha256.Sum256([]byte("ModExp Token"))
			hash = h[:]
		case "P-384":
			h := sha512.Sum384([]byte("ModExp Token"))
			hash = h[:]
		default:
			h := sha512.Sum512([]byte("ModExp Token"))
			hash = h[:]
		}
		k := new(big.Int).Mod(randop.Bits(r, n.BitLen()), n)
		rr, ss, c, err := p.SignECDSA(t.ctx, name, d.Bytes(), hash, k.Bytes())
		if err != nil {
			return err
		}
		note := ""
		if !ecdsa.VerifyASN1(&priv.PublicKey, hash, asn1Sig(rr, ss)) {
			note = "signature does not verify"
		}
		t.add("pukcc", fmt.Sprintf("ECDSA %s GenerateFast", name), v.gen, "Mcycles", float64(c.Cycles)/1e6, critPct3, note)

		sig, err := ecdsa.SignASN1(rand.Reader, priv, hash)
		if err != nil {
			return err
		}
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			return err
		}
		pub, err := priv.PublicKey.Bytes()
		if err != nil {
			return err
		}
		size := (v.curve.Params().BitSize + 7) / 8
		c, err = p.VerifyECDSA(t.ctx, name, pub[1:1+size], pub[1+size:], hash, rs.R.Bytes(), rs.S.Bytes())
		note = ""
		if err != nil {
			note = "valid signature rejected"
		}
		t.add("pukcc", fmt.Sprintf("ECDSA %s QuickVerify, W=%s, scalar in classical RAM", name, v.wv), v.verify, "Mcycles", float64(c.Cycles)/1e6, critPct3, note)
	}
	return nil
}

func asn1Sig(r, s []byte) []byte {
	b, _ := asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(r), new(big.Int).SetBytes(s)})
	return b
}

// ---- cryptech (the post; research §C) ----

func (t *table) cryptech() error {
	r := mrand.New(mrand.NewPCG(2015, 6))
	e, err := chip.New("cryptech")
	if err != nil {
		return err
	}
	faulty, err := chip.New("cryptech,fault=zero-above:1024")
	if err != nil {
		return err
	}
	for _, v := range []struct {
		bits     int
		enc, dec float64
	}{{1024, 5.837198, 5.489668}, {2048, 35.920986, 35.583835}, {4096, 267.222054, 268.625344}} {
		k, err := loadKey(v.bits)
		if err != nil {
			return err
		}
		msg := new(big.Int).Mod(randop.Bits(r, v.bits), k.N)
		c, note, err := run(t.ctx, e, k.N, msg, big.NewInt(int64(k.E)), true)
		if err != nil {
			return err
		}
		t.add("cryptech", fmt.Sprintf("2015 core, RSA-%d ModExp encrypt (e=65537, padded)", v.bits), v.enc, "s", c.Device.Seconds(), critSecond, note)
		c, note, err = run(t.ctx, e, k.N, msg, k.D, false)
		if err != nil {
			return err
		}
		t.add("cryptech", fmt.Sprintf("2015 core, RSA-%d ModExp decrypt", v.bits), v.dec, "s", c.Device.Seconds(), critSecond, note)

		// The new core of the post: right at 1024 bits, all zeros above.
		mod, err := faulty.NewModulus(k.N.Bytes())
		if err != nil {
			return err
		}
		got, _, err := faulty.Exp(t.ctx, mod, msg.Bytes(), k.D.Bytes())
		if err != nil {
			return err
		}
		if v.bits <= 1024 {
			right := 0.0
			if bytes.Equal(got, fixedBytes(new(big.Int).Exp(msg, k.D, k.N), len(k.N.Bytes()))) {
				right = 1
			}
			t.add("cryptech", "new core (zero-above:1024), RSA-1024 decrypt: correct", 1, "1=correct", right, critEqual, "")
			continue
		}
		nonzero := 0.0
		for _, b := range got {
			if b != 0 {
				nonzero++
			}
		}
		t.add("cryptech", fmt.Sprintf("new core (zero-above:1024), RSA-%d decrypt: all-zero result", v.bits), 0, "nonzero bytes", nonzero, critEqual, "")
	}
	return nil
}
