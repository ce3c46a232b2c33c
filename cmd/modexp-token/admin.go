package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/config"
)

// infoReport is what `info` prints (as text, or as JSON with --json).
type infoReport struct {
	Version string       `json:"version"`
	Config  configReport `json:"config"`
	Log     string       `json:"log"`
	Slots   []slotReport `json:"slots"`
}

type configReport struct {
	File    string `json:"file,omitempty"` // "" = built-in default
	From    string `json:"from"`           // how the file was chosen
	Problem string `json:"problem,omitempty"`
}

type slotReport struct {
	Index      int          `json:"index"`
	ID         uint64       `json:"id"`
	IDHex      string       `json:"id_hex"`
	Slot       string       `json:"slot_description,omitempty"`
	Label      string       `json:"token_label,omitempty"`
	TokenFile  string       `json:"token_file"`
	Engine     string       `json:"engine"`
	Model      string       `json:"model,omitempty"`
	Serial     string       `json:"serial,omitempty"`
	Flags      []string     `json:"flags"`
	Sessions   uint64       `json:"sessions"`
	MinPINLen  uint64       `json:"min_pin_len,omitempty"`
	MaxPINLen  uint64       `json:"max_pin_len,omitempty"`
	Problems   []string     `json:"problems,omitempty"`
	Notes      []string     `json:"notes,omitempty"` // states that are no fault (a token not initialised yet)
	Mechanisms []mechReport `json:"mechanisms,omitempty"`
}

type mechReport struct {
	Name    string   `json:"name"`
	MinSize uint64   `json:"min_key_size"`
	MaxSize uint64   `json:"max_key_size"`
	Flags   []string `json:"flags"`
}

func infoCmd() *cobra.Command {
	var mechs, asJSON bool
	c := &cobra.Command{
		Use:   "info",
		Short: "Show the configuration, log, slots, tokens and mechanisms, and any problem with them",
		Long: `info shows what the module would load with this environment: the
configuration file (MODEXP_TOKEN_CONF, or the built-in default), where the
module logs, and each slot with its token file, engine, token state and
mechanisms. Problems (a configuration that does not load, a token file that is
missing, unreadable or damaged, a locked PIN, an engine that failed its
self-test) are named with what to do about them, and so is a token not
initialised yet (a note, not a problem). It exits with 6 if the
configuration does not load, with 1 if it reports any other problem.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := gatherInfo(mechs)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if jerr := enc.Encode(rep); jerr != nil {
					return jerr
				}
			} else {
				printInfo(cmd.OutOrStdout(), rep)
			}
			return err
		},
	}
	c.Flags().BoolVar(&mechs, "mechanisms", true, "list each slot's mechanisms")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// syslogSocket is the system log socket info looks for (tests point it
// elsewhere).
var syslogSocket = config.SyslogSocket

// fallbackLog says where the module's warnings and errors go without a
// log file: the system log when its socket answers, else the per-user file
// (config.FallbackLogTarget, the place cgo/syslog.go writes to).
func fallbackLog() string {
	return config.FallbackLogTarget(syslogSocket) + " (warnings and errors; set " + config.EnvLog + " for a full log)"
}

// gatherInfo builds the report; the error is the configuration's problem.
func gatherInfo(mechs bool) (*infoReport, error) {
	rep := &infoReport{Version: versionString()}
	if f := os.Getenv(config.EnvConf); f != "" {
		rep.Config = configReport{File: f, From: config.EnvConf}
	} else {
		rep.Config = configReport{From: "built-in default (" + config.EnvConf + " is not set): one token in this user's " +
			"data directory; a program running as another user (a server) sees another token, so give both the same " + config.EnvConf}
	}
	cfg, err := config.FromEnv()
	if err != nil {
		rep.Config.Problem = err.Error()
		if errors.Is(err, os.ErrNotExist) {
			rep.Config.Problem += "; create the file or point " + config.EnvConf + " at an existing one"
		} else {
			rep.Config.Problem += "; fix the file (man modexp-token.toml, docs/CONFIG.md: every key)"
		}
		rep.Log = fallbackLog()
		return rep, withCode(exitConfig, fmt.Errorf("the configuration does not load: %w", err))
	}
	if cfg.Log != "" {
		rep.Log = cfg.Log
		if os.Getenv(config.EnvLog) != "" {
			rep.Log += " (" + config.EnvLog + ")"
		}
	} else {
		rep.Log = fallbackLog()
	}
	// Before the module opens (and creates) the token files.
	fileProblems := map[uint64][]string{}
	for _, sc := range cfg.Slots {
		if !sc.Etcd() {
			fileProblems[sc.ID] = tokenFileProblems(sc.TokenFile)
		}
	}
	m, err := token.Load(cfg)
	if err != nil {
		rep.Config.Problem = err.Error() + "; the module refuses to load (C_Initialize fails) until this is fixed"
		for i, sc := range cfg.Slots {
			rep.Slots = append(rep.Slots, slotReport{Index: i, ID: sc.ID, IDHex: fmt.Sprintf("0x%x", sc.ID),
				TokenFile: sc.TokenFile, Engine: sc.Engine, Problems: fileProblems[sc.ID], Flags: []string{}})
		}
		return rep, withCode(exitConfig, fmt.Errorf("the module does not load: %w", err))
	}
	defer m.Close()
	for i, sc := range cfg.Slots {
		sr := slotReport{Index: i, ID: sc.ID, IDHex: fmt.Sprintf("0x%x", sc.ID), TokenFile: sc.TokenFile,
			Engine: sc.Engine, Problems: fileProblems[sc.ID], Flags: []string{}}
		if si, err := m.SlotInfo(sc.ID); err == nil {
			sr.Slot = si.Description
		}
		sr.Problems = append(sr.Problems, engineProblems(m, sc.ID)...)
		ss, _ := m.StoreStatus(sc.ID)
		if !ss.Usable {
			sr.Problems = append(sr.Problems, fmt.Sprintf("token store %s unusable since %s: %s (calls get %s; the module tries it again in the background)",
				sc.StoreName(), ss.Since.UTC().Format(time.RFC3339), ss.Cause, ck.Name("CKR_", ss.Code)))
		}
		ti, err := m.TokenInfo(sc.ID)
		switch {
		case err != nil && !ss.Usable: // said above
		case err != nil && ck.RV(err) == uint64(ck.CKR_TOKEN_NOT_RECOGNIZED):
			sr.Problems = append(sr.Problems, "the token file is damaged or not a token file: 'modexp-token restore --in BACKUP' brings a backup back")
		case err != nil:
			sr.Problems = append(sr.Problems, "token: "+err.Error())
		default:
			sr.Label = strings.TrimSpace(ti.Label)
			sr.Model, sr.Serial = strings.TrimSpace(ti.Model), strings.TrimSpace(ti.SerialNumber)
			sr.Flags = flagNames(tokenFlagNames, ti.Flags)
			sr.Sessions, sr.MinPINLen, sr.MaxPINLen = ti.SessionCount, ti.MinPinLen, ti.MaxPinLen
			switch {
			case ti.Flags&ck.CKF_TOKEN_INITIALIZED == 0:
				sr.Notes = append(sr.Notes, fmt.Sprintf("not initialised: 'modexp-token init --slot 0x%x --label LABEL'", sc.ID))
			case ti.Flags&ck.CKF_USER_PIN_INITIALIZED == 0:
				sr.Problems = append(sr.Problems, fmt.Sprintf("user PIN not set: 'modexp-token pin reset --slot 0x%x'", sc.ID))
			case ti.Flags&ck.CKF_USER_PIN_LOCKED != 0:
				sr.Problems = append(sr.Problems, fmt.Sprintf("user PIN locked: 'modexp-token pin reset --slot 0x%x' (needs the SO PIN)", sc.ID))
			}
		}
		if mechs {
			list, err := m.MechanismList(sc.ID)
			if err != nil {
				return rep, fmt.Errorf("slot 0x%x mechanisms: %w", sc.ID, err)
			}
			for _, mech := range list {
				mi, err := m.MechanismInfo(sc.ID, mech)
				if err != nil {
					return rep, fmt.Errorf("slot 0x%x mechanism %s: %w", sc.ID, ck.Name("CKM_", mech), err)
				}
				sr.Mechanisms = append(sr.Mechanisms, mechReport{Name: ck.Name("CKM_", mech),
					MinSize: mi.MinKeySize, MaxSize: mi.MaxKeySize, Flags: flagNames(mechFlagNames, mi.Flags)})
			}
		}
		rep.Slots = append(rep.Slots, sr)
	}
	var problems []string
	for _, sr := range rep.Slots {
		for _, p := range sr.Problems {
			problems = append(problems, fmt.Sprintf("slot 0x%x: %s", sr.ID, p))
		}
	}
	switch len(problems) {
	case 0:
		return rep, nil
	case 1:
		return rep, fmt.Errorf("one problem: %s", problems[0])
	}
	return rep, fmt.Errorf("%d problems, the first: %s", len(problems), problems[0])
}

// engineProblems says what is wrong with a slot's engine: a failed
// self-test at open, pool members that are down.
func engineProblems(m *token.Module, slot uint64) []string {
	st, err := m.EngineStatus(slot)
	if err != nil {
		return []string{"engine: " + err.Error()}
	}
	var out []string
	if st.SelfTest != "passed" {
		out = append(out, fmt.Sprintf("engine %s self-test: %s (fallback %s)", st.Engine, st.SelfTest, st.Fallback))
	}
	for _, mb := range st.Members {
		switch {
		case !mb.Open:
			out = append(out, fmt.Sprintf("engine pool member %s not open: %s", mb.Spec, mb.LastOpen))
		case mb.Down:
			out = append(out, fmt.Sprintf("engine pool member %s is cooling down after a failure", mb.Spec))
		}
	}
	return out
}

// tokenFileProblems says what is wrong with a token file before the module
// opens it (which creates a missing one: a missing file is no problem).
func tokenFileProblems(path string) []string {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // a fresh token: not a problem (the note says it is not initialised)
	case err != nil:
		return []string{"cannot see the token file: " + err.Error()}
	case fi.IsDir():
		return []string{"the token file is a directory: token_file names a file"}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return []string{fmt.Sprintf("cannot open the token file for reading and writing as this user: %v (check its owner and mode)", err)}
	}
	f.Close()
	return nil
}

func printInfo(w io.Writer, rep *infoReport) {
	fmt.Fprintf(w, "modexp-token %s\n", rep.Version)
	if rep.Config.File != "" {
		fmt.Fprintf(w, "config:   %s (from %s)\n", rep.Config.File, rep.Config.From)
	} else {
		fmt.Fprintf(w, "config:   %s\n", rep.Config.From)
	}
	if rep.Config.Problem != "" {
		fmt.Fprintf(w, "  PROBLEM: %s\n", rep.Config.Problem)
	}
	fmt.Fprintf(w, "log:      %s\n", rep.Log)
	for _, s := range rep.Slots {
		fmt.Fprintf(w, "\nSlot %d (0x%x): %s\n", s.Index, s.ID, s.Slot)
		fmt.Fprintf(w, "  token file:   %s\n  engine:       %s\n", s.TokenFile, s.Engine)
		if s.Label != "" || len(s.Flags) > 0 {
			fmt.Fprintf(w, "  token label:  %s\n  model:        %s\n  serial:       %s\n  flags:        %s\n",
				s.Label, s.Model, s.Serial, strings.Join(s.Flags, ", "))
			fmt.Fprintf(w, "  sessions:     %d\n  PIN length:   %d..%d\n", s.Sessions, s.MinPINLen, s.MaxPINLen)
		}
		for _, p := range s.Problems {
			fmt.Fprintf(w, "  PROBLEM: %s\n", p)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  NOTE: %s\n", n)
		}
		if len(s.Mechanisms) > 0 {
			fmt.Fprintln(w, "  mechanisms:")
			for _, m := range s.Mechanisms {
				fmt.Fprintf(w, "    %-28s %5d..%-5d %s\n", m.Name, m.MinSize, m.MaxSize, strings.Join(m.Flags, ","))
			}
		}
	}
}

type flagName struct {
	bit  uint64
	name string
}

var tokenFlagNames = []flagName{
	{ck.CKF_RNG, "rng"}, {ck.CKF_LOGIN_REQUIRED, "login-required"},
	{ck.CKF_USER_PIN_INITIALIZED, "user-pin-initialized"}, {ck.CKF_TOKEN_INITIALIZED, "token-initialized"},
	{ck.CKF_USER_PIN_COUNT_LOW, "user-pin-count-low"}, {ck.CKF_USER_PIN_FINAL_TRY, "user-pin-final-try"},
	{ck.CKF_USER_PIN_LOCKED, "user-pin-locked"}, {ck.CKF_SO_PIN_COUNT_LOW, "so-pin-count-low"},
	{ck.CKF_SO_PIN_FINAL_TRY, "so-pin-final-try"}, {ck.CKF_SO_PIN_LOCKED, "so-pin-locked"},
}

// mechFlagNames names every CK_MECHANISM_INFO flag of the standard
// (TestMechanismNames checks that the registry uses no other).
var mechFlagNames = []flagName{
	{ck.CKF_HW, "hw"}, {ck.CKF_MESSAGE_ENCRYPT, "message-encrypt"}, {ck.CKF_MESSAGE_DECRYPT, "message-decrypt"},
	{ck.CKF_MESSAGE_SIGN, "message-sign"}, {ck.CKF_MESSAGE_VERIFY, "message-verify"}, {ck.CKF_MULTI_MESSAGE, "multi-message"},
	{ck.CKF_ENCRYPT, "encrypt"}, {ck.CKF_DECRYPT, "decrypt"}, {ck.CKF_DIGEST, "digest"},
	{ck.CKF_SIGN, "sign"}, {ck.CKF_SIGN_RECOVER, "sign-recover"}, {ck.CKF_VERIFY, "verify"},
	{ck.CKF_VERIFY_RECOVER, "verify-recover"}, {ck.CKF_GENERATE, "generate"}, {ck.CKF_GENERATE_KEY_PAIR, "generate-key-pair"},
	{ck.CKF_WRAP, "wrap"}, {ck.CKF_UNWRAP, "unwrap"}, {ck.CKF_DERIVE, "derive"},
	{ck.CKF_EC_F_P, "ec-f-p"}, {1 << 21, "ec-f-2m"}, {1 << 22, "ec-ecparameters"}, {ck.CKF_EC_NAMEDCURVE, "ec-named-curve"},
	{ck.CKF_EC_UNCOMPRESS, "ec-uncompress"}, {ck.CKF_EC_COMPRESS, "ec-compress"}, {ck.CKF_EXTENSION, "extension"},
	{ck.CKF_ENCAPSULATE, "encapsulate"}, {ck.CKF_DECAPSULATE, "decapsulate"},
}

func flagNames(names []flagName, f uint64) []string {
	out := []string{}
	for _, n := range names {
		if f&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func initCmd() *cobra.Command {
	var label, soFile, userFile string
	var free bool
	var policy keystore.Policy
	c := &cobra.Command{
		Use:   "init --label LABEL [--slot S | --token LABEL | --free]",
		Short: "Initialise a token (wipes it) and set its SO PIN and user PIN",
		Long: `init initialises the token of one slot, as pkcs11-tool --init-token and
--init-pin do together: it names the token, sets the SO PIN and the user PIN.
Everything is checked first (label, both PINs and their lengths, the token
file); nothing changes unless all of it is right. Re-initialising a token
that holds keys wipes them: it asks first (or --yes). --dry-run checks
everything and says what it would do, changing nothing.

--free picks the first slot whose token is not initialised (SoftHSMv2's
--init-token --free), and when there is none adds one: to the file
MODEXP_TOKEN_CONF names (written if missing, the token file LABEL.db
beside it), else to $XDG_CONFIG_HOME/modexp-token/modexp-token.toml (with
the built-in default slot, so its token stays; set MODEXP_TOKEN_CONF to it).
A token made with --free is a test token: without --kdf-* its PIN records
take Argon2id at the floor's time and memory (t=2, 19 MiB, in 2 lanes), so
that it is ready in a fraction of a second; a slot it adds says so in its
kdf_* keys. 'modexp-token token add' adds a slot by hand.

The PIN policy is stored in the token: --max-pin-tries (consecutive wrong
PINs before lockout) and the Argon2id parameters of PIN records
(--pin-cost floor|rfc9106|high, or --kdf-time, --kdf-memory-kib and
--kdf-threads; at least t=2 and 19 MiB): what an attacker holding only the
token file pays per PIN guess (docs/THREATS.md).
Unset, they come from the slot's configuration (max_pin_tries, kdf_*),
else the defaults (10 tries; t=3, 64 MiB, 4 lanes). A process using the
token later applies the token's policy, or its own configuration where
that is stricter, never looser.`,
		Example: `  modexp-token init --label web
  MODEXP_TOKEN_SO_PIN=87654321 MODEXP_TOKEN_PIN=123456 modexp-token init --label web --free`,
		Args: noArgs,
	}
	t := addTargetFlags(c)
	sf := addSafetyFlags(c)
	c.Flags().StringVar(&label, "label", "", "token `LABEL` (required, at most 32 bytes)")
	c.Flags().StringVar(&soFile, "so-pin-file", "", "`FILE` holding the SO PIN (else MODEXP_TOKEN_SO_PIN, else a prompt)")
	c.Flags().StringVar(&userFile, "pin-file", "", "`FILE` holding the user PIN (else MODEXP_TOKEN_PIN, else a prompt)")
	c.Flags().BoolVar(&free, "free", false, "use the first slot whose token is not initialised")
	c.Flags().IntVar(&policy.MaxPINTries, "max-pin-tries", 0, "consecutive wrong PINs before lockout, stored in the token (default: the configuration's, else 10)")
	c.Flags().Uint32Var(&policy.KDF.Time, "kdf-time", 0, "Argon2id passes of PIN records, stored in the token (with --kdf-memory-kib and --kdf-threads)")
	c.Flags().Uint32Var(&policy.KDF.MemoryKiB, "kdf-memory-kib", 0, "Argon2id memory in KiB of PIN records, stored in the token")
	c.Flags().Uint8Var(&policy.KDF.Threads, "kdf-threads", 0, "Argon2id lanes of PIN records, stored in the token")
	var pinCost string
	c.Flags().StringVar(&pinCost, "pin-cost", "", "Argon2id cost `PROFILE` of PIN records, stored in the token: floor (t=2, 19 MiB), rfc9106 (t=3, 64 MiB, 4 lanes) or high (t=4, 256 MiB, 4 lanes)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if pinCost != "" {
			p, ok := keystore.PINCostProfiles[pinCost]
			switch {
			case !ok:
				return usageErrorf("--pin-cost %q: want floor, rfc9106 or high", pinCost)
			case policy.KDF != (keystore.KDFParams{}):
				return usageErrorf("--pin-cost and --kdf-time, --kdf-memory-kib, --kdf-threads exclude each other")
			}
			policy.KDF = p
		}
		k := policy.KDF
		if k != (keystore.KDFParams{}) && (k.Time == 0 || k.MemoryKiB == 0 || k.Threads == 0) {
			return usageErrorf("--kdf-time, --kdf-memory-kib and --kdf-threads go together")
		}
		if policy.MaxPINTries < 0 {
			return usageErrorf("--max-pin-tries must be positive")
		}
		if label == "" {
			return usageErrorf("--label is required (the token's name, at most 32 bytes)")
		}
		if len(label) > 32 {
			return usageErrorf("--label %q is %d bytes long; at most 32", label, len(label))
		}
		if free && (t.slot != "" || t.token != "") {
			return usageErrorf("--free picks the slot itself: give it without --slot or --token")
		}
		var slot uint64
		added := ""
		if path := os.Getenv(config.EnvConf); free && !sf.dryRun && path != "" {
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				// A configuration to write: the new slot is its first.
				_, id, _, err := addFreeSlot(label, freePolicyKDF(policy.KDF))
				if err != nil {
					return err
				}
				added = fmt.Sprintf("wrote %s with slot 0x%x", path, id)
			}
		}
		m, err := openModule()
		if err != nil {
			return err
		}
		defer func() { m.Close() }()
		if free {
			policy.KDF = freePolicyKDF(policy.KDF)
			slot, err = freeSlot(m)
			var ee *exitError
			if errors.As(err, &ee) && ee.code == exitNotFound && sf.dryRun {
				where := os.Getenv(config.EnvConf)
				if where == "" {
					where = "$XDG_CONFIG_HOME/modexp-token/modexp-token.toml"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "every slot's token is initialised: would add a slot for token %q to %s and initialise it\ndry run: nothing changed\n", label, where)
				return nil
			}
			if errors.As(err, &ee) && ee.code == exitNotFound {
				m.Close()
				path, id, mustSet, err := addFreeSlot(label, policy.KDF)
				if err != nil {
					return err
				}
				os.Setenv(config.EnvConf, path)
				if m, err = openModule(); err != nil {
					return err
				}
				slot, added = id, fmt.Sprintf("added slot 0x%x to %s", id, path)
				if mustSet {
					added += fmt.Sprintf("\nthe module sees it with %s set: export %s=%s", config.EnvConf, config.EnvConf, shellQuote(path))
				}
			} else if err != nil {
				return err
			}
		} else if slot, err = t.resolve(m); err != nil {
			return err
		}
		ti, err := m.TokenInfo(slot)
		if err != nil {
			return fmt.Errorf("slot 0x%x: %w", slot, err)
		}
		so, err := soPIN(soFile).read(true)
		if err != nil {
			return err
		}
		defer wipe(so)
		user, err := userPIN(userFile).read(true)
		if err != nil {
			return err
		}
		defer wipe(user)
		for _, p := range []struct {
			what string
			pin  []byte
		}{{"SO PIN", so}, {"user PIN", user}} {
			if n := uint64(len(p.pin)); n < ti.MinPinLen || n > ti.MaxPinLen {
				return withCode(exitPIN, fmt.Errorf("the %s has %d characters; this token takes %d to %d (nothing was changed)",
					p.what, n, ti.MinPinLen, ti.MaxPinLen))
			}
		}
		if sf.dryRun {
			what := "would initialise"
			if ti.Flags&ck.CKF_TOKEN_INITIALIZED != 0 {
				what = fmt.Sprintf("would wipe token %q (every key and certificate in it) and initialise", strings.TrimSpace(ti.Label))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s slot 0x%x as token %q with the two PINs given (checked)\ndry run: nothing changed\n", what, slot, label)
			return nil
		}
		if ti.Flags&ck.CKF_TOKEN_INITIALIZED != 0 {
			if err := sf.confirm(cmd.ErrOrStderr(), fmt.Sprintf("Slot 0x%x holds token %q: re-initialising it deletes all its keys and certificates. Go on?",
				slot, strings.TrimSpace(ti.Label))); err != nil {
				return err
			}
		}
		if err := m.InitTokenPolicy(slot, so, label, policy); err != nil {
			return fmt.Errorf("initialise the token in slot 0x%x: %w", slot, err)
		}
		s, err := openSession(m, slot, nil)
		if err != nil {
			return fmt.Errorf("token initialised with its SO PIN, but the user PIN is not set (%w); set it with 'modexp-token pin reset --slot 0x%x'", err, slot)
		}
		defer s.close()
		if err := m.Login(s.h, ck.CKU_SO, so); err != nil {
			return fmt.Errorf("token initialised with its SO PIN, but the SO login to set the user PIN failed (%w); set it with 'modexp-token pin reset --slot 0x%x'", err, slot)
		}
		if err := m.InitPIN(s.h, user); err != nil {
			return fmt.Errorf("token initialised with its SO PIN, but the user PIN was refused (%w); set it with 'modexp-token pin reset --slot 0x%x'", err, slot)
		}
		_ = m.Logout(s.h)
		if added != "" {
			fmt.Fprintln(cmd.OutOrStdout(), added)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "token %q initialised in slot 0x%x\n", label, slot)
		return nil
	}
	return c
}

// freeSlot returns the first slot whose token is not initialised.
func freeSlot(m *token.Module) (uint64, error) {
	for _, id := range m.SlotList(false) {
		ti, err := m.TokenInfo(id)
		if err == nil && ti.Flags&ck.CKF_TOKEN_INITIALIZED == 0 {
			return id, nil
		}
	}
	return 0, notFoundf("every slot's token is initialised: 'modexp-token token add --label LABEL' adds a slot to the configuration")
}

func soPIN(file string) pinSource {
	return pinSource{"SO PIN", file, "MODEXP_TOKEN_SO_PIN", "so-pin-file"}
}
func userPIN(file string) pinSource {
	return pinSource{"user PIN", file, "MODEXP_TOKEN_PIN", "pin-file"}
}
func newPIN(file string) pinSource {
	return pinSource{"new PIN", file, "MODEXP_TOKEN_NEW_PIN", "new-pin-file"}
}

func pinCmd() *cobra.Command {
	var asSO bool
	var soFile, oldFile, newFile string
	change := &cobra.Command{
		Use:   "change [--so]",
		Short: "Change the user PIN (or with --so the SO PIN)",
		Long: `change sets a new PIN after checking the current one. The current PIN
comes from --pin-file (--so-pin-file with --so), MODEXP_TOKEN_PIN
(MODEXP_TOKEN_SO_PIN) or a prompt; the new one from --new-pin-file,
MODEXP_TOKEN_NEW_PIN or a prompt.`,
		Args: noArgs,
	}
	ct := addTargetFlags(change)
	change.Flags().BoolVar(&asSO, "so", false, "change the SO PIN instead of the user PIN")
	change.Flags().StringVar(&soFile, "so-pin-file", "", "`FILE` holding the current SO PIN (with --so)")
	change.Flags().StringVar(&oldFile, "pin-file", "", "`FILE` holding the current user PIN")
	change.Flags().StringVar(&newFile, "new-pin-file", "", "`FILE` holding the new PIN")
	change.RunE = func(cmd *cobra.Command, args []string) error {
		m, s, err := targetSession(ct, nil)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		oldSrc, who, user := userPIN(oldFile), "user PIN", ck.CKU_USER
		if asSO {
			oldSrc, who, user = soPIN(soFile), "SO PIN", ck.CKU_SO
		}
		old, err := oldSrc.read(false)
		if err != nil {
			return err
		}
		defer wipe(old)
		np, err := newPIN(newFile).read(true)
		if err != nil {
			return err
		}
		defer wipe(np)
		if user == ck.CKU_SO {
			if err := m.Login(s.h, ck.CKU_SO, old); err != nil {
				return fmt.Errorf("SO login: %w", err)
			}
		}
		if err := m.SetPIN(s.h, old, np); err != nil {
			return fmt.Errorf("change the %s: %w", who, err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s changed\n", who)
		return nil
	}

	var rsoFile, rnewFile string
	reset := &cobra.Command{
		Use:   "reset",
		Short: "Set a new user PIN with the SO PIN (unlocks a locked user PIN)",
		Long: `reset logs in as the security officer (SO PIN from --so-pin-file,
MODEXP_TOKEN_SO_PIN or a prompt) and sets a new user PIN (--new-pin-file,
MODEXP_TOKEN_NEW_PIN or a prompt): the way back from a forgotten or locked
user PIN, or from an init that stopped before the user PIN was set.`,
		Args: noArgs,
	}
	rt := addTargetFlags(reset)
	reset.Flags().StringVar(&rsoFile, "so-pin-file", "", "`FILE` holding the SO PIN")
	reset.Flags().StringVar(&rnewFile, "new-pin-file", "", "`FILE` holding the new user PIN")
	reset.RunE = func(cmd *cobra.Command, args []string) error {
		m, s, err := targetSession(rt, nil)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		so, err := soPIN(rsoFile).read(false)
		if err != nil {
			return err
		}
		defer wipe(so)
		np, err := newPIN(rnewFile).read(true)
		if err != nil {
			return err
		}
		defer wipe(np)
		if err := m.Login(s.h, ck.CKU_SO, so); err != nil {
			return fmt.Errorf("SO login: %w", err)
		}
		if err := m.InitPIN(s.h, np); err != nil {
			return fmt.Errorf("reset the user PIN: %w", err)
		}
		fmt.Fprintln(cmd.OutOrStdout(), "user PIN reset")
		return nil
	}
	return group("pin", "Change a PIN, or let the SO set a new user PIN", change, reset)
}

// targetSession loads the module, resolves the target and opens a R/W
// session (logged in when login is set). A token that is not initialised
// is an error that says so. The caller closes both.
func targetSession(t *target, login *pinSource) (*token.Module, *session, error) {
	m, err := openModule()
	if err != nil {
		return nil, nil, err
	}
	slot, err := t.resolve(m)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	if err := initialised(m, slot); err != nil {
		m.Close()
		return nil, nil, err
	}
	s, err := openSession(m, slot, login)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}

func tokenCmd() *cobra.Command {
	var label, file, engineSpec string
	add := &cobra.Command{
		Use:   "add --label LABEL [--file PATH] [--engine SPEC]",
		Short: "Add a slot (a new token) to the configuration file",
		Long: `add appends a [[slot]] to the configuration file named by
MODEXP_TOKEN_CONF (created if it does not exist), checks that the result
loads, and prints the slot's ID. The token file defaults to LABEL.db beside
the configuration file. Then 'modexp-token init --free' (or --slot ID)
initialises it.`,
		Example: `  MODEXP_TOKEN_CONF=$HOME/.config/modexp-token.toml modexp-token token add --label second`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return addSlot(cmd.OutOrStdout(), label, file, engineSpec)
		},
	}
	add.Flags().StringVar(&label, "label", "", "slot and token `LABEL` (required, at most 32 bytes)")
	add.Flags().StringVar(&file, "file", "", "token file `PATH` (default: LABEL.db beside the configuration file)")
	add.Flags().StringVar(&engineSpec, "engine", "", "engine `SPEC` (default soft)")

	del := &cobra.Command{
		Use:   "delete [--slot S | --token LABEL] [--yes] [--keep-slot]",
		Short: "Delete a token: its file, with every key and certificate, and its slot (SoftHSMv2's --delete-token)",
		Long: `delete removes the token file of one slot, and with it every key,
certificate and both PINs, and takes the slot out of the configuration file
(MODEXP_TOKEN_CONF; the other slots and the comments stay as written).
With --keep-slot, or when it is the only slot (a configuration needs one),
the slot stays, with an uninitialised token. It says what will go and asks
first (--yes or --force for scripts); --dry-run only says. A backup first
('modexp-token backup --out FILE') keeps a way back.`,
		Args: noArgs,
	}
	t := addTargetFlags(del)
	sf := addSafetyFlags(del)
	var keepSlot bool
	del.Flags().BoolVarP(&sf.yes, "force", "f", false, "the same as --yes")
	del.Flags().BoolVar(&keepSlot, "keep-slot", false, "keep the slot in the configuration, with an uninitialised token")
	del.RunE = func(cmd *cobra.Command, args []string) error {
		m, err := openModule()
		if err != nil {
			return err
		}
		slot, err := t.resolve(m)
		if err != nil {
			m.Close()
			return err
		}
		desc := fmt.Sprintf("slot 0x%x", slot)
		if ti, err := m.TokenInfo(slot); err == nil && ti.Flags&ck.CKF_TOKEN_INITIALIZED != 0 {
			desc = fmt.Sprintf("token %q in %s", strings.TrimSpace(ti.Label), desc)
		}
		m.Close()
		cfg, err := loadConfig()
		if err != nil {
			return err
		}
		index := -1
		for i, sc := range cfg.Slots {
			if sc.ID == slot {
				index = i
			}
		}
		if index < 0 {
			return notFoundf("no slot 0x%x in the configuration", slot)
		}
		sc := cfg.Slots[index]
		if sc.Etcd() {
			return fmt.Errorf("slot 0x%x: the token is in etcd (%s): delete removes token files; re-initialise it (modexp-token init), or clear the prefix with etcdctl del --prefix (docs/FLEET.md)", slot, sc.StoreName())
		}
		// What happens to the slot.
		var newText, slotFate string
		switch {
		case keepSlot:
			slotFate = "the slot stays in the configuration (--keep-slot), with an uninitialised token"
		case cfg.Source == "":
			slotFate = "the slot is the built-in default's (" + config.EnvConf + " is not set): it stays, with an uninitialised token"
		case len(cfg.Slots) == 1:
			slotFate = "the slot stays in " + cfg.Source + ", with an uninitialised token: it is the only one, and a configuration needs one"
		default:
			old, err := os.ReadFile(cfg.Source)
			if err != nil {
				return withCode(exitConfig, fmt.Errorf("read the configuration: %w", err))
			}
			if newText, err = removeSlot(string(old), index); err != nil {
				return withCode(exitConfig, fmt.Errorf("take slot 0x%x out of %s: %w", slot, cfg.Source, err))
			}
			if _, err := config.Parse([]byte(newText), filepath.Dir(cfg.Source)); err != nil {
				return withCode(exitConfig, fmt.Errorf("%s without slot 0x%x would not load (nothing deleted): %w", cfg.Source, slot, err))
			}
			slotFate = "the slot goes from " + cfg.Source
		}
		w := cmd.OutOrStdout()
		fmt.Fprintf(w, "will delete %s: %s (every key, certificate and PIN in it); %s\n", desc, sc.TokenFile, slotFate)
		if sf.dryRun {
			fmt.Fprintln(w, "dry run: nothing deleted")
			return nil
		}
		if err := sf.confirm(cmd.ErrOrStderr(), "Delete it?"); err != nil {
			return err
		}
		if newText != "" {
			if _, err := writeConfig(cfg.Source, newText, len(cfg.Slots)-1); err != nil {
				return err
			}
		}
		if err := os.Remove(sc.TokenFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("delete %s: %w", sc.TokenFile, err)
		}
		fmt.Fprintf(w, "deleted %s\n", sc.TokenFile)
		if newText != "" {
			fmt.Fprintf(w, "removed slot 0x%x from %s\n", slot, cfg.Source)
		}
		return nil
	}
	return group("token", "Add a token to the configuration, or delete one", add, del)
}

// addSlot appends a slot to the configuration file named by
// MODEXP_TOKEN_CONF and checks the result.
func addSlot(w io.Writer, label, file, engineSpec string) error {
	if label == "" || len(label) > 32 {
		return usageErrorf("--label is required and at most 32 bytes")
	}
	path := os.Getenv(config.EnvConf)
	if path == "" {
		return withCode(exitConfig, fmt.Errorf("%s is not set: the built-in default configuration has no file to add to; set %s=PATH (created if missing) here and for the programs loading the module", config.EnvConf, config.EnvConf))
	}
	if file == "" {
		file = filepath.Join(filepath.Dir(path), fileName(label)+".db")
	}
	id, file, err := appendSlot(path, "", label, file, engineSpec, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "added slot 0x%x (%q, token file %s) to %s\nnext: modexp-token init --slot 0x%x --label %s\n",
		id, label, file, path, id, shellQuote(label))
	return nil
}

// fileName makes a token label a file name.
func fileName(label string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == ' ' {
			return '_'
		}
		return r
	}, label)
}

// appendSlot appends a [[slot]] with label, token file and engine (""
// for the default) to the configuration file at path, created with head
// first when it does not exist, and returns the new slot's ID and its
// absolute token file.
func appendSlot(path, head, label, file, engineSpec, extra string) (uint64, string, error) {
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		old = []byte(head)
	} else if err != nil {
		return 0, "", withCode(exitConfig, fmt.Errorf("read %s: %w", path, err))
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	before := 0
	if len(old) > 0 {
		if c, err := config.Parse(old, filepath.Dir(path)); err == nil {
			before = len(c.Slots)
		}
	}
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += fmt.Sprintf("\n[[slot]]\nlabel = %q\ntoken_file = %q\n", label, file)
	if engineSpec != "" {
		text += fmt.Sprintf("engine = %q\n", engineSpec)
	}
	text += extra
	cfg, err := writeConfig(path, text, before+1)
	if err != nil {
		return 0, "", err
	}
	id := config.DeriveSlotID(file)
	for _, s := range cfg.Slots {
		if s.TokenFile == filepath.Clean(file) {
			id = s.ID
		}
	}
	return id, file, nil
}

// addFreeSlot adds a slot for init --free when every slot's token is
// initialised: to the file MODEXP_TOKEN_CONF names (created if missing,
// the token file LABEL.db beside it); without MODEXP_TOKEN_CONF, to
// $XDG_CONFIG_HOME/modexp-token/modexp-token.toml, written with the
// built-in default slot first so that its token stays, and the token file
// in the data directory beside the default token. The slot's kdf_* are
// kdf's (a slot's configuration may only make the token's PIN cost
// stricter: without them the keystore's default would apply). It returns
// the file, the slot ID, and whether MODEXP_TOKEN_CONF must be set to see
// it.
func addFreeSlot(label string, kdf keystore.KDFParams) (path string, id uint64, mustSet bool, err error) {
	path = os.Getenv(config.EnvConf)
	head := ""
	var file string
	if path != "" {
		file = filepath.Join(filepath.Dir(path), fileName(label)+".db")
	} else {
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", 0, false, withCode(exitConfig, fmt.Errorf("no configuration directory for a new slot: %w; set %s", err, config.EnvConf))
		}
		path, mustSet = filepath.Join(dir, "modexp-token", "modexp-token.toml"), true
		def, err := config.DefaultTokenFile()
		if err != nil {
			return "", 0, false, withCode(exitConfig, err)
		}
		head = fmt.Sprintf("# Written by modexp-token init --free. The module reads it when %s names it.\n\n[[slot]]\nlabel = %q\ntoken_file = %q\n",
			config.EnvConf, config.DefaultLabel, def)
		file = filepath.Join(filepath.Dir(def), fileName(label)+".db")
	}
	if _, err := os.Stat(file); err == nil {
		return "", 0, false, fmt.Errorf("a new slot for %q would use %s, which exists: give the slot another --label, or add it with 'modexp-token token add --label %s --file PATH'", label, file, shellQuote(label))
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", 0, false, fmt.Errorf("token directory: %w", err)
	}
	extra := fmt.Sprintf("kdf_time = %d\nkdf_memory_kib = %d\nkdf_threads = %d\n", kdf.Time, kdf.MemoryKiB, kdf.Threads)
	id, _, err = appendSlot(path, head, label, file, "", extra)
	return path, id, mustSet, err
}

// shellQuote quotes s for a shell command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// freeKDF is the Argon2id cost of the PIN records of a token made by
// init --free without --kdf-*: the time and memory of the floor keystore
// accepts (t=2, 19 MiB, keystore.MinKDFParams), which an attacker with the
// file still pays per guess, in two lanes, so that two cores share the
// work of the three derivations of an init. The seam for the PIN cost
// profiles of the login work (init --pin-cost): a profile named there
// replaces this.
var freeKDF = keystore.KDFParams{Time: keystore.MinKDFParams.Time, MemoryKiB: keystore.MinKDFParams.MemoryKiB, Threads: 2}

// freePolicyKDF is the Argon2id cost init --free gives: the --kdf-* flags'
// when given, else freeKDF.
func freePolicyKDF(k keystore.KDFParams) keystore.KDFParams {
	if k == (keystore.KDFParams{}) {
		return freeKDF
	}
	return k
}
