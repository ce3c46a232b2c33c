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
	"time"

	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/config"
)

// slotConfig returns the configured slot with the given ID and its
// keystore options.
func slotConfig(id uint64) (config.Slot, keystore.Options, error) {
	cfg, err := loadConfig()
	if err != nil {
		return config.Slot{}, keystore.Options{}, err
	}
	for _, sc := range cfg.Slots {
		if sc.ID == id {
			if sc.Etcd() {
				// Backup, restore and delete work on a token file.
				return config.Slot{}, keystore.Options{}, fmt.Errorf("slot 0x%x: the token is in etcd (%s), not in a file: use etcd's own snapshots (docs/FLEET.md)", id, sc.StoreName())
			}
			return sc, storeOptions(sc), nil
		}
	}
	return config.Slot{}, keystore.Options{}, notFoundf("no slot 0x%x", id)
}

// resolveSlotConfig resolves --slot/--token to a configured slot. The
// module is loaded only to read token labels, and closed again.
func resolveSlotConfig(t *target) (config.Slot, keystore.Options, error) {
	m, err := openModule()
	if err != nil {
		return config.Slot{}, keystore.Options{}, err
	}
	slot, err := t.resolve(m)
	m.Close()
	if err != nil {
		return config.Slot{}, keystore.Options{}, err
	}
	return slotConfig(slot)
}

func backupCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "backup --out FILE",
		Short: "Copy the token file (online, consistent)",
		Long: `backup writes a consistent copy of a token file, taken while other
processes may keep using the token. Private values stay sealed under the
token's PINs of that moment: keep the copy as safe as the token file. It never
overwrites an existing file. 'modexp-token restore --in FILE' brings it back.`,
		Args: noArgs,
	}
	t := addTargetFlags(c)
	c.Flags().StringVar(&out, "out", "", "backup `FILE` to write (must not exist)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if out == "" {
			return usageErrorf("--out is required: the backup file to write")
		}
		if _, err := os.Lstat(out); err == nil {
			return fmt.Errorf("%s already exists: backup never overwrites; choose another name, or remove it first", out)
		}
		sc, opts, err := resolveSlotConfig(t)
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
		tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".part-*")
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
		if err := os.Link(tmp.Name(), out); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s already exists: backup never overwrites; choose another name, or remove it first", out)
			}
			return fmt.Errorf("write backup %s: %w", out, err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s (%d bytes)\n", sc.TokenFile, out, n)
		return nil
	}
	return c
}

func restoreCmd() *cobra.Command {
	var in string
	c := &cobra.Command{
		Use:   "restore --in FILE",
		Short: "Check a backup, then replace the token file with it (keeping the replaced file)",
		Long: `restore checks a backup whole (pages, schema, token and object records)
and only then replaces the token file with it. The replaced token file is
kept beside it as TOKENFILE.replaced-TIME, so a restore of the wrong backup
can be undone. It needs no PIN: it is the way back from a token file that no
longer opens. It says what it will replace and asks first (or --yes);
--dry-run only checks the backup.`,
		Args: noArgs,
	}
	t := addTargetFlags(c)
	sf := addSafetyFlags(c)
	c.Flags().StringVar(&in, "in", "", "backup `FILE` written by modexp-token backup")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if in == "" {
			return usageErrorf("--in is required: the backup file to restore")
		}
		sc, opts, err := resolveSlotConfig(t)
		if err != nil {
			return err
		}
		f, err := os.Open(in)
		if err != nil {
			return fmt.Errorf("open backup: %w", err)
		}
		defer f.Close()
		w := cmd.OutOrStdout()
		// The backup is checked whole first, by restoring it into a scratch
		// directory: a bad backup is refused before anything is asked.
		scratch, err := os.MkdirTemp("", "modexp-token-restore-check-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(scratch)
		if _, err := keystore.Restore(filepath.Join(scratch, "token.db"), f, opts); err != nil {
			return fmt.Errorf("%s is not a usable backup (token file left as it was): %w", in, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		fmt.Fprintf(w, "will replace %s with the backup %s\n", sc.TokenFile, in)
		if sf.dryRun {
			fmt.Fprintln(w, "dry run: the backup checks out; nothing replaced")
			return nil
		}
		if err := sf.confirm(cmd.ErrOrStderr(), "Replace it?"); err != nil {
			return err
		}
		kept := ""
		if _, err := os.Stat(sc.TokenFile); err == nil {
			kept = fmt.Sprintf("%s.replaced-%s", sc.TokenFile, time.Now().UTC().Format("20060102T150405Z"))
			for i := 2; ; i++ {
				if _, err := os.Lstat(kept); err != nil {
					break
				}
				kept = fmt.Sprintf("%s.replaced-%s-%d", sc.TokenFile, time.Now().UTC().Format("20060102T150405Z"), i)
			}
			if err := keepCopy(sc.TokenFile, kept, opts); err != nil {
				return fmt.Errorf("keep the current token file (nothing replaced): %w", err)
			}
		}
		n, err := keystore.Restore(sc.TokenFile, f, opts)
		if err != nil {
			if kept != "" {
				os.Remove(kept)
			}
			return fmt.Errorf("restore %s from %s (token file left as it was): %w", sc.TokenFile, in, err)
		}
		fmt.Fprintf(w, "restored %s from %s (%d bytes)\n", sc.TokenFile, in, n)
		if kept != "" {
			fmt.Fprintf(w, "the replaced token file is kept as %s\n", kept)
		}
		return nil
	}
	return c
}

// keepCopy saves the token file at src to the new file dst: a consistent
// backup if the file opens, else (it is damaged) its bytes as they are.
func keepCopy(src, dst string, opts keystore.Options) error {
	st, err := keystore.Open(src, opts)
	if err != nil {
		return copyFile(src, dst)
	}
	defer st.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = st.Backup(out)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return copyFile(src, dst)
	}
	return nil
}

// copyFile copies src to a new file dst (mode 0600).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}
