package main

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
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
		Use:   "generate [--type rsa:BITS|ec:CURVE] [--label L] [--id HEX]",
		Short: "Generate a key pair on the token",
		Long: `generate makes a key pair on the token: a sensitive, non-extractable
private key and its public key, with the same label and ID. Without --id the
ID is the SHA-1 of the public key's SubjectPublicKeyInfo (what p11tool gives
an imported key), so every key can be addressed by id= in a pkcs11: URI. An ID
that is already on the token is refused. On a terminal, a key that takes more
than a second (RSA-4096 and up) shows its progress.`,
		Example: `  modexp-token keys generate --type rsa:2048 --label web
  modexp-token keys generate --type ec:P-256 --label ssh --id 02`,
		Args: noArgs,
	}
	gf := addKeyFlags(gen, false)
	var keyType string
	gen.Flags().StringVar(&keyType, "type", "rsa:2048", "rsa:BITS or ec:CURVE (P-256, P-384, P-521, secp256k1), ml-dsa-65, slh-dsa-sha2-128s, ed448 ...")
	gen.RunE = func(cmd *cobra.Command, args []string) error {
		id, err := gf.id()
		if err != nil {
			return err
		}
		if err := checkKeyType(keyType); err != nil {
			return err
		}
		m, s, err := gf.session(true)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		return s.generate(cmd.OutOrStdout(), cmd.ErrOrStderr(), keyType, gf.label, id)
	}

	imp := &cobra.Command{
		Use:   "import --file FILE [--label L] [--id HEX]",
		Short: "Import a private key (with its public key) or a certificate",
		Long: `import reads a PEM or DER file: an RSA or EC private key (PKCS#1, SEC 1
or unencrypted PKCS#8), stored with its public key, or an X.509 certificate.
Without --id the ID is the SHA-1 of the public key's SubjectPublicKeyInfo, as
p11tool gives it: a certificate imported after its key gets the key's ID.
An encrypted key must be decrypted first (openssl pkey -in K -out PLAIN).`,
		Example: `  modexp-token keys import --file web.key --label web
  modexp-token keys import --file web.crt --label web`,
		Args: noArgs,
	}
	inf := addKeyFlags(imp, false)
	var file string
	imp.Flags().StringVar(&file, "file", "", "PEM or DER `FILE` (required)")
	imp.RunE = func(cmd *cobra.Command, args []string) error {
		if file == "" {
			return usageErrorf("--file is required: the PEM or DER key or certificate to import")
		}
		id, err := inf.id()
		if err != nil {
			return err
		}
		objs, err := readImport(file, inf.label, id)
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
		a, err := s.attrs(obj, ck.CKA_CLASS, ck.CKA_KEY_TYPE, ck.CKA_LABEL, ck.CKA_ID, ck.CKA_MODULUS, ck.CKA_EC_PARAMS,
			ck.CKA_PARAMETER_SET)
		if err != nil {
			return nil, err
		}
		class, _ := ck.ParseULong(a[ck.CKA_CLASS])
		desc := ""
		if kt, ok := ck.ParseULong(a[ck.CKA_KEY_TYPE]); ok {
			switch kt {
			case ck.CKK_RSA:
				desc = "rsa:" + strconv.Itoa(new(big.Int).SetBytes(a[ck.CKA_MODULUS]).BitLen())
			case ck.CKK_EC:
				desc = "ec:" + curveName(a[ck.CKA_EC_PARAMS])
			default:
				if desc = pqDescribe(kt, a); desc == "" {
					desc = ck.Name("CKK_", kt)
				}
			}
		}
		uri := pkcs11URI{
			Model: strings.TrimSpace(ti.Model), Manufacturer: strings.TrimSpace(ti.ManufacturerID),
			Serial: strings.TrimSpace(ti.SerialNumber), Token: strings.TrimSpace(ti.Label),
			Object: string(a[ck.CKA_LABEL]), ID: string(a[ck.CKA_ID]), Type: classNames[class],
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

// curves maps the curve names the CLI accepts to their OIDs.
var curves = map[string]asn1.ObjectIdentifier{
	"P-256":     {1, 2, 840, 10045, 3, 1, 7},
	"P-384":     {1, 3, 132, 0, 34},
	"P-521":     {1, 3, 132, 0, 35},
	"secp256k1": {1, 3, 132, 0, 10},
}

func curveParams(name string) ([]byte, error) {
	oid, ok := curves[name]
	if !ok {
		return nil, fmt.Errorf("unknown curve %q (want P-256, P-384, P-521 or secp256k1)", name)
	}
	return asn1.Marshal(oid)
}

func curveName(params []byte) string {
	var oid asn1.ObjectIdentifier
	if _, err := asn1.Unmarshal(params, &oid); err == nil {
		for n, o := range curves {
			if o.Equal(oid) {
				return n
			}
		}
	}
	return "unknown"
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

// checkKeyType validates a --type value before anything is asked or opened.
func checkKeyType(spec string) error {
	if _, ok := pqKeyTypes[spec]; ok {
		return nil
	}
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "rsa":
		bits, err := strconv.Atoi(arg)
		if err != nil || bits < 1 {
			return usageErrorf("--type %s: want rsa:BITS, e.g. rsa:2048", spec)
		}
	case "ec":
		if _, err := curveParams(arg); err != nil {
			return withCode(exitUsage, fmt.Errorf("--type %s: %w", spec, err))
		}
	default:
		return usageErrorf("--type %q: want rsa:BITS (e.g. rsa:2048), ec:CURVE (e.g. ec:P-256) or one of %s", spec, pqTypeNames())
	}
	return nil
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

// generate makes a key pair on the token.
func (s *session) generate(w, progress io.Writer, spec, label string, id []byte) error {
	if len(id) > 0 {
		if err := s.refuseDuplicate(id, ck.CKO_PRIVATE_KEY, ck.CKO_PUBLIC_KEY); err != nil {
			return err
		}
	}
	kind, arg, _ := strings.Cut(spec, ":")
	pub := common(ck.CKO_PUBLIC_KEY, label, id)
	priv := append(common(ck.CKO_PRIVATE_KEY, label, id), boolAttr(ck.CKA_PRIVATE, true), boolAttr(ck.CKA_SENSITIVE, true),
		boolAttr(ck.CKA_SIGN, true))
	pub = append(pub, boolAttr(ck.CKA_VERIFY, true))
	var mech token.Mechanism
	if pq, ok := pqKeyTypes[spec]; ok {
		kind, mech.Type, pub = "pq", pq.mech, append(pub, pq.attr)
	}
	switch kind {
	case "pq":
	case "rsa":
		bits, _ := strconv.Atoi(arg)
		mech.Type = ck.CKM_RSA_PKCS_KEY_PAIR_GEN
		pub = append(pub, ulong(ck.CKA_MODULUS_BITS, uint64(bits)), attr(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}),
			boolAttr(ck.CKA_ENCRYPT, true))
		priv = append(priv, boolAttr(ck.CKA_DECRYPT, true))
	default:
		params, err := curveParams(arg)
		if err != nil {
			return err
		}
		mech.Type = ck.CKM_EC_KEY_PAIR_GEN
		pub = append(pub, attr(ck.CKA_EC_PARAMS, params))
	}
	stop := showProgress(progress, "generating "+spec+" key pair")
	pubH, privH, err := s.mod.GenerateKeyPair(s.h, &mech, pub, priv)
	stop()
	if err != nil {
		return fmt.Errorf("generate a %s key pair: %w", spec, err)
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
	fmt.Fprintf(w, "generated %s key pair\n", spec)
	objs, err := s.describe([]token.Attribute{ulong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), attr(ck.CKA_ID, id)})
	if err != nil {
		return err
	}
	printObjects(w, objs)
	return nil
}

// showProgress writes a ticking line to w while a slow step runs, if w is
// a terminal and the step takes more than a second. The returned function
// ends it.
func showProgress(w io.Writer, what string) func() {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(time.Second)
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
	a, err := s.attrs(obj, ck.CKA_KEY_TYPE, ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT, ck.CKA_EC_PARAMS, ck.CKA_EC_POINT)
	if err != nil {
		return nil, err
	}
	kt, _ := ck.ParseULong(a[ck.CKA_KEY_TYPE])
	switch kt {
	case ck.CKK_RSA:
		return rsaSPKI(new(big.Int).SetBytes(a[ck.CKA_MODULUS]), new(big.Int).SetBytes(a[ck.CKA_PUBLIC_EXPONENT]))
	case ck.CKK_EC:
		var point []byte
		if _, err := asn1.Unmarshal(a[ck.CKA_EC_POINT], &point); err != nil {
			return nil, fmt.Errorf("public key: CKA_EC_POINT: %w", err)
		}
		return ecSPKI(a[ck.CKA_EC_PARAMS], point)
	}
	// The other types (ML-DSA, SLH-DSA, Edwards): the token's own SPKI.
	if info, err := s.attrs(obj, ck.CKA_PUBLIC_KEY_INFO); err == nil && len(info[ck.CKA_PUBLIC_KEY_INFO]) > 0 {
		return info[ck.CKA_PUBLIC_KEY_INFO], nil
	}
	return nil, fmt.Errorf("public key of type %s", ck.Name("CKK_", kt))
}

var (
	oidRSA = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	oidEC  = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
)

type spki struct {
	Algorithm struct {
		OID    asn1.ObjectIdentifier
		Params asn1.RawValue
	}
	Key asn1.BitString
}

func rsaSPKI(n, e *big.Int) ([]byte, error) {
	key, err := asn1.Marshal(struct{ N, E *big.Int }{n, e})
	if err != nil {
		return nil, err
	}
	var k spki
	k.Algorithm.OID = oidRSA
	k.Algorithm.Params = asn1.NullRawValue
	k.Key = asn1.BitString{Bytes: key, BitLength: 8 * len(key)}
	return asn1.Marshal(k)
}

func ecSPKI(params, point []byte) ([]byte, error) {
	var k spki
	k.Algorithm.OID = oidEC
	k.Algorithm.Params = asn1.RawValue{FullBytes: params}
	k.Key = asn1.BitString{Bytes: point, BitLength: 8 * len(point)}
	return asn1.Marshal(k)
}

// importSet is what one import file creates.
type importSet struct {
	what      string // "RSA-2048 private key", "certificate CN=..."
	templates [][]token.Attribute
	id        []byte
	cert      bool
}

// readImport reads and parses the file and builds the object templates,
// before anything is opened.
func readImport(path, label string, id []byte) (*importSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
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
		return &importSet{what: "certificate " + cert.Subject.String(), templates: [][]token.Attribute{tmpl}, id: id, cert: true}, nil
	}
	key, err := parsePrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	what, spkiDER, err := describeKey(key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(id) == 0 {
		sum := sha1.Sum(spkiDER)
		id = sum[:]
	}
	priv, pub, err := keyTemplates(key, label, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &importSet{what: what, templates: [][]token.Attribute{priv, pub}, id: id}, nil
}

// describeKey names a parsed private key and returns its public key's
// SubjectPublicKeyInfo.
func describeKey(key any) (string, []byte, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		der, err := rsaSPKI(k.N, big.NewInt(int64(k.E)))
		return fmt.Sprintf("RSA-%d private key", k.N.BitLen()), der, err
	case *ecdsa.PrivateKey:
		params, err := curveParams(k.Curve.Params().Name)
		if err != nil {
			return "", nil, err
		}
		point := elliptic.Marshal(k.Curve, k.X, k.Y) //nolint:staticcheck // the uncompressed encoding is what PKCS#11 wants
		der, err := ecSPKI(params, point)
		return "EC " + k.Curve.Params().Name + " private key", der, err
	case ed25519.PrivateKey:
		return "", nil, errors.New("Ed25519 keys are not supported yet (RSA and EC keys are)")
	}
	return "", nil, fmt.Errorf("unsupported key type %T (RSA and EC keys are supported)", key)
}

// importObjects creates the objects of an import on the token.
func (s *session) importObjects(w io.Writer, set *importSet) error {
	classes := []uint64{ck.CKO_PRIVATE_KEY, ck.CKO_PUBLIC_KEY}
	if set.cert {
		classes = []uint64{ck.CKO_CERTIFICATE}
	}
	if err := s.refuseDuplicate(set.id, classes...); err != nil {
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

func parsePrivateKey(der []byte) (any, error) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("not a private key (RSA or EC; PKCS#1, SEC 1 or unencrypted PKCS#8) nor an X.509 certificate, in PEM or DER")
	}
	return k, nil
}

// keyTemplates returns the private and public object templates for key.
func keyTemplates(key any, label string, id []byte) (priv, pub []token.Attribute, err error) {
	priv = append(common(ck.CKO_PRIVATE_KEY, label, id), boolAttr(ck.CKA_PRIVATE, true), boolAttr(ck.CKA_SENSITIVE, true),
		boolAttr(ck.CKA_SIGN, true))
	pub = append(common(ck.CKO_PUBLIC_KEY, label, id), boolAttr(ck.CKA_VERIFY, true))
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if len(k.Primes) != 2 {
			return nil, nil, errors.New("multi-prime RSA keys are not supported")
		}
		k.Precompute()
		n, e := k.N.Bytes(), big.NewInt(int64(k.E)).Bytes()
		priv = append(priv, ulong(ck.CKA_KEY_TYPE, ck.CKK_RSA), boolAttr(ck.CKA_DECRYPT, true),
			attr(ck.CKA_MODULUS, n), attr(ck.CKA_PUBLIC_EXPONENT, e), attr(ck.CKA_PRIVATE_EXPONENT, k.D.Bytes()),
			attr(ck.CKA_PRIME_1, k.Primes[0].Bytes()), attr(ck.CKA_PRIME_2, k.Primes[1].Bytes()),
			attr(ck.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()), attr(ck.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
			attr(ck.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes()))
		pub = append(pub, ulong(ck.CKA_KEY_TYPE, ck.CKK_RSA), boolAttr(ck.CKA_ENCRYPT, true),
			attr(ck.CKA_MODULUS, n), attr(ck.CKA_PUBLIC_EXPONENT, e))
	case *ecdsa.PrivateKey:
		params, err := curveParams(k.Curve.Params().Name)
		if err != nil {
			return nil, nil, err
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		point := elliptic.Marshal(k.Curve, k.X, k.Y) //nolint:staticcheck // the uncompressed encoding is what PKCS#11 wants
		priv = append(priv, ulong(ck.CKA_KEY_TYPE, ck.CKK_EC), attr(ck.CKA_EC_PARAMS, params),
			attr(ck.CKA_VALUE, k.D.FillBytes(make([]byte, size))))
		pub = append(pub, ulong(ck.CKA_KEY_TYPE, ck.CKK_EC), attr(ck.CKA_EC_PARAMS, params),
			attr(ck.CKA_EC_POINT, mustMarshal(point)))
	default:
		return nil, nil, fmt.Errorf("unsupported key type %T", key)
	}
	return priv, pub, nil
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
