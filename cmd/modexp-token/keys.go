package main

import (
	"crypto/sha1"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// keyFlags are the flags the keys subcommands share.
type keyFlags struct {
	t       *target
	pinFile string
	label   string
	idHex   string
	uri     string
}

func addKeyFlags(c *cobra.Command, selecting bool) *keyFlags {
	k := &keyFlags{t: addTargetFlags(c)}
	c.Flags().StringVar(&k.pinFile, "pin-file", "", "`FILE` holding the user PIN (else MODEXP_TOKEN_PIN, else a prompt)")
	if selecting {
		c.Flags().StringVar(&k.label, "label", "", "objects with this `LABEL`")
		c.Flags().StringVar(&k.idHex, "id", "", "objects with this `ID` (hex)")
		c.Flags().StringVar(&k.uri, "uri", "", "objects matching this PKCS#11 `URI` (as 'keys list' prints)")
	} else {
		c.Flags().StringVar(&k.label, "label", "", "`LABEL` of the new objects")
		c.Flags().StringVar(&k.idHex, "id", "", "`ID` (hex) of the new objects (default: SHA-1 of the public key, as p11tool does)")
	}
	return k
}

func (k *keyFlags) id() ([]byte, error) {
	id, err := hex.DecodeString(strings.TrimPrefix(strings.ReplaceAll(k.idHex, ":", ""), "0x"))
	if err != nil {
		return nil, usageErrorf("--id %q: want hex digits, e.g. --id 01 or --id 0a1b", k.idHex)
	}
	return id, nil
}

func (k *keyFlags) selector() ([]token.Attribute, error) {
	id, err := k.id()
	if err != nil {
		return nil, err
	}
	return selector(k.uri, k.label, id)
}

func (k *keyFlags) session(login bool) (*token.Module, *session, error) {
	var src *pinSource
	if login {
		p := userPIN(k.pinFile)
		src = &p
	}
	return targetSession(k.t, src)
}

func keysCmd() *cobra.Command {
	list := &cobra.Command{
		Use:   "list",
		Short: "List keys and certificates with their PKCS#11 URIs",
		Long: `list prints one entry per object: class, key type and size, label, ID and
its pkcs11: URI, ready for openssl, p11tool or an nginx configuration.
--label, --id and --uri narrow the list; --public lists public objects
without logging in; --json prints JSON.`,
		Args: noArgs,
	}
	lf := addKeyFlags(list, true)
	var public, asJSON bool
	list.Flags().BoolVar(&public, "public", false, "public objects only, without logging in")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.RunE = func(cmd *cobra.Command, args []string) error {
		sel, err := lf.selector()
		if err != nil {
			return err
		}
		m, s, err := lf.session(!public)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		objs, err := s.describe(sel)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if asJSON {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(objs)
		}
		printObjects(w, objs)
		if len(objs) == 0 {
			what := "no objects on this token"
			if len(sel) > 0 {
				what = "no object matches"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s ('keys generate' or 'keys import' adds keys)\n", what)
		}
		return nil
	}

	gen := &cobra.Command{
		Use:   "generate [--type TYPE] [--label L] [--id HEX]",
		Short: "Generate a key pair or a secret key on the token",
		Long: `generate makes a key on the token: a key pair (a sensitive,
non-extractable private key and its public key, with the same label and ID)
or a secret key (sensitive, non-extractable). Without --id the ID of a pair
is the SHA-1 of the public key's SubjectPublicKeyInfo (what p11tool gives an
imported key), and that of a secret key 8 random bytes, so every key can be
addressed by id= in a pkcs11: URI. An ID that is already on the token is
refused. On a terminal, a key that takes more than a second (RSA-4096 and
up, DSA domain parameters) shows its progress.

--type takes this tool's spellings or pkcs11-tool's (--key-type), in any
case: rsa:2048 or RSA:2048, ec:P-256, EC:prime256v1 or EC:secp384r1,
ed25519 or EC:edwards25519, aes:256 or AES:32, generic:32 or GENERIC:32,
des3 or DES3. The types:
` + keyTypeHelp(),
		Example: `  modexp-token keys generate --type rsa:2048 --label web
  modexp-token keys generate --type EC:prime256v1 --label ssh --id 02
  modexp-token keys generate --type ed25519 --label sign
  modexp-token keys generate --type aes:256 --label wrap`,
		Args: noArgs,
	}
	gf := addKeyFlags(gen, false)
	var keyType string
	gen.Flags().StringVar(&keyType, "type", "rsa:2048", "key `TYPE`: "+keyTypeList()+" (see above)")
	gen.RunE = func(cmd *cobra.Command, args []string) error {
		id, err := gf.id()
		if err != nil {
			return err
		}
		spec, err := parseKeyType(keyType)
		if err != nil {
			return err
		}
		m, s, err := gf.session(true)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		return s.generate(cmd.OutOrStdout(), cmd.ErrOrStderr(), spec, gf.label, id)
	}

	imp := &cobra.Command{
		Use:   "import --file FILE [--type aes|generic|des3] [--label L] [--id HEX]",
		Short: "Import a private key (with its public key), a secret key or a certificate",
		Long: `import reads a PEM or DER file: a private key (RSA, EC on any curve the
token has, Ed25519, DSA, DH; PKCS#1, SEC 1 or unencrypted PKCS#8; ML-DSA
as seed, expanded key or both, SLH-DSA, ML-KEM, Ed448, X25519, X448 in the
IETF PKCS#8 forms), stored with its public key, or an X.509 certificate. With --type aes, generic (or
hmac) or des3 the file holds the raw bytes of a secret key instead.
Without --id the ID is the SHA-1 of the public key's SubjectPublicKeyInfo, as
p11tool gives it: a certificate imported after its key gets the key's ID; a
secret key gets 8 random bytes.
An encrypted key must be decrypted first (openssl pkey -in K -out PLAIN).`,
		Example: `  modexp-token keys import --file web.key --label web
  modexp-token keys import --file web.crt --label web
  modexp-token keys import --file wrap.bin --type aes --label wrap`,
		Args: noArgs,
	}
	inf := addKeyFlags(imp, false)
	var file, secretType string
	imp.Flags().StringVar(&file, "file", "", "PEM or DER `FILE` (required)")
	imp.Flags().StringVar(&secretType, "type", "", "the file holds the raw bytes of a secret key of this `TYPE` (aes, generic, des3)")
	imp.RunE = func(cmd *cobra.Command, args []string) error {
		if file == "" {
			return usageErrorf("--file is required: the PEM or DER key or certificate to import")
		}
		id, err := inf.id()
		if err != nil {
			return err
		}
		objs, err := readImport(file, secretType, inf.label, id)
		if err != nil {
			return err
		}
		m, s, err := inf.session(true)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		return s.importObjects(cmd.OutOrStdout(), objs)
	}

	del := &cobra.Command{
		Use:   "delete --label L | --id HEX | --uri URI",
		Short: "Delete keys and certificates (says which, asks first)",
		Long: `delete lists the objects that match --label, --id or --uri (all given
must match) and, once confirmed (or --yes), destroys them. --dry-run only
lists them. An ID shared by a key pair and its certificate deletes all three.`,
		Example: `  modexp-token keys delete --id 01 --dry-run
  modexp-token keys delete --uri 'pkcs11:object=web;type=cert' --yes`,
		Args: noArgs,
	}
	df := addKeyFlags(del, true)
	sf := addSafetyFlags(del)
	del.RunE = func(cmd *cobra.Command, args []string) error {
		sel, err := df.selector()
		if err != nil {
			return err
		}
		if len(sel) == 0 {
			return usageErrorf("say which objects to delete: --label, --id or --uri ('keys list' shows them)")
		}
		m, s, err := df.session(true)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		return s.delete(cmd.OutOrStdout(), cmd.ErrOrStderr(), sel, sf)
	}
	return group("keys", "List, generate, import, export, delete and migrate keys and certificates", list, gen, imp, exportCmd(), del, migrateCmd())
}

// selector turns --uri, --label and --id into a find template.
func selector(uri, label string, id []byte) ([]token.Attribute, error) {
	var tmpl []token.Attribute
	if uri != "" {
		u, err := parseURI(uri)
		if err != nil {
			return nil, err
		}
		if u.Object != "" {
			label = u.Object
		}
		if u.ID != "" {
			id = []byte(u.ID)
		}
		switch u.Type {
		case "":
		case "private":
			tmpl = append(tmpl, token.Attribute{Type: ck.CKA_CLASS, Value: ck.ULong(ck.CKO_PRIVATE_KEY)})
		case "public":
			tmpl = append(tmpl, token.Attribute{Type: ck.CKA_CLASS, Value: ck.ULong(ck.CKO_PUBLIC_KEY)})
		case "cert":
			tmpl = append(tmpl, token.Attribute{Type: ck.CKA_CLASS, Value: ck.ULong(ck.CKO_CERTIFICATE)})
		case "data":
			tmpl = append(tmpl, token.Attribute{Type: ck.CKA_CLASS, Value: ck.ULong(ck.CKO_DATA)})
		case "secret-key":
			tmpl = append(tmpl, token.Attribute{Type: ck.CKA_CLASS, Value: ck.ULong(ck.CKO_SECRET_KEY)})
		default:
			return nil, fmt.Errorf("URI type %q not supported", u.Type)
		}
	}
	if label != "" {
		tmpl = append(tmpl, token.Attribute{Type: ck.CKA_LABEL, Value: []byte(label)})
	}
	if len(id) > 0 {
		tmpl = append(tmpl, token.Attribute{Type: ck.CKA_ID, Value: id})
	}
	return tmpl, nil
}

// find returns the handles of every object matching tmpl.
func (s *session) find(tmpl []token.Attribute) ([]uint64, error) {
	if err := s.mod.FindObjectsInit(s.h, tmpl); err != nil {
		return nil, fmt.Errorf("find objects: %w", err)
	}
	defer s.mod.FindObjectsFinal(s.h)
	var all []uint64
	for {
		hs, err := s.mod.FindObjects(s.h, 64)
		if err != nil {
			return nil, fmt.Errorf("find objects: %w", err)
		}
		if len(hs) == 0 {
			return all, nil
		}
		all = append(all, hs...)
	}
}

// attrs reads the given attributes of obj; absent or sensitive ones are nil.
func (s *session) attrs(obj uint64, types ...uint64) (map[uint64][]byte, error) {
	res, err := s.mod.GetAttributeValue(s.h, obj, types)
	if err != nil {
		return nil, fmt.Errorf("read object %d: %w", obj, err)
	}
	out := make(map[uint64][]byte, len(types))
	for i, r := range res {
		if r.Err == 0 {
			out[types[i]] = r.Value
		}
	}
	return out, nil
}

var classNames = map[uint64]string{
	ck.CKO_PRIVATE_KEY: "private", ck.CKO_PUBLIC_KEY: "public", ck.CKO_CERTIFICATE: "cert", ck.CKO_DATA: "data",
	ck.CKO_SECRET_KEY: "secret",
}

// uriTypes are the type= values of RFC 7512 by class.
var uriTypes = map[uint64]string{
	ck.CKO_PRIVATE_KEY: "private", ck.CKO_PUBLIC_KEY: "public", ck.CKO_CERTIFICATE: "cert", ck.CKO_DATA: "data",
	ck.CKO_SECRET_KEY: "secret-key",
}

// objectInfo is one object as 'keys list' shows it.
type objectInfo struct {
	Class  string `json:"class"`
	Type   string `json:"type,omitempty"` // rsa:2048, ec:P-256
	Label  string `json:"label"`
	ID     string `json:"id"` // hex
	URI    string `json:"uri"`
	handle uint64
}

func (o objectInfo) String() string {
	return fmt.Sprintf("%-7s %-12s label=%q id=%s", o.Class, o.Type, o.Label, o.ID)
}

// describe finds the objects matching sel and describes them.
func (s *session) describe(sel []token.Attribute) ([]objectInfo, error) {
	objs, err := s.find(sel)
	if err != nil {
		return nil, err
	}
	ti, err := s.mod.TokenInfo(s.slot)
	if err != nil {
		return nil, fmt.Errorf("token info: %w", err)
	}
	out := []objectInfo{}
	for _, obj := range objs {
		a, err := s.attrs(obj, append([]uint64{ck.CKA_CLASS, ck.CKA_KEY_TYPE, ck.CKA_LABEL, ck.CKA_ID}, listAttrs...)...)
		if err != nil {
			return nil, err
		}
		class, _ := ck.ParseULong(a[ck.CKA_CLASS])
		desc := ""
		if kt, ok := ck.ParseULong(a[ck.CKA_KEY_TYPE]); ok {
			if k := kindByType(kt); k != nil {
				desc = k.describe(a)
			} else {
				desc = ck.Name("CKK_", kt)
			}
		}
		uri := pkcs11URI{
			Model: strings.TrimSpace(ti.Model), Manufacturer: strings.TrimSpace(ti.ManufacturerID),
			Serial: strings.TrimSpace(ti.SerialNumber), Token: strings.TrimSpace(ti.Label),
			Object: string(a[ck.CKA_LABEL]), ID: string(a[ck.CKA_ID]), Type: uriTypes[class],
		}
		out = append(out, objectInfo{Class: classNames[class], Type: desc, Label: string(a[ck.CKA_LABEL]),
			ID: hex.EncodeToString(a[ck.CKA_ID]), URI: uri.String(), handle: obj})
	}
	return out, nil
}

// printObjects prints one entry per object: class, key type and size,
// label, ID and its PKCS#11 URI.
func printObjects(w io.Writer, objs []objectInfo) {
	for _, o := range objs {
		fmt.Fprintf(w, "%s\n        %s\n", o, o.URI)
	}
}

func attr(t uint64, v []byte) token.Attribute   { return token.Attribute{Type: t, Value: v} }
func ulong(t, v uint64) token.Attribute         { return attr(t, ck.ULong(v)) }
func boolAttr(t uint64, v bool) token.Attribute { return attr(t, ck.Bool(v)) }

// common returns the attributes every key the CLI makes carries.
func common(class uint64, label string, id []byte) []token.Attribute {
	a := []token.Attribute{ulong(ck.CKA_CLASS, class), boolAttr(ck.CKA_TOKEN, true)}
	if label != "" {
		a = append(a, attr(ck.CKA_LABEL, []byte(label)))
	}
	if len(id) > 0 {
		a = append(a, attr(ck.CKA_ID, id))
	}
	return a
}

// refuseDuplicate fails if an object of one of classes has id.
func (s *session) refuseDuplicate(id []byte, classes ...uint64) error {
	for _, class := range classes {
		objs, err := s.describe([]token.Attribute{ulong(ck.CKA_CLASS, class), attr(ck.CKA_ID, id)})
		if err != nil {
			return err
		}
		if len(objs) > 0 {
			return withCode(exitFailure, fmt.Errorf("ID %x is already used on this token by:\n  %s\nchoose another --id, or delete it first ('modexp-token keys delete --id %x')",
				id, objs[0], id))
		}
	}
	return nil
}

// generate makes a key of spec on the token.
func (s *session) generate(w, progress io.Writer, spec keySpec, label string, id []byte) error {
	classes := []uint64{ck.CKO_PRIVATE_KEY, ck.CKO_PUBLIC_KEY}
	if spec.kind.secret {
		classes = []uint64{ck.CKO_SECRET_KEY}
	}
	if len(id) > 0 {
		if err := s.refuseDuplicate(id, classes...); err != nil {
			return err
		}
	}
	what := spec.String()
	stop := showProgress(progress, "generating "+what+" key")
	mech, pubUse, privUse, err := spec.kind.plan(s, spec.arg)
	if err != nil {
		stop()
		return fmt.Errorf("generate a %s key: %w", what, err)
	}
	if spec.kind.secret {
		if len(id) == 0 {
			if id, err = randomID(); err != nil {
				stop()
				return err
			}
		}
		tmpl := append(common(ck.CKO_SECRET_KEY, label, id), ulong(ck.CKA_KEY_TYPE, spec.kind.keyType),
			boolAttr(ck.CKA_PRIVATE, true), boolAttr(ck.CKA_SENSITIVE, true), boolAttr(ck.CKA_EXTRACTABLE, false))
		_, err = s.mod.GenerateKey(s.h, &mech, append(tmpl, privUse...))
		stop()
		if err != nil {
			return fmt.Errorf("generate a %s key: %w", what, err)
		}
		fmt.Fprintf(w, "generated %s key\n", what)
	} else {
		pub := append(common(ck.CKO_PUBLIC_KEY, label, id), pubUse...)
		priv := append(append(common(ck.CKO_PRIVATE_KEY, label, id), boolAttr(ck.CKA_PRIVATE, true),
			boolAttr(ck.CKA_SENSITIVE, true)), privUse...)
		pubH, privH, err := s.mod.GenerateKeyPair(s.h, &mech, pub, priv)
		stop()
		if err != nil {
			return fmt.Errorf("generate a %s key pair: %w", what, err)
		}
		if len(id) == 0 {
			spki, err := s.publicKeyInfo(pubH)
			if err == nil {
				sum := sha1.Sum(spki)
				id = sum[:]
				err = s.mod.SetAttributeValue(s.h, pubH, []token.Attribute{attr(ck.CKA_ID, id)})
				if err == nil {
					err = s.mod.SetAttributeValue(s.h, privH, []token.Attribute{attr(ck.CKA_ID, id)})
				}
			}
			if err != nil {
				return fmt.Errorf("key pair generated, but setting its ID failed (%w): set one with pkcs11-tool --set-id or delete it", err)
			}
		}
		fmt.Fprintf(w, "generated %s key pair\n", what)
	}
	objs, err := s.describe([]token.Attribute{ulong(ck.CKA_CLASS, classes[0]), attr(ck.CKA_ID, id)})
	if err != nil {
		return err
	}
	printObjects(w, objs)
	return nil
}

// progressTick is how often showProgress's line ticks, and how long a
// step runs before it shows (tests change it).
var progressTick = time.Second

// showProgress writes a ticking line to w while a slow step runs, if w is
// a terminal and the step takes more than progressTick (a second). The
// returned function ends it.
func showProgress(w io.Writer, what string) func() {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	every := progressTick
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(every)
		defer tick.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprintf(f, "\r%s: done in %s\n", what, time.Since(start).Round(100*time.Millisecond))
				}
				return
			case <-tick.C:
				shown = true
				fmt.Fprintf(f, "\r%s… %ds", what, int(time.Since(start).Seconds()))
			}
		}
	}()
	return func() { close(done); <-finished }
}

// publicKeyInfo builds the DER SubjectPublicKeyInfo of a public key object.
func (s *session) publicKeyInfo(obj uint64) ([]byte, error) {
	a, err := s.attrs(obj, ck.CKA_KEY_TYPE, ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT, ck.CKA_EC_PARAMS, ck.CKA_EC_POINT,
		ck.CKA_PRIME, ck.CKA_SUBPRIME, ck.CKA_BASE, ck.CKA_VALUE)
	if err != nil {
		return nil, err
	}
	kt, _ := ck.ParseULong(a[ck.CKA_KEY_TYPE])
	integer := func(t uint64) *big.Int { return new(big.Int).SetBytes(a[t]) }
	switch kt {
	case ck.CKK_RSA:
		return rsaSPKI(integer(ck.CKA_MODULUS), integer(ck.CKA_PUBLIC_EXPONENT))
	case ck.CKK_EC, ck.CKK_EC_EDWARDS:
		var point []byte
		if _, err := asn1.Unmarshal(a[ck.CKA_EC_POINT], &point); err != nil {
			return nil, fmt.Errorf("public key: CKA_EC_POINT: %w", err)
		}
		if kt == ck.CKK_EC_EDWARDS {
			if string(a[ck.CKA_EC_PARAMS]) == string(ed448Params) {
				return marshalSPKI(oidEd448, nil, point)
			}
			return marshalSPKI(oidEd25519, nil, point)
		}
		return marshalSPKI(oidEC, a[ck.CKA_EC_PARAMS], point)
	case ck.CKK_DSA:
		params := mustMarshal(struct{ P, Q, G *big.Int }{integer(ck.CKA_PRIME), integer(ck.CKA_SUBPRIME), integer(ck.CKA_BASE)})
		return marshalSPKI(oidDSA, params, mustMarshal(integer(ck.CKA_VALUE)))
	case ck.CKK_DH:
		params := mustMarshal(struct{ P, G *big.Int }{integer(ck.CKA_PRIME), integer(ck.CKA_BASE)})
		return marshalSPKI(oidDH, params, mustMarshal(integer(ck.CKA_VALUE)))
	}
	// The other types (ML-DSA, SLH-DSA, ML-KEM, Edwards, Montgomery): the
	// token's own SPKI.
	if info, err := s.attrs(obj, ck.CKA_PUBLIC_KEY_INFO); err == nil && len(info[ck.CKA_PUBLIC_KEY_INFO]) > 0 {
		return info[ck.CKA_PUBLIC_KEY_INFO], nil
	}
	return nil, fmt.Errorf("public key of type %s", ck.Name("CKK_", kt))
}

// importSet is what one import file creates.
type importSet struct {
	what      string // "RSA-2048 private key", "certificate CN=..."
	templates [][]token.Attribute
	id        []byte
	classes   []uint64 // the classes it creates, for the duplicate check
}

// readImport reads and parses the file and builds the object templates,
// before anything is opened. secretType, if set, says the file holds the
// raw bytes of a secret key of that type.
func readImport(path, secretType, label string, id []byte) (*importSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if secretType != "" {
		spec, err := parseKeyType(secretType)
		if err != nil {
			return nil, err
		}
		if !spec.kind.secret {
			return nil, usageErrorf("--type %s: import reads %s keys from their PEM or DER file; --type is for the raw bytes of a secret key (aes, generic, des3)", secretType, spec.kind.name)
		}
		tmpl, what, err := secretKey(spec, data)
		wipe(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(id) == 0 {
			if id, err = randomID(); err != nil {
				return nil, err
			}
		}
		tmpl = append(append(common(ck.CKO_SECRET_KEY, label, id), boolAttr(ck.CKA_PRIVATE, true),
			boolAttr(ck.CKA_SENSITIVE, true), boolAttr(ck.CKA_EXTRACTABLE, false)), tmpl...)
		return &importSet{what: what, templates: [][]token.Attribute{tmpl}, id: id, classes: []uint64{ck.CKO_SECRET_KEY}}, nil
	}
	der := data
	if block, _ := pem.Decode(data); block != nil {
		if block.Type == "ENCRYPTED PRIVATE KEY" || block.Headers["Proc-Type"] == "4,ENCRYPTED" {
			return nil, fmt.Errorf("%s is an encrypted private key: decrypt it first (openssl pkey -in %s -out PLAIN.pem), import PLAIN.pem, then delete PLAIN.pem", path, path)
		}
		der = block.Bytes
	}
	if cert, err := x509.ParseCertificate(der); err == nil {
		if len(id) == 0 {
			sum := sha1.Sum(cert.RawSubjectPublicKeyInfo)
			id = sum[:]
		}
		tmpl := append(common(ck.CKO_CERTIFICATE, label, id), ulong(ck.CKA_CERTIFICATE_TYPE, ck.CKC_X_509),
			attr(ck.CKA_VALUE, cert.Raw), attr(ck.CKA_SUBJECT, cert.RawSubject), attr(ck.CKA_ISSUER, cert.RawIssuer),
			attr(ck.CKA_SERIAL_NUMBER, mustMarshal(cert.SerialNumber)))
		return &importSet{what: "certificate " + cert.Subject.String(), templates: [][]token.Attribute{tmpl}, id: id,
			classes: []uint64{ck.CKO_CERTIFICATE}}, nil
	}
	key, err := parsePrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(id) == 0 {
		sum := sha1.Sum(key.spki)
		id = sum[:]
	}
	priv := append(append(common(ck.CKO_PRIVATE_KEY, label, id), boolAttr(ck.CKA_PRIVATE, true), boolAttr(ck.CKA_SENSITIVE, true)), key.priv...)
	pub := append(common(ck.CKO_PUBLIC_KEY, label, id), key.pub...)
	return &importSet{what: key.what, templates: [][]token.Attribute{priv, pub}, id: id,
		classes: []uint64{ck.CKO_PRIVATE_KEY, ck.CKO_PUBLIC_KEY}}, nil
}

// importObjects creates the objects of an import on the token.
func (s *session) importObjects(w io.Writer, set *importSet) error {
	if err := s.refuseDuplicate(set.id, set.classes...); err != nil {
		return err
	}
	var made []uint64
	for _, tmpl := range set.templates {
		h, err := s.mod.CreateObject(s.h, tmpl)
		if err != nil {
			for _, m := range made {
				_ = s.mod.DestroyObject(s.h, m)
			}
			return fmt.Errorf("import the %s: %w", set.what, err)
		}
		made = append(made, h)
	}
	fmt.Fprintf(w, "imported %s, id %x\n", set.what, set.id)
	return nil
}

func mustMarshal(v any) []byte {
	b, err := asn1.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// delete lists the objects matching sel and, once confirmed, destroys them.
func (s *session) delete(w, prompt io.Writer, sel []token.Attribute, sf *safety) error {
	objs, err := s.describe(sel)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return notFoundf("no object matches ('modexp-token keys list' shows them)")
	}
	fmt.Fprintf(w, "will delete %d object(s):\n", len(objs))
	for _, o := range objs {
		fmt.Fprintf(w, "  %s\n", o)
	}
	if sf.dryRun {
		fmt.Fprintln(w, "dry run: nothing deleted")
		return nil
	}
	if err := sf.confirm(prompt, fmt.Sprintf("Delete these %d object(s)?", len(objs))); err != nil {
		return err
	}
	for i, o := range objs {
		if err := s.mod.DestroyObject(s.h, o.handle); err != nil {
			return fmt.Errorf("delete %s (%d of %d deleted before): %w", o, i, len(objs), err)
		}
	}
	fmt.Fprintf(w, "deleted %d object(s)\n", len(objs))
	return nil
}
