package main

import (
	"fmt"
	"io"

	"github.com/modexp-token/modexp-token/token/ck"
)

// runInfo prints the module, every slot and token, and the mechanisms.
func runInfo(args []string, stdout io.Writer) error {
	fs := newFlags("info")
	mechs := fs.Bool("mechanisms", true, "list each slot's mechanisms")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, err := openModule()
	if err != nil {
		return err
	}
	defer m.Close()
	mi := m.Info()
	fmt.Fprintf(stdout, "%s — %s %d.%d (Cryptoki %d.%d)\n", mi.ManufacturerID, mi.LibraryDescription,
		mi.LibraryVersion.Major, mi.LibraryVersion.Minor, mi.CryptokiVersion.Major, mi.CryptokiVersion.Minor)
	for _, slot := range m.SlotList(false) {
		si, err := m.SlotInfo(slot)
		if err != nil {
			return fmt.Errorf("slot %d: %w", slot, err)
		}
		fmt.Fprintf(stdout, "\nSlot %d: %s\n", slot, si.Description)
		ti, err := m.TokenInfo(slot)
		if err != nil {
			fmt.Fprintf(stdout, "  token: %v\n", err)
			continue
		}
		fmt.Fprintf(stdout, "  token label:  %s\n  model:        %s\n  serial:       %s\n  flags:        %s\n",
			ti.Label, ti.Model, ti.SerialNumber, tokenFlags(ti.Flags))
		fmt.Fprintf(stdout, "  sessions:     %d (%d R/W)\n  PIN length:   %d..%d\n",
			ti.SessionCount, ti.RwSessionCount, ti.MinPinLen, ti.MaxPinLen)
		if !*mechs {
			continue
		}
		list, err := m.MechanismList(slot)
		if err != nil {
			return fmt.Errorf("slot %d mechanisms: %w", slot, err)
		}
		fmt.Fprintln(stdout, "  mechanisms:")
		for _, mech := range list {
			info, err := m.MechanismInfo(slot, mech)
			if err != nil {
				return fmt.Errorf("slot %d mechanism %s: %w", slot, ck.Name("CKM_", mech), err)
			}
			fmt.Fprintf(stdout, "    %-28s %5d..%-5d %s\n", ck.Name("CKM_", mech), info.MinKeySize, info.MaxKeySize, mechFlags(info.Flags))
		}
	}
	return nil
}

var tokenFlagNames = []struct {
	bit  uint64
	name string
}{
	{ck.CKF_RNG, "rng"}, {ck.CKF_LOGIN_REQUIRED, "login-required"},
	{ck.CKF_USER_PIN_INITIALIZED, "user-pin-initialized"}, {ck.CKF_TOKEN_INITIALIZED, "token-initialized"},
	{ck.CKF_USER_PIN_COUNT_LOW, "user-pin-count-low"}, {ck.CKF_USER_PIN_FINAL_TRY, "user-pin-final-try"},
	{ck.CKF_USER_PIN_LOCKED, "user-pin-locked"}, {ck.CKF_SO_PIN_COUNT_LOW, "so-pin-count-low"},
	{ck.CKF_SO_PIN_FINAL_TRY, "so-pin-final-try"}, {ck.CKF_SO_PIN_LOCKED, "so-pin-locked"},
}

func tokenFlags(f uint64) string {
	s := ""
	for _, n := range tokenFlagNames {
		if f&n.bit != 0 {
			if s != "" {
				s += ", "
			}
			s += n.name
		}
	}
	return s
}

var mechFlagNames = []struct {
	bit  uint64
	name string
}{
	{ck.CKF_ENCRYPT, "encrypt"}, {ck.CKF_DECRYPT, "decrypt"}, {ck.CKF_DIGEST, "digest"},
	{ck.CKF_SIGN, "sign"}, {ck.CKF_VERIFY, "verify"}, {ck.CKF_GENERATE_KEY_PAIR, "generate-key-pair"},
	{ck.CKF_EC_F_P, "ec-f-p"}, {ck.CKF_EC_NAMEDCURVE, "ec-named-curve"}, {ck.CKF_EC_UNCOMPRESS, "ec-uncompress"},
}

func mechFlags(f uint64) string {
	s := ""
	for _, n := range mechFlagNames {
		if f&n.bit != 0 {
			if s != "" {
				s += ","
			}
			s += n.name
		}
	}
	return s
}

// runInit initialises a token and sets its user PIN.
func runInit(args []string, stdout io.Writer) error {
	fs := newFlags("init")
	label := fs.String("label", "", "token label (required, at most 32 bytes)")
	slotID := fs.Int64("slot", -1, "slot ID (default: the first slot)")
	soFile := fs.String("so-pin-file", "", "file holding the SO PIN")
	userFile := fs.String("pin-file", "", "file holding the user PIN")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *label == "" || len(*label) > 32 {
		return fmt.Errorf("--label is required and at most 32 bytes")
	}
	so, err := pinSource{"SO PIN", *soFile, "MODEXP_TOKEN_SO_PIN"}.read(true)
	if err != nil {
		return err
	}
	defer wipe(so)
	user, err := pinSource{"user PIN", *userFile, "MODEXP_TOKEN_PIN"}.read(true)
	if err != nil {
		return err
	}
	defer wipe(user)
	m, err := openModule()
	if err != nil {
		return err
	}
	defer m.Close()
	slot, err := pickSlot(m, *slotID)
	if err != nil {
		return err
	}
	if err := m.InitToken(slot, so, *label); err != nil {
		return fmt.Errorf("initialise token in slot %d: %w", slot, err)
	}
	s, err := openSession(m, slot, nil)
	if err != nil {
		return err
	}
	defer s.close()
	if err := m.Login(s.h, ck.CKU_SO, so); err != nil {
		return fmt.Errorf("SO login: %w", err)
	}
	if err := m.InitPIN(s.h, user); err != nil {
		return fmt.Errorf("set user PIN: %w", err)
	}
	_ = m.Logout(s.h)
	fmt.Fprintf(stdout, "token %q initialised in slot %d\n", *label, slot)
	return nil
}

// runPIN changes a PIN, or lets the SO set (reset) the user PIN.
func runPIN(args []string, stdout io.Writer) error {
	sub, rest, err := splitSub(args, "change", "reset")
	if err != nil {
		return err
	}
	fs := newFlags("pin " + sub)
	asSO := fs.Bool("so", false, "change the SO PIN instead of the user PIN (change only)")
	slotID := fs.Int64("slot", -1, "slot ID (default: the first slot)")
	soFile := fs.String("so-pin-file", "", "file holding the SO PIN")
	oldFile := fs.String("pin-file", "", "file holding the current user PIN")
	newFile := fs.String("new-pin-file", "", "file holding the new PIN")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	m, err := openModule()
	if err != nil {
		return err
	}
	defer m.Close()
	slot, err := pickSlot(m, *slotID)
	if err != nil {
		return err
	}
	s, err := openSession(m, slot, nil)
	if err != nil {
		return err
	}
	defer s.close()
	newPIN, err := pinSource{"new PIN", *newFile, "MODEXP_TOKEN_NEW_PIN"}.read(true)
	if err != nil {
		return err
	}
	defer wipe(newPIN)
	switch {
	case sub == "reset":
		so, err := pinSource{"SO PIN", *soFile, "MODEXP_TOKEN_SO_PIN"}.read(false)
		if err != nil {
			return err
		}
		defer wipe(so)
		if err := m.Login(s.h, ck.CKU_SO, so); err != nil {
			return fmt.Errorf("SO login: %w", err)
		}
		if err := m.InitPIN(s.h, newPIN); err != nil {
			return fmt.Errorf("reset user PIN: %w", err)
		}
		fmt.Fprintln(stdout, "user PIN reset")
	case *asSO:
		old, err := pinSource{"SO PIN", *soFile, "MODEXP_TOKEN_SO_PIN"}.read(false)
		if err != nil {
			return err
		}
		defer wipe(old)
		if err := m.Login(s.h, ck.CKU_SO, old); err != nil {
			return fmt.Errorf("SO login: %w", err)
		}
		if err := m.SetPIN(s.h, old, newPIN); err != nil {
			return fmt.Errorf("change SO PIN: %w", err)
		}
		fmt.Fprintln(stdout, "SO PIN changed")
	default:
		old, err := pinSource{"user PIN", *oldFile, "MODEXP_TOKEN_PIN"}.read(false)
		if err != nil {
			return err
		}
		defer wipe(old)
		if err := m.SetPIN(s.h, old, newPIN); err != nil {
			return fmt.Errorf("change user PIN: %w", err)
		}
		fmt.Fprintln(stdout, "user PIN changed")
	}
	return nil
}
