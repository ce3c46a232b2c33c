package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// commandLine matches a modexp-token command line inside a text: the words
// after "modexp-token " up to a quote, a bracket, a semicolon or the end of
// the line.
var commandLine = regexp.MustCompile("modexp-token ([^'\"`)\\];|\\n]*)")

// TestHintsNameRealFlags reads every string of the CLI's code and every
// modexp-token command line of README.md, docs/USAGE.md and docs/CONFIG.md,
// and checks that each command it names exists and has each flag it names.
func TestHintsNameRealFlags(t *testing.T) {
	var texts []string
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					texts = append(texts, s)
				}
			}
			return true
		})
	}
	for _, doc := range []string{"../../README.md", "../../docs/USAGE.md", "../../docs/CONFIG.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	root := newRoot()
	checked := 0
	for _, text := range texts {
		for _, m := range commandLine.FindAllStringSubmatch(text, -1) {
			if problem := checkCommandLine(root, strings.Fields(m[1])); problem != "" {
				t.Errorf("%q: %s", "modexp-token "+m[1], problem)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d command lines found: the scan is broken", checked)
	}
}

// checkCommandLine walks the subcommands named by the leading words of
// args, then checks every --flag after them; "" when all exist.
func checkCommandLine(root *cobra.Command, args []string) string {
	cmd := root
	i := 0
	for ; i < len(args); i++ {
		var next *cobra.Command
		for _, c := range cmd.Commands() {
			if c.Name() == args[i] || c.HasAlias(args[i]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd = next
	}
	for _, a := range args[i:] {
		if a == "|" || a == "&&" || a == "#" || a == "--" {
			break
		}
		if !strings.HasPrefix(a, "--") || len(a) < 3 || strings.ContainsAny(a, "%{$<>") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		name = strings.TrimRight(name, ".,:")
		if name == "help" || name == "version" {
			continue
		}
		if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
			return "'" + cmd.CommandPath() + "' has no flag --" + name
		}
	}
	return ""
}

// TestCheckCommandLine: the checker itself finds a flag that is not there.
func TestCheckCommandLine(t *testing.T) {
	root := newRoot()
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"init --label X --free", true},
		{"init --dry-run", true},
		{"init --frobnicate", false},
		{"keys generate --type rsa:2048 --label web", true},
		{"keys generate --bogus", false},
		{"token delete --yes", true},
		{"info shows the --json flag", true},
	} {
		got := checkCommandLine(root, strings.Fields(tc.line)) == ""
		if got != tc.ok {
			t.Errorf("checkCommandLine(%q) ok = %v, want %v", tc.line, got, tc.ok)
		}
	}
}

// flagMention is a --flag named in a message.
var flagMention = regexp.MustCompile(`(?:^|[\s('"])--([a-z][a-z0-9-]*)`)

// TestHintsOfEveryCommand runs every command with nothing given, on a
// token that is not initialised and on one that is (with no PIN and no
// terminal), and checks that each flag its messages name exists: on the
// command itself, or on the modexp-token command line the message spells.
func TestHintsOfEveryCommand(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "modexp-token.toml")
	if err := os.WriteFile(conf, []byte(testConf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEXP_TOKEN_CONF", conf)
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("HOME", dir)
	for _, env := range []string{"MODEXP_TOKEN_PIN", "MODEXP_TOKEN_SO_PIN", "MODEXP_TOKEN_NEW_PIN", "MODEXP_TOKEN_FROM_PIN"} {
		t.Setenv(env, "")
		os.Unsetenv(env)
	}
	oldTTY, oldTerm := ttyPath, isTerminal
	ttyPath, isTerminal = os.DevNull+"/no-tty", func() bool { return false }
	t.Cleanup(func() { ttyPath, isTerminal = oldTTY, oldTerm })

	var leaves [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, s := range c.Commands() {
			switch s.Name() {
			case "bench", "man", "completion", "help":
				continue // long-running, or not ours
			}
			p := append(append([]string(nil), path...), s.Name())
			if s.HasSubCommands() {
				walk(s, p)
			} else {
				leaves = append(leaves, p)
			}
		}
	}
	root := newRoot()
	walk(root, nil)
	mentions := 0
	// Command lines that get past the usage checks to the questions.
	further := [][]string{{"init", "--label", "t2"}, {"keys", "delete", "--label", "none"}, {"keys", "generate", "--type", "ec"}}
	for _, state := range []string{"fresh", "initialised", "with PINs"} {
		if state == "with PINs" {
			t.Setenv("MODEXP_TOKEN_SO_PIN", "87654321")
			t.Setenv("MODEXP_TOKEN_PIN", "123456")
			leaves = append(leaves, further...)
		}
		if state == "initialised" {
			t.Setenv("MODEXP_TOKEN_SO_PIN", "87654321")
			t.Setenv("MODEXP_TOKEN_PIN", "123456")
			var out, errOut strings.Builder
			if code := run([]string{"init", "--label", "t"}, &out, &errOut); code != 0 {
				t.Fatalf("init: %d %s", code, errOut.String())
			}
			os.Unsetenv("MODEXP_TOKEN_SO_PIN")
			os.Unsetenv("MODEXP_TOKEN_PIN")
		}
		for _, args := range leaves {
			var out, errOut strings.Builder
			run(args, &out, &errOut)
			cmd, _, err := root.Find(args)
			if err != nil {
				t.Fatal(err)
			}
			// The message, less the "modexp-token CMD: " it starts with.
			msg := strings.ReplaceAll(errOut.String(), cmd.CommandPath()+": ", "")
			// One sentence: no package prefix, one CKR_ code at most.
			first, _, _ := strings.Cut(msg, "\n")
			for _, p := range []string{"token: ", "keystore: ", "config: "} {
				if strings.Contains(first, p) {
					t.Errorf("%s (%s): the message repeats a package prefix %q: %s", strings.Join(args, " "), state, p, first)
				}
			}
			if strings.Count(first, "CKR_") > 1 {
				t.Errorf("%s (%s): more than one CKR_ code: %s", strings.Join(args, " "), state, first)
			}
			// Flags inside a spelled-out command line are the command line's.
			for _, m := range commandLine.FindAllStringSubmatch(msg, -1) {
				if problem := checkCommandLine(root, strings.Fields(m[1])); problem != "" {
					t.Errorf("%s (%s): %q: %s", strings.Join(args, " "), state, m[0], problem)
				}
			}
			rest := commandLine.ReplaceAllString(msg, "")
			for _, m := range flagMention.FindAllStringSubmatch(rest, -1) {
				mentions++
				if m[1] == "help" {
					continue
				}
				if cmd.Flags().Lookup(m[1]) == nil && cmd.InheritedFlags().Lookup(m[1]) == nil {
					t.Errorf("%s (%s) says --%s, which it does not have:\n%s", strings.Join(args, " "), state, m[1], msg)
				}
			}
		}
	}
	if mentions == 0 {
		t.Fatal("no message named a flag: the scan is broken")
	}
}

// TestOneSentence: error chains lose their package prefixes and repeats,
// and keep one CKR_ code, at the end.
func TestOneSentence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"log in: token: login: CKR_PIN_INCORRECT: keystore: user PIN (9 tries left): keystore: PIN incorrect",
			"log in: user PIN (9 tries left): PIN incorrect (CKR_PIN_INCORRECT)"},
		{"find objects: token: generation: CKR_DEVICE_ERROR: keystore: /t.db: not a readable bbolt file (invalid database): keystore: token file corrupt",
			"find objects: generation: /t.db: not a readable bbolt file (invalid database): token file corrupt (CKR_DEVICE_ERROR)"},
		{"CKR_SLOT_ID_INVALID", "CKR_SLOT_ID_INVALID"},
		{"--label is required", "--label is required"},
		{"config: read /x.toml: open /x.toml: no such file or directory\n  hint: config: x",
			"read /x.toml: open /x.toml: no such file or directory\n  hint: config: x"},
	} {
		if got := oneSentence(tc.in); got != tc.want {
			t.Errorf("oneSentence(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
