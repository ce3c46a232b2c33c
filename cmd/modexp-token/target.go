package main

// Choosing a slot (--slot, --token), loading the module, and asking before
// destructive changes.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/config"
)

// target is the --slot/--token pair of a command that works on one token.
type target struct {
	slot  string
	token string
}

// addTargetFlags registers --slot and --token on cmd.
func addTargetFlags(cmd *cobra.Command) *target {
	t := &target{}
	cmd.Flags().StringVar(&t.slot, "slot", "", "slot `ID` (decimal or 0x hex) or slot index, as pkcs11-tool -L prints them (default: the first slot)")
	cmd.Flags().StringVar(&t.token, "token", "", "the token with this `LABEL`")
	return t
}

// loadConfig reads the configuration as the module would.
func loadConfig() (*config.Config, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, withCode(exitConfig, fmt.Errorf("%w\n  hint: 'modexp-token info' shows the configuration in use; %s names the file", err, config.EnvConf))
	}
	return cfg, nil
}

// openModule loads the module from the environment's configuration.
func openModule() (*token.Module, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	m, err := token.Load(cfg)
	if err != nil {
		return nil, withCode(exitConfig, fmt.Errorf("load the module: %w\n  hint: 'modexp-token info' shows the configuration and token files in use", err))
	}
	return m, nil
}

// slotRef is one slot as the user may name it.
type slotRef struct {
	index int
	id    uint64
	label string // token label, "" when the token cannot be read
}

func (r slotRef) String() string {
	s := fmt.Sprintf("%d (0x%x)", r.index, r.id)
	if r.label != "" {
		s += fmt.Sprintf(" %q", r.label)
	}
	return s
}

// slotRefs lists the module's slots with their token labels.
func slotRefs(m *token.Module) []slotRef {
	var refs []slotRef
	for i, id := range m.SlotList(false) {
		r := slotRef{index: i, id: id}
		if ti, err := m.TokenInfo(id); err == nil {
			r.label = strings.TrimSpace(ti.Label)
		}
		refs = append(refs, r)
	}
	return refs
}

func refList(refs []slotRef) string {
	s := make([]string, len(refs))
	for i, r := range refs {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}

// resolve returns the slot ID the flags name.
func (t *target) resolve(m *token.Module) (uint64, error) {
	refs := slotRefs(m)
	if len(refs) == 0 {
		return 0, withCode(exitConfig, errors.New("no slots configured"))
	}
	var bySlot, byToken *slotRef
	if t.slot != "" {
		r, err := pickSlotRef(refs, t.slot)
		if err != nil {
			return 0, err
		}
		bySlot = r
	}
	if t.token != "" {
		for i := range refs {
			if refs[i].label == t.token {
				byToken = &refs[i]
				break
			}
		}
		if byToken == nil {
			return 0, notFoundf("no token labelled %q (slots: %s)", t.token, refList(refs))
		}
	}
	switch {
	case bySlot != nil && byToken != nil && bySlot.id != byToken.id:
		return 0, usageErrorf("--slot %s and --token %q name different slots", t.slot, t.token)
	case bySlot != nil:
		return bySlot.id, nil
	case byToken != nil:
		return byToken.id, nil
	}
	return refs[0].id, nil
}

// pickSlotRef finds the slot s names: "0x..." is a hex slot ID; a decimal
// number is a slot ID if one has it, else a slot index.
func pickSlotRef(refs []slotRef, s string) (*slotRef, error) {
	if hexPart, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		id, err := strconv.ParseUint(hexPart, 16, 64)
		if err != nil {
			return nil, usageErrorf("--slot %q: not a hex slot ID", s)
		}
		for i := range refs {
			if refs[i].id == id {
				return &refs[i], nil
			}
		}
		return nil, notFoundf("no slot with ID %s (slots: %s)", s, refList(refs))
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, usageErrorf("--slot %q: want a slot ID (decimal or 0x hex) or a slot index", s)
	}
	for i := range refs {
		if refs[i].id == n {
			return &refs[i], nil
		}
	}
	if n < uint64(len(refs)) {
		return &refs[n], nil
	}
	return nil, notFoundf("no slot %s (slots, as index (ID): %s)", s, refList(refs))
}

// safety is the --yes/--dry-run pair of a destructive command.
type safety struct {
	yes, dryRun bool
}

func addSafetyFlags(cmd *cobra.Command) *safety {
	s := &safety{}
	cmd.Flags().BoolVarP(&s.yes, "yes", "y", false, "do it without asking")
	cmd.Flags().BoolVarP(&s.dryRun, "dry-run", "n", false, "only say what would be done")
	return s
}

// stdin and isTerminal are variables for tests.
var (
	stdin      io.Reader = os.Stdin
	isTerminal           = func() bool { return term.IsTerminal(int(os.Stdin.Fd())) }
)

// confirm asks the question on the terminal unless --yes was given. Without
// a terminal and without --yes it refuses.
func (s *safety) confirm(w io.Writer, question string) error {
	if s.yes {
		return nil
	}
	if !isTerminal() {
		return withCode(exitDeclined, errors.New("not confirmed: add --yes to do it without a terminal to ask on, or --dry-run to only see what it would do"))
	}
	fmt.Fprintf(w, "%s [y/N] ", question)
	line, _ := bufio.NewReader(stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return withCode(exitDeclined, errors.New("not confirmed: nothing changed"))
}
