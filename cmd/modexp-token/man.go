package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manCmd writes the man pages: section 1 of every command and
// modexp-token.toml(5); make install uses it. --config-md and --config-man
// write the configuration reference alone (go generate, confdoc.go).
func manCmd(root *cobra.Command) *cobra.Command {
	var dir, md, man string
	c := &cobra.Command{
		Use:    "man --dir DIR | --config-md FILE --config-man FILE",
		Short:  "Write the man pages of every command and of the configuration file into DIR",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" && md == "" && man == "" {
				return usageErrorf("--dir, --config-md or --config-man is required")
			}
			for _, f := range []struct{ path, text string }{{md, configMarkdown()}, {man, configMan()}} {
				if f.path == "" {
					continue
				}
				if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
					return fmt.Errorf("write the configuration reference: %w", err)
				}
			}
			if dir == "" {
				return nil
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			root.DisableAutoGenTag = true
			hdr := &doc.GenManHeader{Title: "MODEXP-TOKEN", Section: "1", Source: "ModExp Token " + versionString(), Manual: "ModExp Token"}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return fmt.Errorf("write man pages: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, "modexp-token.toml.5"), []byte(configMan()), 0o644); err != nil {
				return fmt.Errorf("write man pages: %w", err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "`DIR` to write the pages into")
	c.Flags().StringVar(&md, "config-md", "", "write the configuration reference in Markdown to `FILE` (docs/CONFIG.md)")
	c.Flags().StringVar(&man, "config-man", "", "write modexp-token.toml(5) to `FILE`")
	return c
}
