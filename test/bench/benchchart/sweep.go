package main

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// sweep is one operation's ops/s against the thread count: one series per
// module of the p11bench TSV, and one for `openssl speed -multi T` when
// its TSV is given.
type sweep struct {
	operation string
	threads   []int       // sorted, distinct
	series    []string    // names, in order
	rates     [][]float64 // [series][thread index]; NaN: no figure
}

// parseSweep reads the rows of the first operation of a p11bench TSV and,
// when openssl is not nil, run.sh's openssl.tsv (threads, sign_per_s,
// sign_per_cpu_s).
func parseSweep(r io.Reader, openssl io.Reader) (*sweep, error) {
	t, err := parseTSV(r)
	if err != nil {
		return nil, err
	}
	s := &sweep{series: slices.Clone(t.modules)}
	byThreads := map[int][]float64{}
	for _, row := range t.rows {
		op, thr, ok := strings.Cut(row.label, ", ")
		if s.operation == "" {
			s.operation = op
		}
		if !ok || op != s.operation {
			continue
		}
		n, err := strconv.Atoi(strings.Fields(thr)[0])
		if err != nil {
			return nil, fmt.Errorf("row %q: thread count: %w", row.label, err)
		}
		byThreads[n] = row.rates
	}
	var ossl map[int]float64
	if openssl != nil {
		if ossl, err = parseOpenSSL(openssl); err != nil {
			return nil, fmt.Errorf("openssl: %w", err)
		}
		s.series = append(s.series, "openssl speed -multi")
	}
	for n := range byThreads {
		s.threads = append(s.threads, n)
	}
	slices.Sort(s.threads)
	s.rates = make([][]float64, len(s.series))
	for i := range s.series {
		for _, n := range s.threads {
			v := math.NaN()
			switch {
			case i < len(t.modules):
				v = byThreads[n][i]
			default:
				if o, ok := ossl[n]; ok {
					v = o
				}
			}
			s.rates[i] = append(s.rates[i], v)
		}
	}
	return s, nil
}

// parseOpenSSL reads openssl.tsv: a header, then threads and sign/s.
func parseOpenSSL(r io.Reader) (map[int]float64, error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "threads\t") {
		return nil, errors.New("not run.sh's openssl.tsv")
	}
	out := map[int]float64{}
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 2 {
			continue
		}
		n, err1 := strconv.Atoi(f[0])
		v, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || v <= 0 {
			return nil, fmt.Errorf("line %q", sc.Text())
		}
		out[n] = v
	}
	return out, sc.Err()
}

// runSweep draws the sweep chart of in (and opensslTSV, if named) to out.
func runSweep(in, opensslTSV, out, title string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var o io.Reader
	if opensslTSV != "" {
		of, err := os.Open(opensslTSV)
		if err != nil {
			return err
		}
		defer of.Close()
		o = of
	}
	s, err := parseSweep(f, o)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return writeOut(out, func(w io.Writer) error { return renderSweep(w, s, title) })
}

// renderSweep draws one line per series: ops/s (linear, from 0) against
// the thread counts, evenly spaced.
func renderSweep(w io.Writer, s *sweep, title string) error {
	const (
		font   = 12.0
		left   = 70.0
		top    = 60.0
		plotW  = 520.0
		plotH  = 300.0
		right  = 20.0
		bottom = 60.0
	)
	hi := 0.0
	for _, r := range s.rates {
		for _, v := range r {
			if !math.IsNaN(v) {
				hi = math.Max(hi, v)
			}
		}
	}
	if hi == 0 || len(s.threads) == 0 {
		return errors.New("no figure to draw")
	}
	step := math.Pow(10, math.Floor(math.Log10(hi)))
	for hi/step < 4 {
		step /= 2
	}
	top1 := math.Ceil(hi/step) * step
	width := left + plotW + right
	height := top + plotH + bottom
	x := func(i int) float64 {
		if len(s.threads) == 1 {
			return left + plotW/2
		}
		return left + plotW*float64(i)/float64(len(s.threads)-1)
	}
	y := func(v float64) float64 { return top + plotH*(1-v/top1) }
	if title == "" {
		title = s.operation + ": ops/s against threads"
	}
	var b strings.Builder
	svgHead(&b, width, height, font, title, s.series)
	for v := 0.0; v <= top1+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(v), left+plotW, y(v))
		label := "0"
		if v > 0 {
			label = num(v)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(v)+4, label)
	}
	for i, n := range s.threads {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`+"\n", x(i), top+plotH+18, n)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">threads (openssl: processes)</text>`+"\n", left+plotW/2, top+plotH+40)
	for j, r := range s.rates {
		c := colors[j%len(colors)]
		var pts []string
		for i, v := range r {
			if math.IsNaN(v) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %d: %s ops/s</title></circle>`+"\n",
				x(i), y(v), c, html.EscapeString(s.series[j]), s.threads[i], num(v))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
