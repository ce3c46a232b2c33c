package main

// Editing the configuration file in place: 'token delete' takes its slot
// out, 'init --free' and 'token add' put one in. The file is the user's:
// comments and the other slots stay as written, and the result must load
// before it replaces the file.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/modexp-token/modexp-token/token/config"
)

// tableHeader matches a TOML table header line: "[[slot]]", "[x]".
var tableHeader = regexp.MustCompile(`^\s*\[`)

// slotHeader matches the header of one slot.
var slotHeader = regexp.MustCompile(`^\s*\[\[\s*slot\s*\]\]\s*(#.*)?$`)

// removeSlot returns the configuration text without its index-th [[slot]]
// table (0-based, in the order of the file, the order config.Parse keeps).
func removeSlot(text string, index int) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	start, end, n := -1, len(lines), -1
	for i, l := range lines {
		line := strings.TrimRight(l, "\r\n")
		if start >= 0 && tableHeader.MatchString(line) {
			end = i
			break
		}
		if slotHeader.MatchString(line) {
			n++
			if n == index {
				start = i
			}
		}
	}
	if start < 0 {
		return "", fmt.Errorf("the file has no [[slot]] number %d", index+1)
	}
	// Blank lines before the next table go with the removed one.
	out := strings.Join(lines[:start], "") + strings.Join(lines[end:], "")
	return out, nil
}

// writeConfig checks that text loads as a configuration with want slots
// and replaces the file at path with it (through a temporary file and a
// rename, keeping the file's mode).
func writeConfig(path, text string, want int) (*config.Config, error) {
	cfg, err := config.Parse([]byte(text), filepath.Dir(path))
	if err != nil {
		return nil, withCode(exitConfig, fmt.Errorf("the changed configuration would not load (nothing changed): %w", err))
	}
	if len(cfg.Slots) != want {
		return nil, fmt.Errorf("the changed configuration has %d slots, not %d (nothing changed)", len(cfg.Slots), want)
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("configuration file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("configuration directory: %w", err)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(text), mode); err != nil {
		return nil, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("replace %s: %w", path, err)
	}
	return cfg, nil
}
