package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"strings"
	"testing"
)

// TestChart draws testdata/bench.tsv (a make bench run, plus a failed cell)
// and checks the SVG: well-formed, one bar per successful cell, the ratio
// of each complete row, the failed cell named, and no text past the right
// edge.
func TestChart(t *testing.T) {
	f, err := os.Open("testdata/bench.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := parseTSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.modules) != 2 || tab.modules[0] != "ModExp" || tab.modules[1] != "SoftHSMv2" {
		t.Fatalf("modules %q", tab.modules)
	}
	var b bytes.Buffer
	if err := render(&b, tab, "test"); err != nil {
		t.Fatal(err)
	}
	var svg struct {
		Width float64 `xml:"width,attr"`
		Rects []struct {
			Title string `xml:"title"`
		} `xml:"rect"`
		Texts []struct {
			X      float64 `xml:"x,attr"`
			Size   float64 `xml:"font-size,attr"`
			Anchor string  `xml:"text-anchor,attr"`
			Text   string  `xml:",chardata"`
		} `xml:"text"`
	}
	if err := xml.Unmarshal(b.Bytes(), &svg); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	bars, cells, complete := 0, 0, 0
	for _, r := range svg.Rects {
		if strings.Contains(r.Title, "ops/s") {
			bars++
		}
	}
	for _, r := range tab.rows {
		ok := 0
		for _, v := range r.rates {
			if v == v { // not NaN
				ok++
			}
		}
		cells += ok
		if ok == len(r.rates) {
			complete++
		}
	}
	if bars != cells {
		t.Errorf("%d bars for %d successful cells", bars, cells)
	}
	ratios, failed := 0, false
	for _, tx := range svg.Texts {
		if strings.HasPrefix(tx.Text, "×") {
			ratios++
		}
		if tx.Text == "ModExp: failed" {
			failed = true
		}
		size := tx.Size
		if size == 0 {
			size = 12
		}
		if tx.Anchor == "" && tx.X+textWidth(tx.Text, size) > svg.Width {
			t.Errorf("%q runs past the right edge", tx.Text)
		}
	}
	if ratios != complete {
		t.Errorf("%d ratios for %d complete rows", ratios, complete)
	}
	if !failed {
		t.Error("the failed cell is not named")
	}
	if !strings.Contains(b.String(), "×2.52") {
		t.Error("RSA-2048 1-thread ratio ×2.52 missing")
	}
}

func TestNotATable(t *testing.T) {
	for _, in := range []string{"", "a\tb\n", "op\toperation\tthreads\tx\n", "op\toperation\tthreads\tA_ops_per_s\n"} {
		if _, err := parseTSV(strings.NewReader(in)); err == nil {
			t.Errorf("parseTSV(%q) succeeded", in)
		}
	}
}
