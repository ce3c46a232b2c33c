package main

import (
	"bytes"
	"encoding/xml"
	"math"
	"os"
	"strings"
	"testing"
)

// TestSweepChart reads testdata/sweep.tsv (RSA-2048 signing at 1–16
// threads for two modules, and a row of another operation) with
// testdata/sweep-openssl.tsv (no 16-process figure) and checks the chart:
// one series per module and one for openssl, the other operation left
// out, a point per figure (none for the missing one), one line per
// series, and well-formed SVG.
func TestSweepChart(t *testing.T) {
	f, err := os.Open("testdata/sweep.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, err := os.Open("testdata/sweep-openssl.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	s, err := parseSweep(f, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.series, ","); got != "ModExp,SoftHSMv2,openssl speed -multi" {
		t.Fatalf("series %q", got)
	}
	if len(s.threads) != 5 || s.threads[0] != 1 || s.threads[4] != 16 {
		t.Fatalf("threads %v", s.threads)
	}
	if !math.IsNaN(s.rates[2][4]) || s.rates[2][1] != 6563 || s.rates[0][3] != 7890 {
		t.Fatalf("rates %v", s.rates)
	}
	var b bytes.Buffer
	if err := renderSweep(&b, s, ""); err != nil {
		t.Fatal(err)
	}
	var svg struct {
		Circles []struct {
			Title string `xml:"title"`
		} `xml:"circle"`
		Lines []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
		Texts []string `xml:"text"`
	}
	if err := xml.Unmarshal(b.Bytes(), &svg); err != nil {
		t.Fatalf("SVG: %v", err)
	}
	if len(svg.Circles) != 14 || len(svg.Lines) != 3 {
		t.Fatalf("%d points, %d lines; want 14, 3", len(svg.Circles), len(svg.Lines))
	}
	if n := len(strings.Fields(svg.Lines[2].Points)); n != 4 {
		t.Errorf("openssl's line has %d points, want 4", n)
	}
	if svg.Texts[0] != "RSA-2048 sign SHA256-RSA-PKCS: ops/s against threads" {
		t.Errorf("title %q", svg.Texts[0])
	}
	for _, c := range svg.Circles {
		if strings.Contains(c.Title, "ECDSA") {
			t.Errorf("a point of another operation: %q", c.Title)
		}
	}
}
