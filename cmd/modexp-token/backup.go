package main

// backup and restore: a consistent copy of a token taken online, and its
// validated return, for a token in a file or in etcd alike.
//
// backup reads the token in one read transaction (keystore's
// Store.Backup): other processes and hosts may keep signing and writing
// meanwhile; the copy is the token as one moment saw it. It is a token file
// whichever store the token is in. Private values stay sealed under the
// token key in the copy (the PINs of that moment open it), so the file is
// as sensitive as the token itself and is written 0600.
//
// restore checks the backup whole before touching anything (bbolt's page
// check, the schema, the token record, every object record). A token file
// is then replaced by rename, holding its lock (keystore.Restore), and the
// replaced file kept beside it. A token in etcd is restored into its
// prefix (keystore.RestoreTo): an empty prefix simply receives it; a
// prefix that holds a token is replaced only with --force, after the
// current token was saved to a backup file beside the one restored. It
// needs no PIN: it is the way back from a token that no longer opens.
// Processes using the token meanwhile are not refused: their next call
// sees the restored token.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
		Short: "Copy the token to a file (online, consistent; a token file or etcd)",
		Long: `backup writes a consistent copy of a token, taken while other processes
(and, for a token in etcd, other hosts) may keep using it. The copy is a token
file, whether the token is in a file or in etcd. Private values stay sealed
under the token's PINs of that moment: keep the copy as safe as the token. It
never overwrites an existing file. 'modexp-token restore --in FILE' brings it
back, into this slot or another (a file or etcd).`,
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
		sc, _, err := resolveSlotConfig(t)
		if err != nil {
			return err
		}
		st, err := openSlotStore(sc)
		if err != nil {
			return fmt.Errorf("open %s: %w", sc.StoreName(), err)
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
			return fmt.Errorf("back up %s: %w", sc.StoreName(), err)
		}
		// Link, not rename: an existing file is never overwritten.
		if err := os.Link(tmp.Name(), out); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s already exists: backup never overwrites; choose another name, or remove it first", out)
			}
			return fmt.Errorf("write backup %s: %w", out, err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s (%d bytes)\n", sc.StoreName(), out, n)
		return nil
	}
	return c
}

func restoreCmd() *cobra.Command {
	var in string
	var force bool
	c := &cobra.Command{
		Use:   "restore --in FILE",
		Short: "Check a backup, then put it in the slot's token file or etcd prefix (keeping what it replaces)",
		Long: `restore checks a backup whole (pages, schema, token and object records)
and only then puts it in the slot's store. A backup of a token file or of a
token in etcd restores to either.

A token file is replaced; the replaced file is kept beside it as
TOKENFILE.replaced-TIME, so a restore of the wrong backup can be undone.

A token in etcd: an empty prefix receives the backup. A prefix that holds a
token (or a damaged one) is replaced only with --force: the current token
is first saved, as a backup, to PREFIX.replaced-TIME.backup beside FILE,
then deleted from etcd and the backup copied in. Other hosts see no token
for the moment of the copy, then the restored one.

It needs no PIN: it is the way back from a token that no longer opens. It
says what it will replace and asks first (or --yes); --dry-run only checks
the backup.`,
		Args: noArgs,
	}
	t := addTargetFlags(c)
	sf := addSafetyFlags(c)
	c.Flags().StringVar(&in, "in", "", "backup `FILE` written by modexp-token backup")
	c.Flags().BoolVar(&force, "force", false, "replace the token in an etcd prefix that holds one (a token file is replaced without it)")
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
		if sc.Etcd() {
			return restoreEtcd(cmd, sc, f, in, force, sf)
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
	if err := backupTo(st, dst); err != nil {
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

// restoreEtcd is restore into a slot whose token is in etcd: the backup f
// (checked already) into the slot's prefix, which must be empty unless
// force; a token there is first saved beside the backup.
func restoreEtcd(cmd *cobra.Command, sc config.Slot, f *os.File, in string, force bool, sf *safety) error {
	w := cmd.OutOrStdout()
	st, err := openSlotStore(sc)
	if err != nil {
		return fmt.Errorf("open %s (nothing restored): %w", sc.StoreName(), err)
	}
	defer st.Close()
	tr, err := st.Token()
	held := ""
	switch {
	case errors.Is(err, keystore.ErrNotInitialized):
	case err == nil:
		held = fmt.Sprintf("the token %q", tr.Label)
	case errors.Is(err, keystore.ErrCorrupt):
		held = "a damaged token"
	default:
		return fmt.Errorf("read %s (nothing restored): %w", sc.StoreName(), err)
	}
	if held != "" && !force {
		return fmt.Errorf("%s holds %s: restoring would replace it; add --force to replace it (it is saved to a backup file first)", sc.StoreName(), held)
	}
	if held == "" {
		fmt.Fprintf(w, "will restore the backup %s into %s (empty)\n", in, sc.StoreName())
	} else {
		fmt.Fprintf(w, "will replace %s in %s with the backup %s\n", held, sc.StoreName(), in)
	}
	if sf.dryRun {
		fmt.Fprintln(w, "dry run: the backup checks out; nothing restored")
		return nil
	}
	if err := sf.confirm(cmd.ErrOrStderr(), "Restore it?"); err != nil {
		return err
	}
	kept := ""
	if held != "" {
		kept = keptName(filepath.Dir(in), sc.EtcdPrefix)
		if err := backupTo(st, kept); err != nil {
			if !errors.Is(err, keystore.ErrCorrupt) {
				return fmt.Errorf("save the current token of %s (nothing replaced): %w", sc.StoreName(), err)
			}
			fmt.Fprintf(w, "the current token does not read (%v): not saved\n", err)
			kept = ""
		}
	}
	n, err := keystore.RestoreTo(st, f, held != "")
	if err != nil {
		return fmt.Errorf("restore %s from %s: %w", sc.StoreName(), in, err)
	}
	fmt.Fprintf(w, "restored %s from %s (%d bytes)\n", sc.StoreName(), in, n)
	if kept != "" {
		fmt.Fprintf(w, "the replaced token is saved in %s\n", kept)
	}
	return nil
}

// keptName is a new file name in dir for the token replaced in the etcd
// prefix: the prefix's path, dashed, .replaced-TIME.backup.
func keptName(dir, prefix string) string {
	base := strings.Trim(strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r < ' ' {
			return '-'
		}
		return r
	}, prefix), "-")
	if base == "" {
		base = "etcd"
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	name := filepath.Join(dir, fmt.Sprintf("%s.replaced-%s.backup", base, stamp))
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); err != nil {
			return name
		}
		name = filepath.Join(dir, fmt.Sprintf("%s.replaced-%s-%d.backup", base, stamp, i))
	}
}

// backupTo writes a backup of st to the new file path (0600).
func backupTo(st *keystore.Store, path string) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
		os.Remove(path)
	}
	return err
}
