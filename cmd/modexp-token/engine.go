package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/chip/report"
)

func engineCmd() *cobra.Command {
	var profile, format string
	table := &cobra.Command{
		Use:   "table [--profile P] [--format text|tsv]",
		Short: "Reproduce the published figures of the simulated chips",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return report.WriteTable(cmd.OutOrStdout(), profile, format)
		},
	}
	table.Flags().StringVar(&profile, "profile", "", "one chip `PROFILE` (orup561, pukcc, cryptech); default all")
	table.Flags().StringVar(&format, "format", "text", "text or tsv")

	var out, ref string
	chart := &cobra.Command{
		Use:   "chart [--out FILE] [--reference ENGINE]",
		Short: "Draw the chip timing chart (SVG)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := report.ChartOptions{}
			if ref != "" {
				e, err := engine.Open(ref)
				if err != nil {
					return err
				}
				defer e.Close()
				opts.Reference = e
			}
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("create %s: %w", out, err)
				}
				defer f.Close()
				w = f
			}
			return report.WriteChart(w, opts)
		},
	}
	chart.Flags().StringVar(&out, "out", "", "SVG `FILE` to write (default stdout)")
	chart.Flags().StringVar(&ref, "reference", "soft", "`ENGINE` measured beside the simulations (empty for none)")
	return group("engine", "Chip simulator figures: the reproduction table and the timing chart", table, chart)
}
