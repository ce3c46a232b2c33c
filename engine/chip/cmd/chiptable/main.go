// Command chiptable prints the chip simulators' reproduction table (every
// published figure beside its simulation) and can write the timing chart.
//
//	go run ./engine/chip/cmd/chiptable [-profile all|orup561|pukcc|cryptech] [-format text|tsv] [-svg docs/chip-timing.svg]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/chip"
	_ "github.com/modexp-token/modexp-token/engine/soft"
)

func main() {
	profile := flag.String("profile", "all", "profile: all, orup561, pukcc or cryptech")
	format := flag.String("format", "text", "table format: text or tsv")
	svg := flag.String("svg", "", "also write the timing chart (SVG) to this file")
	flag.Parse()
	if err := chip.WriteTable(os.Stdout, *profile, *format); err != nil {
		fmt.Fprintln(os.Stderr, "chiptable:", err)
		os.Exit(1)
	}
	if *svg == "" {
		return
	}
	opts := chip.ChartOptions{ReferenceName: "soft"}
	if ref, err := engine.Open("soft"); err == nil {
		opts.Reference = ref
		defer ref.Close()
	} else {
		fmt.Fprintln(os.Stderr, "chiptable: no software engine to measure:", err)
	}
	f, err := os.Create(*svg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chiptable:", err)
		os.Exit(1)
	}
	if err := chip.WriteChart(f, opts); err != nil {
		f.Close()
		fmt.Fprintln(os.Stderr, "chiptable:", err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "chiptable:", err)
		os.Exit(1)
	}
}
