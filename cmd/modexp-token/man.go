package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manCmd writes the man pages (section 1) of every command; make install
// uses it.
func manCmd(root *cobra.Command) *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:    "man --dir DIR",
		Short:  "Write the man pages of every command into DIR",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usageErrorf("--dir is required")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			root.DisableAutoGenTag = true
			hdr := &doc.GenManHeader{Title: "MODEXP-TOKEN", Section: "1", Source: "ModExp Token " + versionString(), Manual: "ModExp Token"}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return fmt.Errorf("write man pages: %w", err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "`DIR` to write the pages into")
	return c
}
