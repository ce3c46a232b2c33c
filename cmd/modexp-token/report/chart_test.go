package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	_ "github.com/modexp-token/modexp-token/engine/backend/soft"
)

func TestChart(t *testing.T) {
	if raceEnabled {
		t.Skip("ChartData is sequential and takes minutes under the race detector; RenderChart is tested below")
	}
	soft, err := engine.Open("soft")
	if err != nil {
		t.Fatal(err)
	}
	defer soft.Close()
	series, err := ChartData(context.Background(), ChartOptions{Reference: soft, Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != len(chartProfiles)+1 {
		t.Fatalf("%d series", len(series))
	}
	for _, s := range series {
		if len(s.Points) != 3 {
			t.Fatalf("%s: %d points", s.Name, len(s.Points))
		}
		// Simulated times are exact; the measured one is wall time on a
		// shared machine, where one pause in the RSA-1024 run outlasts an
		// RSA-4096 one: logged, and checked only to be there.
		if !s.Simulated {
			t.Logf("%s: %v", s.Name, s.Points)
			for _, p := range s.Points {
				if p.Time <= 0 {
					t.Errorf("%s: no time measured: %v", s.Name, s.Points)
				}
			}
			continue
		}
		for i := 1; i < len(s.Points); i++ {
			if s.Points[i].Time <= s.Points[i-1].Time {
				t.Errorf("%s: time does not grow with the key size: %v", s.Name, s.Points)
			}
		}
	}
	if o := series[0].Points; o[0].Extrapolated || !o[1].Extrapolated || !o[2].Extrapolated {
		t.Errorf("orup561 extrapolation flags: %+v", o)
	}
	// RSA-1024 on the 561-bit chip: two 512-bit halves, 2 × 4.5875 ms.
	if got := series[0].Points[0].Time.Seconds() * 1e3; got < 9.17 || got > 9.18 {
		t.Errorf("orup561 RSA-1024 CRT: %.4f ms", got)
	}
	var b bytes.Buffer
	if err := RenderChart(&b, series, false); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
	if err := RenderChart(&b, nil, true); err == nil {
		t.Error("empty chart accepted")
	}
	if !strings.Contains(series[len(series)-1].Name, "measured") {
		t.Errorf("reference series name %q", series[len(series)-1].Name)
	}
}

func TestRenderChart(t *testing.T) {
	series := []Series{
		{Name: "a <&>", Simulated: true, Points: []Point{{1024, 1e6, false}, {2048, 9e6, true}, {4096, 7e7, true}}},
		{Name: "b", Points: []Point{{1024, 3e5, false}, {2048, 2e6, false}, {4096, 1.5e7, false}}},
	}
	var b bytes.Buffer
	if err := RenderChart(&b, series, true); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil {
		t.Fatalf("SVG is not XML: %v", err)
	}
	for _, want := range []string{"a &lt;&amp;&gt;", "stroke-dasharray", "not measured", "100 µs", "10 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

// TestChartLegendFits: every left-aligned text of the chart (the legend)
// ends inside the picture, whatever the length of the series' names (the
// legend of docs/chip-timing.svg used to be cut off at the right edge).
func TestChartLegendFits(t *testing.T) {
	pts := []Point{{Bits: 1024, Time: time.Millisecond}, {Bits: 2048, Time: 4 * time.Millisecond}, {Bits: 4096, Time: 20 * time.Millisecond}}
	for _, name := range []string{"x", "cryptech modexpa7 (hypothetical timing)", strings.Repeat("a very long engine name ", 4)} {
		var b bytes.Buffer
		if err := RenderChart(&b, []Series{{Name: name, Points: pts, Simulated: true}, {Name: "soft", Points: pts}}, true); err != nil {
			t.Fatal(err)
		}
		var svg struct {
			Width float64 `xml:"width,attr"`
			Texts []struct {
				X      float64 `xml:"x,attr"`
				Size   float64 `xml:"font-size,attr"`
				Anchor string  `xml:"text-anchor,attr"`
				Text   string  `xml:",chardata"`
			} `xml:"text"`
		}
		if err := xml.Unmarshal(b.Bytes(), &svg); err != nil {
			t.Fatal(err)
		}
		if svg.Width == 0 || len(svg.Texts) == 0 {
			t.Fatalf("no width or no text in the chart")
		}
		for _, tx := range svg.Texts {
			size := tx.Size
			if size == 0 {
				size = 12
			}
			if tx.Anchor == "" && tx.X+textWidth(tx.Text, size) > svg.Width {
				t.Errorf("%q at x=%v (about %.0f px) runs past the width %v", tx.Text, tx.X, textWidth(tx.Text, size), svg.Width)
			}
		}
	}
}
