package report

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	tableOnce sync.Once
	tableRows []Row
	tableErr  error
)

func reproduced(t *testing.T) []Row {
	t.Helper()
	tableOnce.Do(func() { tableRows, tableErr = Reproduce(context.Background(), "all") })
	if tableErr != nil {
		t.Fatal(tableErr)
	}
	return tableRows
}

// TestTableReproducesFigures recomputes each row's criterion from the
// simulated and published numbers, not from the row's own verdict.
func TestTableReproducesFigures(t *testing.T) {
	rows := reproduced(t)
	count := map[string]int{}
	for _, r := range rows {
		count[r.Profile]++
		if r.Note != "" {
			t.Errorf("%s %s: %s", r.Profile, r.Case, r.Note)
		}
		dev := r.DeviationPct()
		switch {
		case r.Profile == "pukcc":
			if math.Abs(dev) > 3 {
				t.Errorf("pukcc %s: deviation %.2f%% > 3%%", r.Case, dev)
			}
		case r.Profile == "cryptech" && r.Unit == "s":
			if k := math.Floor(r.Published); r.Simulated <= k-1 || r.Simulated >= k+1 {
				t.Errorf("cryptech %s: %.3f s outside the timer's (%g, %g)", r.Case, r.Simulated, k-1, k+1)
			}
		case r.Profile == "cryptech":
			if r.Simulated != r.Published {
				t.Errorf("cryptech %s: %g, want %g", r.Case, r.Simulated, r.Published)
			}
		case r.Profile == "orup561" && strings.Contains(r.Case, "measured time"):
			if math.Abs(r.Simulated-5.47) >= 0.01 {
				t.Errorf("orup561 time %.4f ms", r.Simulated)
			}
		case r.Profile == "orup561" && strings.Contains(r.Case, "Table 4.6"):
			if math.Round(r.Simulated*10)/10 != 5.5 {
				t.Errorf("orup561 Table 4.6: %.4f ms", r.Simulated)
			}
		case r.Profile == "orup561" && strings.Contains(r.Case, "512-bit design") && r.Unit == "ms":
			if math.Round(r.Simulated*100)/100 != 4.59 {
				t.Errorf("orup561 512-bit: %.4f ms", r.Simulated)
			}
		case r.Profile == "orup561" && strings.Contains(r.Case, "more than 111"):
			if r.Simulated <= 111 {
				t.Errorf("orup561 512-bit throughput %.2f", r.Simulated)
			}
		case r.Profile == "orup561" && strings.Contains(r.Case, "16 MHz"):
			if r.Simulated < 64 {
				t.Errorf("orup561 16 MHz: %.2f kbit/s", r.Simulated)
			}
		case r.Profile == "orup561" && strings.Contains(r.Case, "about 102"):
			if math.Round(r.Simulated) != 102 {
				t.Errorf("orup561 throughput %.2f", r.Simulated)
			}
		default:
			if math.Abs(r.Simulated-r.Published) > 0.05 {
				t.Errorf("%s %s: %g, want %g", r.Profile, r.Case, r.Simulated, r.Published)
			}
		}
		if !r.OK {
			t.Errorf("%s %s: not reproduced", r.Profile, r.Case)
		}
	}
	// Every figure the issue names is present.
	if count["orup561"] < 8 || count["pukcc"] != 18 || count["cryptech"] != 9 {
		t.Errorf("rows per profile: %v", count)
	}
}

func TestTableFormats(t *testing.T) {
	rows := reproduced(t)
	var tsv, text bytes.Buffer
	if err := FormatTable(&tsv, rows, "tsv"); err != nil {
		t.Fatal(err)
	}
	if err := FormatTable(&text, rows, "text"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(tsv.String(), "\n"), "\n")
	if lines[0] != "profile\tcase\tpublished\tunit\tsimulated\tdeviation_pct\tok" {
		t.Fatalf("header %q", lines[0])
	}
	if want := strconv.Itoa(len(rows)) + " of " + strconv.Itoa(len(rows)) + " published figures reproduced"; lines[len(lines)-1] != want {
		t.Fatalf("last line %q, want %q", lines[len(lines)-1], want)
	}
	for i, l := range lines[1 : len(lines)-1] {
		f := strings.Split(l, "\t")
		if len(f) != 7 {
			t.Fatalf("line %d: %d columns", i, len(f))
		}
		pub, err1 := strconv.ParseFloat(f[2], 64)
		sim, err2 := strconv.ParseFloat(f[4], 64)
		_, err3 := strconv.ParseFloat(f[5], 64)
		if err1 != nil || err2 != nil || err3 != nil || f[6] != "true" {
			t.Fatalf("line %q", l)
		}
		if pub != rows[i].Published || math.Abs(sim-rows[i].Simulated) > 1e-5*math.Abs(rows[i].Simulated) {
			t.Fatalf("line %d numbers differ from the row", i)
		}
	}
	if !strings.HasSuffix(text.String(), lines[len(lines)-1]+"\n") || !strings.Contains(text.String(), "5.47") {
		t.Fatalf("text table:\n%s", text.String())
	}
	if err := WriteTable(&tsv, "nosuch", "tsv"); err == nil {
		t.Error("unknown profile accepted")
	}
	if err := WriteTable(&tsv, "pukcc", "html"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestTableFailingRow(t *testing.T) {
	var b bytes.Buffer
	rows := []Row{{Profile: "x", Case: "c", Published: 2, Unit: "ms", Simulated: 3, Criterion: "within 3%", OK: false, Note: "wrong result"}}
	if err := FormatTable(&b, rows, "tsv"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\t50.00\tfalse\n0 of 1 published") {
		t.Fatalf("%q", b.String())
	}
}
