// Command benchchart draws the side-by-side benchmark table (the TSV that
// test/bench/run.sh writes, build/bench/bench.tsv) as an SVG bar chart:
// one group per operation and thread count, one bar per module (ops/s, log
// scale), the ratio of the first module to the second at the right.
//
//	go run ./test/bench/benchchart -o build/bench/bench.svg build/bench/bench.tsv
//
// With -sweep it draws instead one operation's ops/s against the thread
// count (run.sh's concurrency sweep, sweep.tsv), a line per module, and
// one for `openssl speed -multi` from -openssl FILE (run.sh's TSV of it):
//
//	go run ./test/bench/benchchart -sweep -openssl build/bench/sweep-openssl.tsv -o build/bench/sweep.svg build/bench/sweep.tsv
//
// make bench runs it; it needs nothing but Go.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

func main() {
	out := flag.String("o", "", "SVG file to write (default stdout)")
	title := flag.String("title", "", "chart title (default: ops/s, higher is better (log scale); with -sweep: the operation's)")
	sweepMode := flag.Bool("sweep", false, "draw ops/s against threads for the TSV's first operation")
	openssl := flag.String("openssl", "", "with -sweep: run.sh's TSV of openssl speed -multi (threads, sign/s)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: benchchart [-o out.svg] [-title T] [-sweep [-openssl openssl.tsv]] bench.tsv")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	var err error
	if *sweepMode {
		err = runSweep(flag.Arg(0), *openssl, *out, *title)
	} else {
		if *title == "" {
			*title = "ops/s, higher is better (log scale)"
		}
		err = run(flag.Arg(0), *out, *title)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
}

func run(in, out, title string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	t, err := parseTSV(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return writeOut(out, func(w io.Writer) error { return render(w, t, title) })
}

// writeOut runs draw on the file out (created), or on stdout when out is
// empty.
func writeOut(out string, draw func(io.Writer) error) error {
	if out == "" {
		return draw(os.Stdout)
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := draw(o); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// table is the part of the TSV the chart shows.
type table struct {
	modules []string // from the X_ops_per_s columns, in order
	rows    []row
}

type row struct {
	label string    // "RSA-2048 sign SHA256-RSA-PKCS, 1 thread"
	rates []float64 // ops/s per module; NaN when the cell failed
}

// parseTSV reads p11bench's TSV: op, operation, threads, then one
// NAME_ops_per_s column per module, then more columns the chart ignores.
func parseTSV(r io.Reader) (*table, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	if !sc.Scan() {
		return nil, errors.New("empty")
	}
	head := strings.Split(sc.Text(), "\t")
	if len(head) < 4 || head[0] != "op" || head[1] != "operation" || head[2] != "threads" {
		return nil, fmt.Errorf("not a p11bench TSV (header %q)", sc.Text())
	}
	t := &table{}
	var cols []int
	for i := 3; i < len(head); i++ {
		name, ok := strings.CutSuffix(head[i], "_ops_per_s")
		if !ok {
			break
		}
		t.modules = append(t.modules, name)
		cols = append(cols, i)
	}
	if len(cols) == 0 {
		return nil, errors.New("no NAME_ops_per_s column")
	}
	for line := 2; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) <= cols[len(cols)-1] {
			return nil, fmt.Errorf("line %d: %d fields", line, len(f))
		}
		threads := f[2] + " threads"
		if f[2] == "1" {
			threads = "1 thread"
		}
		r := row{label: f[1] + ", " + threads}
		for _, c := range cols {
			v, err := strconv.ParseFloat(f[c], 64)
			if err != nil || v <= 0 {
				v = math.NaN() // a failed cell
			}
			r.rates = append(r.rates, v)
		}
		t.rows = append(t.rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.rows) == 0 {
		return nil, errors.New("no rows")
	}
	return t, nil
}

// textWidth estimates the width of s in pixels at font size px (0.6 em per
// character: an upper bound for sans-serif text of this kind).
func textWidth(s string, px float64) float64 { return float64(len([]rune(s))) * px * 0.6 }

var colors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"}

// render draws the chart.
func render(w io.Writer, t *table, title string) error {
	const (
		font     = 12.0
		barH     = 14.0
		gap      = 10.0
		top      = 60.0
		plotW    = 460.0
		valueW   = 70.0 // room for the value printed after a bar
		ratioW   = 70.0
		padRight = 12.0
	)
	labelW := 0.0
	for _, r := range t.rows {
		labelW = max(labelW, textWidth(r.label, font))
	}
	left := 12 + labelW + 10
	groupH := barH*float64(len(t.modules)) + gap
	height := top + groupH*float64(len(t.rows)) + 50
	width := left + plotW + valueW + ratioW + padRight
	width = max(width, 12+textWidth(title, 15)+padRight)

	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range t.rows {
		for _, v := range r.rates {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, math.Log10(v)), math.Max(hi, math.Log10(v))
			}
		}
	}
	if math.IsInf(lo, 0) {
		return errors.New("no successful cell to draw")
	}
	lo, hi = math.Floor(lo), math.Ceil(hi)
	if hi == lo {
		hi++
	}
	x := func(v float64) float64 { return left + plotW*(math.Log10(v)-lo)/(hi-lo) }

	var b strings.Builder
	lx := svgHead(&b, width, height, font, title, t.modules)
	if len(t.modules) > 1 {
		fmt.Fprintf(&b, `<text x="%.1f" y="42" fill="#555">ratio = %s / %s</text>`+"\n", lx, html.EscapeString(t.modules[0]), html.EscapeString(t.modules[1]))
	}
	// Decade grid.
	bottom := top + groupH*float64(len(t.rows))
	for e := lo; e <= hi; e++ {
		xx := left + plotW*(e-lo)/(hi-lo)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", xx, top-4, xx, bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", xx, bottom+16, decade(e))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">operations per second</text>`+"\n", left+plotW/2, bottom+34)
	for i, r := range t.rows {
		y0 := top + groupH*float64(i)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-10, y0+groupH/2, html.EscapeString(r.label))
		for j, v := range r.rates {
			y := y0 + barH*float64(j)
			if math.IsNaN(v) {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" fill="#a00">%s: failed</text>`+"\n", left+4, y+barH-3, html.EscapeString(t.modules[j]))
				continue
			}
			xw := math.Max(x(v)-left, 1)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s ops/s</title></rect>`+"\n",
				left, y, xw, barH-2, colors[j%len(colors)], html.EscapeString(t.modules[j]), num(v))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10">%s</text>`+"\n", left+xw+4, y+barH-4, num(v))
		}
		if len(r.rates) > 1 && !math.IsNaN(r.rates[0]) && !math.IsNaN(r.rates[1]) {
			ratio := r.rates[0] / r.rates[1]
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-weight="bold">×%.2f</text>`+"\n", left+plotW+valueW, y0+groupH/2, ratio)
		}
		if i > 0 {
			fmt.Fprintf(&b, `<line x1="12" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", y0-gap/2, width-padRight, y0-gap/2)
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// svgHead writes the SVG's opening, white background, title and legend
// (a colour per name), and returns where the legend ends.
func svgHead(b *strings.Builder, width, height, font float64, title string, names []string) float64 {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="%.0f">`+"\n",
		width, height, width, height, font)
	fmt.Fprintf(b, `<rect width="%.0f" height="%.0f" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="12" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	lx := 12.0
	for i, m := range names {
		fmt.Fprintf(b, `<rect x="%.1f" y="32" width="12" height="12" fill="%s"/>`+"\n", lx, colors[i%len(colors)])
		fmt.Fprintf(b, `<text x="%.1f" y="42">%s</text>`+"\n", lx+16, html.EscapeString(m))
		lx += 16 + textWidth(m, font) + 18
	}
	return lx
}

// decade labels 10^e.
func decade(e float64) string {
	v := math.Pow(10, e)
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

// num prints a rate with three significant digits.
func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
