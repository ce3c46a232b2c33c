package main

// backup and restore: a consistent copy of a token file taken online, and
// its validated, atomic return.
//
// backup reads the token file in one read transaction (keystore's
// Store.Backup): other processes may keep signing and writing meanwhile;
// the copy is the token as one moment saw it. Private values stay sealed
// under the token key in the copy (the PINs of that moment open it), so the
// file is as sensitive as the token file itself and is written 0600.
//
// restore checks the backup whole before touching anything (bbolt's page
// check, the schema, the token record, every object record) and then
// replaces the token file by rename, holding its lock (keystore.Restore).
// It needs no PIN: it is the way back from a token file that no longer
// opens. Processes using the token meanwhile are not refused: their next
// call sees the restored token (see keystore.Restore).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/config"
)

// slotConfig returns the configured slot with the given ID (the first when
// id is negative) and its keystore options.
func slotConfig(id int64) (config.Slot, keystore.Options, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return config.Slot{}, keystore.Options{}, fmt.Errorf("load token configuration: %w", err)
	}
	if len(cfg.Slots) == 0 {
		return config.Slot{}, keystore.Options{}, errors.New("no slots configured")
	}
	sc := cfg.Slots[0]
	if id >= 0 {
		found := false
		for _, s := range cfg.Slots {
			if s.ID == uint64(id) {
				sc, found = s, true
			}
		}
		if !found {
			return config.Slot{}, keystore.Options{}, fmt.Errorf("no slot %d", id)
		}
	}
	opts := keystore.Options{
		LockTimeout: sc.LockTimeout.Duration,
		MaxPINTries: sc.MaxPINTries,
		KDF:         keystore.KDFParams{Time: sc.KDFTime, MemoryKiB: sc.KDFMemoryKiB, Threads: sc.KDFThreads},
	}
	return sc, opts, nil
}

func runBackup(args []string, stdout io.Writer) error {
	fs := newFlags("backup")
	out := fs.String("out", "", "backup file to write (must not exist)")
	slotID := fs.Int64("slot", -1, "slot ID (default: the first slot)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out is required")
	}
	sc, opts, err := slotConfig(*slotID)
	if err != nil {
		return err
	}
	st, err := keystore.Open(sc.TokenFile, opts)
	if err != nil {
		return fmt.Errorf("open token file %s: %w", sc.TokenFile, err)
	}
	defer st.Close()
	// Written beside the target and renamed, so a failed backup leaves no
	// file that looks complete.
	tmp, err := os.CreateTemp(filepath.Dir(*out), "."+filepath.Base(*out)+".part-*")
	if err != nil {
		return fmt.Errorf("create backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := st.Backup(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("back up %s: %w", sc.TokenFile, err)
	}
	// Link, not rename: an existing file is never overwritten.
	if err := os.Link(tmp.Name(), *out); err != nil {
		return fmt.Errorf("write backup: %w", err)
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes)\n", sc.TokenFile, *out, n)
	return nil
}

func runRestore(args []string, stdout io.Writer) error {
	fs := newFlags("restore")
	in := fs.String("in", "", "backup file written by modexp-token backup")
	slotID := fs.Int64("slot", -1, "slot ID (default: the first slot)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return errors.New("--in is required")
	}
	sc, opts, err := slotConfig(*slotID)
	if err != nil {
		return err
	}
	f, err := os.Open(*in)
	if err != nil {
		return fmt.Errorf("open backup: %w", err)
	}
	defer f.Close()
	n, err := keystore.Restore(sc.TokenFile, f, opts)
	if err != nil {
		return fmt.Errorf("restore %s from %s (token file left as it was): %w", sc.TokenFile, *in, err)
	}
	fmt.Fprintf(stdout, "restored %s from %s (%d bytes)\n", sc.TokenFile, *in, n)
	return nil
}
