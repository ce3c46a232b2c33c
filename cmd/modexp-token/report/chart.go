package report

import (
	"context"
	"fmt"
	"html"
	"io"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/rsa"
	"github.com/modexp-token/modexp-token/engine/backend/chip"
)

// ChartOptions configure [WriteChart].
type ChartOptions struct {
	// Reference is an engine measured in wall-clock time beside the
	// simulations (the software engine: engine.Open("soft")); nil omits it.
	Reference engine.Engine
	// ReferenceName labels it (default: its Info().Name).
	ReferenceName string
	// Runs is how many times the reference is timed per size (median; default 5).
	Runs int
}

// Point is one measurement of a chart series.
type Point struct {
	Bits         int
	Time         time.Duration
	Extrapolated bool // orup561 beyond its 561-bit halves (scaled mode)
}

// Series is one line of the chart.
type Series struct {
	Name      string
	Simulated bool
	Points    []Point
}

// chartProfiles are the engines the chart simulates.
var chartProfiles = []struct{ name, spec, scaled string }{
	{"orup561 (25 MHz)", "orup561", "orup561,scaled"},
	{"pukcc (120 MHz)", "pukcc", ""},
	{"cryptech modexp 2015 (33.4 MHz eff.)", "cryptech", ""},
	{"cryptech modexpa7 (hypothetical timing)", "cryptech,core=modexpa7", ""},
}

// ChartData runs the RSA private operation (CRT, through engine/alg/rsa, every
// result checked) on each profile for 1024-, 2048- and 4096-bit keys and
// returns the simulated device times, and the reference engine's measured
// wall time if opts.Reference is set.
func ChartData(ctx context.Context, opts ChartOptions) ([]Series, error) {
	var keys []*rsaKey
	for _, bits := range []int{1024, 2048, 4096} {
		k, err := loadKey(bits)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	private := func(e engine.Engine, k *rsaKey) (engine.Cost, time.Duration, error) {
		key, err := rsa.NewKey(e, &rsa.PrivateKey{N: k.N, E: k.E, D: k.D, P: k.P, Q: k.Q}, rsa.Options{})
		if err != nil {
			return engine.Cost{}, 0, err
		}
		x := new(big.Int).Rsh(k.N, 3).Bytes()
		start := time.Now()
		_, c, err := key.Private(ctx, x)
		return c, time.Since(start), err
	}
	var out []Series
	for _, p := range chartProfiles {
		s := Series{Name: p.name, Simulated: true}
		for _, k := range keys {
			spec, extra := p.spec, false
			if p.scaled != "" && k.P.BitLen() > chip.OrupDesignBits {
				spec, extra = p.scaled, true
			}
			e, err := chip.New(spec)
			if err != nil {
				return nil, err
			}
			c, _, err := private(e, k)
			if err != nil {
				return nil, fmt.Errorf("chip: chart: %s, %d bits: %w", spec, k.N.BitLen(), err)
			}
			s.Points = append(s.Points, Point{Bits: k.N.BitLen(), Time: c.Device, Extrapolated: extra})
		}
		out = append(out, s)
	}
	if opts.Reference != nil {
		name := opts.ReferenceName
		if name == "" {
			name = opts.Reference.Info().Name
		}
		runs := max(opts.Runs, 1)
		if opts.Runs == 0 {
			runs = 5
		}
		s := Series{Name: name + " (measured on this machine)"}
		for _, k := range keys {
			var times []time.Duration
			for range runs {
				_, d, err := private(opts.Reference, k)
				if err != nil {
					return nil, fmt.Errorf("chip: chart: %s, %d bits: %w", name, k.N.BitLen(), err)
				}
				times = append(times, d)
			}
			slices.Sort(times)
			s.Points = append(s.Points, Point{Bits: k.N.BitLen(), Time: times[len(times)/2]})
		}
		out = append(out, s)
	}
	return out, nil
}

// WriteChart writes an SVG chart of the RSA private operation's time
// against key size for every profile (simulated device time) beside the
// reference engine (measured), on log-log axes. See [ChartData].
func WriteChart(w io.Writer, opts ChartOptions) error {
	series, err := ChartData(context.Background(), opts)
	if err != nil {
		return err
	}
	return RenderChart(w, series, opts.Reference == nil)
}

// chartNotes are the lines under the legend.
func chartNotes(noRef bool) []string {
	notes := []string{"open circles, dashed: orup561 scaled", "(halves above 561 bits: extrapolated)"}
	if noRef {
		notes = append(notes, "software engine: not measured")
	}
	return notes
}

// legendLine is one line of the legend and its estimated width in pixels,
// measured from the legend's x.
type legendLine struct {
	text  string
	width float64
}

// legendLines lists the legend's text with widths estimated for a
// sans-serif font (0.6 em per character, a safe upper bound for the
// characters used), so that the picture can be made wide enough for them.
func legendLines(series []Series, noRef bool) []legendLine {
	var out []legendLine
	for _, s := range series {
		out = append(out, legendLine{s.Name, textWidth(s.Name, 12)}, legendLine{"simulated device time", textWidth("simulated device time", 10)})
	}
	for _, n := range chartNotes(noRef) {
		out = append(out, legendLine{n, textWidth(n, 10) - 30}) // notes start 30 px left of the names
	}
	return out
}

// textWidth estimates the width of s in pixels at font size px.
func textWidth(s string, px float64) float64 {
	return float64(len([]rune(s))) * px * 0.6
}

// RenderChart draws series as SVG; noRef adds a note that no reference
// engine was measured.
func RenderChart(w io.Writer, series []Series, noRef bool) error {
	const (
		H              = 470
		left, top, bot = 80, 50, 60
		pw, ph         = 430, H - top - bot
		// The legend starts at legendX; the picture is as wide as its
		// longest line (the names of the series vary).
		legendX          = left + pw + 44
		minBits, maxBits = 1024.0, 4096.0
	)
	W := legendX + 12
	for _, line := range legendLines(series, noRef) {
		W = max(W, legendX+int(math.Ceil(line.width))+12)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			v := math.Log10(p.Time.Seconds())
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		return fmt.Errorf("chip: chart: no data")
	}
	lo, hi = math.Floor(lo), math.Ceil(hi)
	if hi == lo {
		hi++
	}
	x := func(bits int) float64 {
		return left + pw*math.Log2(float64(bits)/minBits)/math.Log2(maxBits/minBits)
	}
	y := func(d time.Duration) float64 {
		return top + ph*(hi-math.Log10(d.Seconds()))/(hi-lo)
	}
	colors := []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#000000", "#ff7f0e"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">RSA private operation (CRT): time against key size</text>`+"\n", left)
	for e := lo; e <= hi; e++ {
		yy := top + ph*(hi-e)/(hi-lo)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, yy, left+pw, yy)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, yy+4, decade(e))
	}
	for _, bits := range []int{1024, 2048, 4096} {
		xx := x(bits)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", xx, top, xx, top+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", xx, top+ph+18, bits)
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">modulus bits (log scale)</text>`+"\n", left+pw/2, H-18)
	fmt.Fprintf(&b, `<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">time per operation (log scale)</text>`+"\n", top+ph/2, top+ph/2)
	for i, s := range series {
		c := colors[i%len(colors)]
		for j := 1; j < len(s.Points); j++ {
			p0, p1 := s.Points[j-1], s.Points[j]
			dash := ""
			if p1.Extrapolated {
				dash = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", x(p0.Bits), y(p0.Time), x(p1.Bits), y(p1.Time), c, dash)
		}
		for _, p := range s.Points {
			fill := c
			if p.Extrapolated {
				fill = "white"
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" stroke-width="1.5"><title>%s, %d bits: %s</title></circle>`+"\n", x(p.Bits), y(p.Time), fill, c, html.EscapeString(s.Name), p.Bits, p.Time)
		}
		ly := top + 10 + 34*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", left+pw+14, ly, left+pw+38, ly, c)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", left+pw+44, ly+4, html.EscapeString(s.Name))
		kind := "simulated device time"
		if !s.Simulated {
			kind = "wall time"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#555">%s</text>`+"\n", left+pw+44, ly+17, kind)
	}
	ny := top + 10 + 34*len(series)
	for i, note := range chartNotes(noRef) {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#555">%s</text>`+"\n", left+pw+14, ny+13*i, note)
	}
	b.WriteString("</svg>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("chip: chart: write: %w", err)
	}
	return nil
}

func decade(e float64) string {
	switch {
	case e >= 0:
		return fmt.Sprintf("%g s", math.Pow(10, e))
	case e >= -3:
		return fmt.Sprintf("%g ms", math.Pow(10, e+3))
	default:
		return fmt.Sprintf("%g µs", math.Pow(10, e+6))
	}
}
