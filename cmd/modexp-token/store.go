package main

// store copy: a token moved between a file and etcd (docs/FLEET.md),
// record by record as stored (keystore.Copy): no PIN is needed, and the
// copy opens with the token's PINs.

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/keystore"
	"github.com/modexp-token/modexp-token/token/config"
)

// storeOptions are the keystore options of a configured slot.
func storeOptions(sc config.Slot) keystore.Options {
	return keystore.Options{
		LockTimeout:  sc.LockTimeout.Duration,
		MaxPINTries:  sc.MaxPINTries,
		KDF:          keystore.KDFParams{Time: sc.KDFTime, MemoryKiB: sc.KDFMemoryKiB, Threads: sc.KDFThreads},
		AllowWeakKDF: sc.KDFInsecure,
	}
}

// openSlotStore opens the keystore of a configured slot, in a file or in
// etcd.
func openSlotStore(sc config.Slot) (*keystore.Store, error) {
	opts := storeOptions(sc)
	if sc.Etcd() {
		return keystore.OpenEtcd(keystore.EtcdConfig{
			Endpoints: sc.EtcdEndpoints, Prefix: sc.EtcdPrefix,
			CAFile: sc.EtcdCA, CertFile: sc.EtcdCert, KeyFile: sc.EtcdKey,
			DialTimeout: sc.EtcdDialTimeout.Duration, RequestTimeout: sc.EtcdRequestTimeout.Duration,
		}, opts)
	}
	return keystore.Open(sc.TokenFile, opts)
}

func storeCmd() *cobra.Command {
	var from, to string
	cp := &cobra.Command{
		Use:   "copy --from SLOT --to SLOT",
		Short: "Copy a token between two configured slots (a token file and etcd), as stored",
		Long: `Copy the token of one configured slot into another's store, which must hold no
token: a token file into etcd, or etcd into a token file (docs/FLEET.md).
Records are copied as stored (sealed values, MACs, PIN records): no PIN is
needed, and the copy opens with the same PINs. SLOT is as for --slot: a slot
ID (decimal or 0x hex) or a slot index.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return usageErrorf("say --from SLOT and --to SLOT")
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			refs := make([]slotRef, len(cfg.Slots))
			for i, sc := range cfg.Slots {
				refs[i] = slotRef{index: i, id: sc.ID}
			}
			pick := func(s string) (config.Slot, error) {
				r, err := pickSlotRef(refs, s)
				if err != nil {
					return config.Slot{}, err
				}
				for _, sc := range cfg.Slots {
					if sc.ID == r.id {
						return sc, nil
					}
				}
				return config.Slot{}, notFoundf("no slot %s", s)
			}
			fromSC, err := pick(from)
			if err != nil {
				return err
			}
			toSC, err := pick(to)
			if err != nil {
				return err
			}
			if fromSC.ID == toSC.ID {
				return usageErrorf("--from and --to name the same slot")
			}
			src, err := openSlotStore(fromSC)
			if err != nil {
				return fmt.Errorf("open %s: %w", fromSC.StoreName(), err)
			}
			defer src.Close()
			dst, err := openSlotStore(toSC)
			if err != nil {
				return fmt.Errorf("open %s: %w", toSC.StoreName(), err)
			}
			defer dst.Close()
			n, err := keystore.Copy(dst, src)
			if err != nil {
				return fmt.Errorf("copy %s to %s: %w", fromSC.StoreName(), toSC.StoreName(), err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "copied %s to %s (%d objects)\n", fromSC.StoreName(), toSC.StoreName(), n)
			return nil
		},
	}
	cp.Flags().StringVar(&from, "from", "", "the slot whose token is copied")
	cp.Flags().StringVar(&to, "to", "", "the slot that receives it (its store must hold no token)")
	return group("store", "Copy a token between a token file and etcd", cp)
}
