package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// pinSource says where one PIN comes from: a file named by a flag, an
// environment variable, or a prompt.
type pinSource struct {
	what string // "user PIN", "SO PIN", "new PIN"
	file string // --...-pin-file value, or ""
	env  string // environment variable name
	flag string // name of the file flag, for messages
}

// read returns the PIN. A PIN file holds the PIN on its first line. The
// prompt reads from the terminal without echo, and asks twice when confirm
// is set.
func (p pinSource) read(confirm bool) ([]byte, error) {
	if p.file != "" {
		b, err := os.ReadFile(p.file)
		if err != nil {
			return nil, withCode(exitPIN, fmt.Errorf("read %s file: %w", p.what, err))
		}
		line, _, _ := bytes.Cut(b, []byte("\n"))
		return bytes.TrimRight(line, "\r"), nil
	}
	if v, ok := os.LookupEnv(p.env); ok {
		return []byte(v), nil
	}
	return prompt(p, confirm)
}

// ttyPath is the terminal PINs are asked on (tests point it nowhere).
var ttyPath = "/dev/tty"

func prompt(p pinSource, confirm bool) ([]byte, error) {
	what := p.what
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		return nil, withCode(exitPIN, fmt.Errorf("no %s: give --%s FILE or set %s (there is no terminal to ask on)", what, p.flag, p.env))
	}
	defer tty.Close()
	ask := func(label string) ([]byte, error) {
		fmt.Fprintf(tty, "%s: ", label)
		defer fmt.Fprintln(tty)
		if term.IsTerminal(int(tty.Fd())) {
			return term.ReadPassword(int(tty.Fd()))
		}
		line, err := bufio.NewReader(tty).ReadBytes('\n')
		return bytes.TrimRight(line, "\r\n"), err
	}
	pin, err := ask("Enter " + what)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if confirm {
		again, err := ask("Repeat " + what)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		if !bytes.Equal(pin, again) {
			return nil, withCode(exitPIN, errors.New("the two PINs differ"))
		}
	}
	return pin, nil
}

// session is an open R/W session on one slot of a loaded module.
type session struct {
	mod  *token.Module
	slot uint64
	h    uint64
}

// openSession opens a R/W session on slot and, if login is set, logs the
// user in with the PIN from src.
func openSession(m *token.Module, slot uint64, login *pinSource) (*session, error) {
	h, err := m.OpenSession(slot, ck.CKF_SERIAL_SESSION|ck.CKF_RW_SESSION)
	if err != nil {
		return nil, fmt.Errorf("open a session on slot 0x%x: %w", slot, err)
	}
	s := &session{mod: m, slot: slot, h: h}
	if login != nil {
		pin, err := login.read(false)
		if err != nil {
			s.close()
			return nil, err
		}
		defer wipe(pin)
		if err := m.Login(h, ck.CKU_USER, pin); err != nil {
			s.close()
			return nil, fmt.Errorf("log in: %w", err)
		}
	}
	return s, nil
}

// initialised fails, saying what to do, when the token of slot is not
// initialised: asking for a PIN it does not have would only mislead.
func initialised(m *token.Module, slot uint64) error {
	ti, err := m.TokenInfo(slot)
	if err != nil {
		return fmt.Errorf("slot 0x%x: %w", slot, err)
	}
	if ti.Flags&ck.CKF_TOKEN_INITIALIZED == 0 {
		return withCode(exitPIN, fmt.Errorf("the token in slot 0x%x is not initialised: 'modexp-token init --slot 0x%x --label LABEL' sets it up with its two PINs", slot, slot))
	}
	return nil
}

func (s *session) close() {
	_ = s.mod.CloseSession(s.h)
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}
