// Command modexp-token administers ModExp Token tokens: it initialises a
// token, sets PINs, lists, generates, imports and deletes keys, and shows
// the slots, engines and mechanisms. It drives the same token code the
// PKCS#11 module runs (package token), with the same configuration
// (MODEXP_TOKEN_CONF, MODEXP_TOKEN_ENGINE), so what it does is what
// pkcs11-tool would see.
//
// PINs never come from the command line: they are read from a file
// (--pin-file, --so-pin-file), from an environment variable
// (MODEXP_TOKEN_PIN, MODEXP_TOKEN_SO_PIN, MODEXP_TOKEN_NEW_PIN), or from a
// prompt on the terminal.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand: its usage line and what it runs.
type command struct {
	usage string
	run   func(args []string, stdout io.Writer) error
}

var commands = map[string]command{
	"info":    {"info                      slots, tokens, engines and mechanisms", runInfo},
	"init":    {"init --label L [--slot N]  initialise a token (wipes it) and set both PINs", runInit},
	"pin":     {"pin change [--so] | pin reset   change a PIN, or let the SO set the user PIN", runPIN},
	"keys":    {"keys list|generate|import|delete   manage keys", runKeys},
	"engine":  {"engine table [--profile P] [--format text|tsv]   reproduce published chip figures", runEngine},
	"backup":  {"backup --out FILE [--slot N]   copy the token file (online, consistent)", runBackup},
	"restore": {"restore --in FILE [--slot N]   check a backup, then replace the token file with it", runRestore},
	"bench":   {"bench --engine SPEC [--bits N] [-n N] [--workers N] [--fallback fail|soft]   ops, simulated device time, wall time", runBench},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "modexp-token: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := cmd.run(args[1:], stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "modexp-token %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: modexp-token COMMAND [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintln(w, "  "+commands[n].usage)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Configuration: MODEXP_TOKEN_CONF (slots), MODEXP_TOKEN_ENGINE (engine override).")
	fmt.Fprintln(w, "PINs: --pin-file/--so-pin-file, MODEXP_TOKEN_PIN/MODEXP_TOKEN_SO_PIN/MODEXP_TOKEN_NEW_PIN, or a prompt.")
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

// splitSub takes the subcommand word off args.
func splitSub(args []string, valid ...string) (string, []string, error) {
	if len(args) == 0 {
		return "", nil, fmt.Errorf("need one of: %s", strings.Join(valid, ", "))
	}
	for _, v := range valid {
		if args[0] == v {
			return v, args[1:], nil
		}
	}
	return "", nil, fmt.Errorf("unknown subcommand %q (want one of: %s)", args[0], strings.Join(valid, ", "))
}
