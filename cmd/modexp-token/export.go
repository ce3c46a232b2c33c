package main

// keys export: a public key as a PEM SubjectPublicKeyInfo.

import (
	"encoding/pem"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/token/ck"
)

func exportCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "export --label L | --id HEX | --uri URI [--out FILE]",
		Short: "Write a public key as PEM (SubjectPublicKeyInfo)",
		Long: `export writes the public key that matches --label, --id or --uri as a PEM
"PUBLIC KEY" (DER SubjectPublicKeyInfo, what openssl pkey -pubin reads), to
standard output or --out. Every key type the token holds: RSA, EC, Ed25519,
Ed448, ML-DSA and SLH-DSA (the IETF LAMPS SPKI forms). Exactly one public key
must match.`,
		Example: `  modexp-token keys export --id 01 > web.pub.pem
  modexp-token keys export --label signer --out signer.pub.pem`,
		Args: noArgs,
	}
	kf := addKeyFlags(c, true)
	var out string
	c.Flags().StringVar(&out, "out", "", "write the PEM to `FILE` (default: standard output)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		sel, err := kf.selector()
		if err != nil {
			return err
		}
		if len(sel) == 0 {
			return usageErrorf("say which public key to export: --label, --id or --uri ('keys list' shows them)")
		}
		m, s, err := kf.session(false)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		hs, err := s.find(append(sel, ulong(ck.CKA_CLASS, ck.CKO_PUBLIC_KEY)))
		if err != nil {
			return err
		}
		switch len(hs) {
		case 0:
			return notFoundf("no public key matches")
		case 1:
		default:
			return usageErrorf("%d public keys match: say which with --id or --label", len(hs))
		}
		der, err := s.publicKeyInfo(hs[0])
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		block := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		if out == "" {
			_, err = cmd.OutOrStdout().Write(block)
			return err
		}
		if err := os.WriteFile(out, block, 0o644); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	}
	return c
}
