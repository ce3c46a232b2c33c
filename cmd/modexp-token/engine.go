package main

import (
	"fmt"
	"io"
	"os"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/chip/report"
)

// runEngine runs the engine subcommands: the chip reproduction table and
// the timing chart.
func runEngine(args []string, stdout io.Writer) error {
	sub, rest, err := splitSub(args, "table", "chart")
	if err != nil {
		return err
	}
	fs := newFlags("engine " + sub)
	profile := fs.String("profile", "", "table: one chip profile (orup561, pukcc, cryptech); default all")
	format := fs.String("format", "text", "table: text or tsv")
	out := fs.String("out", "", "chart: SVG file to write (default stdout)")
	ref := fs.String("reference", "soft", "chart: engine measured beside the simulations (empty for none)")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if sub == "table" {
		return report.WriteTable(stdout, *profile, *format)
	}
	opts := report.ChartOptions{}
	if *ref != "" {
		e, err := engine.Open(*ref)
		if err != nil {
			return err
		}
		defer e.Close()
		opts.Reference = e
	}
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("create %s: %w", *out, err)
		}
		defer f.Close()
		w = f
	}
	return report.WriteChart(w, opts)
}
