// Command modexp-token administers ModExp Token tokens: it initialises a
// token, sets PINs, lists, generates, imports and deletes keys, backs a
// token up and restores it, and shows the configuration, slots, engines
// and mechanisms. It drives the same token code the PKCS#11 module runs
// (package token), with the same configuration (MODEXP_TOKEN_CONF,
// MODEXP_TOKEN_ENGINE), so what it does is what pkcs11-tool would see.
//
// PINs never come from the command line: they are read from a file
// (--pin-file, --so-pin-file), from an environment variable
// (MODEXP_TOKEN_PIN, MODEXP_TOKEN_SO_PIN, MODEXP_TOKEN_NEW_PIN), or from a
// prompt on the terminal.
//
// The command tree is built with cobra (help per command, shell
// completion, man pages: `modexp-token man --dir DIR`). Exit codes are
// listed in exitCodesHelp.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/cmd/internal/version"
	"github.com/modexp-token/modexp-token/keystore"

	"github.com/modexp-token/modexp-token/token/ck"
)

// Exit codes. 0 is success.
const (
	exitFailure  = 1 // the operation failed
	exitUsage    = 2 // the command line is wrong (unknown command or flag, missing value)
	exitPIN      = 3 // a PIN was wrong, locked or not set
	exitNotFound = 4 // no such slot, token or object
	exitDeclined = 5 // a destructive command was not confirmed
	exitConfig   = 6 // the configuration cannot be read or is invalid
)

const exitCodesHelp = `Exit codes:
  0  success
  1  the operation failed
  2  usage error (unknown command or flag, missing or bad value)
  3  PIN wrong, locked or not set
  4  no such slot, token or object
  5  a destructive command was not confirmed (use --yes)
  6  the configuration cannot be read or is invalid`

// exitError carries the exit code of an error up to run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code, err}
}

func usageErrorf(format string, args ...any) error {
	return withCode(exitUsage, fmt.Errorf(format, args...))
}

func notFoundf(format string, args ...any) error {
	return withCode(exitNotFound, fmt.Errorf(format, args...))
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(longFlags(args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	code, msg := explain(err)
	name := "modexp-token"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, msg)
	if code == exitUsage {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", name)
	}
	return code
}

// singleDashLong matches a long flag written with one dash ("-out"), as the
// standard flag package accepted before the switch to cobra.
var singleDashLong = regexp.MustCompile(`^-[a-z][a-z0-9]*-?[a-z0-9-]*[a-z0-9](=.*)?$`)

// longFlags rewrites "-name" to "--name" (up to a "--"), so command lines
// written for the former flag package keep working. One-letter flags (-n,
// -y) are left alone.
func longFlags(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) > 2 && a[1] != '-' && singleDashLong.MatchString(a) {
			out[i] = "-" + a
		}
	}
	return out
}

// versionString is the version of this build.
func versionString() string { return version.String() }

// newRoot builds the command tree.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "modexp-token",
		Short: "Administer ModExp Token PKCS#11 tokens",
		Long: `modexp-token administers the tokens of the ModExp Token PKCS#11 module
(libmodexp-pkcs11.so): it initialises tokens, sets PINs, manages keys, backs
tokens up and shows what the module sees. It reads the module's configuration
(MODEXP_TOKEN_CONF, MODEXP_TOKEN_ENGINE), so what it does is what pkcs11-tool
would see.

PINs never come from the command line: --pin-file/--so-pin-file, the
environment (MODEXP_TOKEN_PIN, MODEXP_TOKEN_SO_PIN, MODEXP_TOKEN_NEW_PIN), or a
prompt on the terminal.

Choose a token with --token LABEL, or --slot as pkcs11-tool prints it: the slot
id (decimal, or hex with 0x) or the slot index (0, 1, ...). Without either, the
first slot.

` + exitCodesHelp,
		Version:       versionString(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	root.SetVersionTemplate("modexp-token {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withCode(exitUsage, err) })
	root.AddGroup(&cobra.Group{ID: "token", Title: "Tokens and PINs:"},
		&cobra.Group{ID: "keys", Title: "Keys and backups:"},
		&cobra.Group{ID: "engines", Title: "Engines:"})
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("token", infoCmd(), initCmd(), pinCmd(), tokenCmd())
	add("keys", keysCmd(), backupCmd(), restoreCmd(), storeCmd())
	add("engines", engineCmd(), benchCmd())
	root.AddCommand(manCmd(root))
	return root
}

// noArgs refuses positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q", args[0])
	}
	return nil
}

// group returns a command that only holds subcommands: alone it prints its
// help and fails with a usage error; an unknown word is a usage error.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			names := make([]string, 0, len(cmd.Commands()))
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			if len(args) == 0 {
				return usageErrorf("say which: %s", strings.Join(names, ", "))
			}
			return usageErrorf("unknown command %q (want one of: %s)", args[0], strings.Join(names, ", "))
		},
	}
	c.AddCommand(subs...)
	return c
}

// packagePrefixes are the "pkg: " prefixes the layers below put on their
// errors; for the user they only repeat.
var packagePrefixes = map[string]bool{"token": true, "keystore": true, "config": true, "engine": true}

// oneSentence turns an error chain ("log in: token: login:
// CKR_PIN_INCORRECT: keystore: user PIN (9 tries left): keystore: PIN
// incorrect") into one sentence with its cause: package prefixes and
// repeated words dropped, the CKR_ code once at the end ("log in: user PIN
// (9 tries left): PIN incorrect (CKR_PIN_INCORRECT)"). Hint lines after
// the first line are left alone.
func oneSentence(msg string) string {
	first, rest, hasRest := strings.Cut(msg, "\n")
	var out []string
	seen := map[string]bool{}
	code := ""
	for _, part := range strings.Split(first, ": ") {
		p := strings.TrimSpace(part)
		key := strings.ToLower(strings.ReplaceAll(p, " ", ""))
		switch {
		case p == "" || packagePrefixes[p] || seen[key]:
			continue
		case strings.HasPrefix(p, "CKR_") && !strings.ContainsAny(p, " ("):
			if code == "" {
				code = p
			}
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	s := strings.Join(out, ": ")
	switch {
	case s == "":
		s = code
	case code != "":
		s += " (" + code + ")"
	}
	if hasRest {
		s += "\n" + rest
	}
	return s
}

// explain turns an error into its exit code and a message that says what
// went wrong and, for the usual mistakes, what to do.
func explain(err error) (int, string) {
	raw := err.Error()
	msg := oneSentence(raw)
	code := exitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	var ckErr ck.Error
	if !errors.As(err, &ckErr) {
		if strings.HasPrefix(raw, "unknown command") || strings.HasPrefix(raw, "unknown flag") ||
			strings.HasPrefix(raw, "unknown shorthand flag") {
			code = exitUsage
		}
		if errors.Is(err, keystore.ErrUnavailable) {
			msg += "\n  hint: the etcd cluster did not answer within the slot's etcd_dial_timeout and etcd_request_timeout (3s each by default): check etcd_endpoints, the network and the TLS settings (docs/FLEET.md)"
		}
		return code, msg
	}
	hint := ""
	switch ckErr {
	case ck.CKR_PIN_INCORRECT:
		code, hint = exitPIN, "wrong PIN; each wrong PIN counts towards the lock-out (modexp-token info shows the flags)"
	case ck.CKR_PIN_LOCKED:
		code, hint = exitPIN, "the PIN is locked after too many wrong tries: the SO unlocks it by setting a new one with 'modexp-token pin reset'"
	case ck.CKR_USER_PIN_NOT_INITIALIZED:
		code, hint = exitPIN, "the user PIN is not set: 'modexp-token pin reset' (with the SO PIN) sets it, 'modexp-token init' starts over"
		if strings.Contains(raw, "token not initialised") {
			hint = "the token is not initialised yet: 'modexp-token init --label LABEL' sets it up with its two PINs"
		}
	case ck.CKR_PIN_LEN_RANGE:
		code, hint = exitPIN, "the PIN's length is out of range (modexp-token info shows the allowed lengths)"
	case ck.CKR_TOKEN_NOT_RECOGNIZED:
		hint = "the token file is damaged or not a token file: 'modexp-token restore --in BACKUP' brings a backup back ('modexp-token info' shows the file)"
	case ck.CKR_SLOT_ID_INVALID, ck.CKR_TOKEN_NOT_PRESENT:
		code, hint = exitNotFound, "'modexp-token info' lists the slots"
	case ck.CKR_FUNCTION_FAILED:
		if strings.Contains(raw, "config") {
			code, hint = exitConfig, "'modexp-token info' shows the configuration file in use and what is wrong with it"
		}
	case ck.CKR_TEMPLATE_INCONSISTENT, ck.CKR_ATTRIBUTE_VALUE_INVALID:
		hint = "the token refused the key's attributes"
	case ck.CKR_KEY_SIZE_RANGE:
		hint = "this key size is not supported ('modexp-token info' lists each mechanism's sizes)"
	}
	if ee != nil && ee.code != exitFailure {
		code = ee.code
	}
	if hint != "" {
		msg += "\n  hint: " + hint
	}
	return code, msg
}
