package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"strings"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

// runKeys dispatches the keys subcommands.
func runKeys(args []string, stdout io.Writer) error {
	sub, rest, err := splitSub(args, "list", "generate", "import", "delete")
	if err != nil {
		return err
	}
	fs := newFlags("keys " + sub)
	slotID := fs.Int64("slot", -1, "slot ID (default: the first slot)")
	pinFile := fs.String("pin-file", "", "file holding the user PIN")
	label := fs.String("label", "", "object label")
	idHex := fs.String("id", "", "object ID, in hex")
	keyType := fs.String("type", "rsa:2048", "generate: rsa:BITS or ec:CURVE (P-256, P-384, P-521, secp256k1)")
	file := fs.String("file", "", "import: PEM or DER file (private key, PKCS#1/PKCS#8/SEC 1, or an X.509 certificate)")
	uri := fs.String("uri", "", "delete/list: select objects by PKCS#11 URI")
	public := fs.Bool("public", false, "list: public objects only, without logging in")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	id, err := hex.DecodeString(*idHex)
	if err != nil {
		return fmt.Errorf("--id: %w", err)
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
	var login *pinSource
	if !(sub == "list" && *public) {
		login = &pinSource{"user PIN", *pinFile, "MODEXP_TOKEN_PIN"}
	}
	s, err := openSession(m, slot, login)
	if err != nil {
		return err
	}
	defer s.close()
	switch sub {
	case "list":
		sel, err := selector(*uri, *label, id)
		if err != nil {
			return err
		}
		return s.list(stdout, sel)
	case "generate":
		return s.generate(stdout, *keyType, *label, id)
	case "import":
		if *file == "" {
			return errors.New("--file is required")
		}
		return s.importFile(stdout, *file, *label, id)
	default:
		sel, err := selector(*uri, *label, id)
		if err != nil {
			return err
		}
		if len(sel) == 0 {
			return errors.New("say which objects to delete: --label, --id or --uri")
		}
		return s.delete(stdout, sel)
	}
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

// list prints one line per object: class, key type and size, label, ID
// and its PKCS#11 URI.
func (s *session) list(w io.Writer, sel []token.Attribute) error {
	objs, err := s.find(sel)
	if err != nil {
		return err
	}
	ti, err := s.mod.TokenInfo(s.slot)
	if err != nil {
		return fmt.Errorf("token info: %w", err)
	}
	for _, obj := range objs {
		a, err := s.attrs(obj, ck.CKA_CLASS, ck.CKA_KEY_TYPE, ck.CKA_LABEL, ck.CKA_ID, ck.CKA_MODULUS, ck.CKA_EC_PARAMS)
		if err != nil {
			return err
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
				desc = ck.Name("CKK_", kt)
			}
		}
		uri := pkcs11URI{
			Model: strings.TrimSpace(ti.Model), Manufacturer: strings.TrimSpace(ti.ManufacturerID),
			Serial: strings.TrimSpace(ti.SerialNumber), Token: strings.TrimSpace(ti.Label),
			Object: string(a[ck.CKA_LABEL]), ID: string(a[ck.CKA_ID]), Type: classNames[class],
		}
		fmt.Fprintf(w, "%-7s %-12s label=%q id=%s\n        %s\n", classNames[class], desc,
			a[ck.CKA_LABEL], hex.EncodeToString(a[ck.CKA_ID]), uri)
	}
	return nil
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

// generate makes a key pair on the token.
func (s *session) generate(w io.Writer, spec, label string, id []byte) error {
	kind, arg, _ := strings.Cut(spec, ":")
	pub := common(ck.CKO_PUBLIC_KEY, label, id)
	priv := append(common(ck.CKO_PRIVATE_KEY, label, id), boolAttr(ck.CKA_PRIVATE, true), boolAttr(ck.CKA_SENSITIVE, true),
		boolAttr(ck.CKA_SIGN, true))
	pub = append(pub, boolAttr(ck.CKA_VERIFY, true))
	var mech token.Mechanism
	switch kind {
	case "rsa":
		bits, err := strconv.Atoi(arg)
		if err != nil {
			return fmt.Errorf("--type %s: bits: %w", spec, err)
		}
		mech.Type = ck.CKM_RSA_PKCS_KEY_PAIR_GEN
		pub = append(pub, ulong(ck.CKA_MODULUS_BITS, uint64(bits)), attr(ck.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}),
			boolAttr(ck.CKA_ENCRYPT, true))
		priv = append(priv, boolAttr(ck.CKA_DECRYPT, true))
	case "ec":
		params, err := curveParams(arg)
		if err != nil {
			return err
		}
		mech.Type = ck.CKM_EC_KEY_PAIR_GEN
		pub = append(pub, attr(ck.CKA_EC_PARAMS, params))
	default:
		return fmt.Errorf("--type %q: want rsa:BITS or ec:CURVE", spec)
	}
	_, privH, err := s.mod.GenerateKeyPair(s.h, &mech, pub, priv)
	if err != nil {
		return fmt.Errorf("generate %s key pair: %w", spec, err)
	}
	fmt.Fprintf(w, "generated %s key pair\n", spec)
	return s.list(w, []token.Attribute{ulong(ck.CKA_CLASS, ck.CKO_PRIVATE_KEY), attr(ck.CKA_ID, mustAttr(s, privH, ck.CKA_ID))})
}

func mustAttr(s *session, obj, t uint64) []byte {
	a, err := s.attrs(obj, t)
	if err != nil {
		return nil
	}
	return a[t]
}

// importFile reads a PEM or DER file and creates the objects it holds: a
// private key (with its public key beside it) or a certificate.
func (s *session) importFile(w io.Writer, path, label string, id []byte) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	der := data
	if block, _ := pem.Decode(data); block != nil {
		der = block.Bytes
	}
	if cert, err := x509.ParseCertificate(der); err == nil {
		tmpl := append(common(ck.CKO_CERTIFICATE, label, id), ulong(ck.CKA_CERTIFICATE_TYPE, ck.CKC_X_509),
			attr(ck.CKA_VALUE, cert.Raw), attr(ck.CKA_SUBJECT, cert.RawSubject), attr(ck.CKA_ISSUER, cert.RawIssuer),
			attr(ck.CKA_SERIAL_NUMBER, mustMarshal(cert.SerialNumber)))
		if _, err := s.mod.CreateObject(s.h, tmpl); err != nil {
			return fmt.Errorf("import certificate: %w", err)
		}
		fmt.Fprintf(w, "imported certificate %s\n", cert.Subject)
		return nil
	}
	key, err := parsePrivateKey(der)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	priv, pub, err := keyTemplates(key, label, id)
	if err != nil {
		return err
	}
	if _, err := s.mod.CreateObject(s.h, priv); err != nil {
		return fmt.Errorf("import private key: %w", err)
	}
	if _, err := s.mod.CreateObject(s.h, pub); err != nil {
		return fmt.Errorf("import public key: %w", err)
	}
	fmt.Fprintf(w, "imported %T\n", key)
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
		return nil, errors.New("not an RSA or EC private key (PKCS#1, SEC 1 or PKCS#8) nor an X.509 certificate")
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

// delete destroys every object matching sel.
func (s *session) delete(w io.Writer, sel []token.Attribute) error {
	objs, err := s.find(sel)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return errors.New("no matching objects")
	}
	for _, obj := range objs {
		if err := s.mod.DestroyObject(s.h, obj); err != nil {
			return fmt.Errorf("delete object %d: %w", obj, err)
		}
	}
	fmt.Fprintf(w, "deleted %d objects\n", len(objs))
	return nil
}
