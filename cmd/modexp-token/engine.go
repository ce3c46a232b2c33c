package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/cmd/modexp-token/report"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/soft"
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
	info := &cobra.Command{
		Use:   "info",
		Short: "Show the CPU features seen and the limb kernel of the software engine",
		Long: "Show the CPU features the software engine's kernels use, the kernel in use\n" +
			"(ifma, adx or purego) and what MODEXP_KERNEL asked for. Fails if the\n" +
			"requested kernel cannot run here, as the module's C_Initialize would.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeKernelInfo(cmd.OutOrStdout(), soft.Kernels())
		},
	}
	return group("engine", "Chip simulator figures, the table and the chart; the software engine's kernel", table, chart, info)
}

// writeKernelInfo prints the kernel selection and returns its error.
func writeKernelInfo(w io.Writer, ki soft.KernelInfo) error {
	cpu := strings.Join(ki.CPU, " ")
	if cpu == "" {
		cpu = "(none of those the kernels use)"
	}
	fmt.Fprintf(w, "cpu features: %s\n", cpu)
	fmt.Fprintf(w, "kernel:       %s (MODEXP_KERNEL=%s)\n", ki.Name, ki.Requested)
	for _, n := range ki.Notes {
		fmt.Fprintf(w, "note:         %s\n", n)
	}
	if ki.Err != nil {
		return ki.Err
	}
	return nil
}
