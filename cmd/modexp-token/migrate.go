package main

// keys migrate: copy the keys of another PKCS#11 token (SoftHSMv2 is the
// case proven in test/) into this one. The other module is a PKCS#11 module
// like any other, driven through github.com/miekg/pkcs11; this token is
// reached in-process, as every command of this tool reaches it.
//
// How a key moves:
//   - Private and secret keys by key wrapping: a temporary AES-256 key is
//     generated on the source (a session object, extractable, so that its
//     value can be made a temporary unwrapping key here); each key is
//     wrapped there with CKM_AES_KEY_WRAP_PAD (private keys as PKCS#8, as
//     SoftHSMv2 and this token write them) and unwrapped here with the
//     source key's label, ID and usage attributes. Both temporary keys are
//     destroyed at the end, and the temporary key's value is wiped.
//     ML-DSA, SLH-DSA and Ed448 keys move the same way, in their PKCS#8
//     forms (the IETF LAMPS ones for ML-DSA and SLH-DSA, RFC 8410's for
//     Ed448).
//   - Public keys (RSA, EC, Edwards, ML-DSA, SLH-DSA), X.509 certificates and data objects by copying
//     their attributes.
//
// What cannot move is reported with the reason: a key that is not
// extractable (CKA_EXTRACTABLE false), one that may be wrapped only by a
// trusted key (CKA_WRAP_WITH_TRUSTED), a key type this token does not hold,
// or whatever the source refused (its CKR code). An object already here
// (same class, ID and label) is left alone, so a second run moves only
// what is new.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/miekg/pkcs11"
	"github.com/spf13/cobra"

	"github.com/modexp-token/modexp-token/token"
	"github.com/modexp-token/modexp-token/token/ck"
)

func migrateCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "migrate --from MODULE.so [--from-token LABEL] [--token LABEL]",
		Short: "Copy every key and certificate of another PKCS#11 token into this one",
		Long: `migrate copies the objects of a token of another PKCS#11 module (such as
SoftHSMv2's libsofthsm2.so) into this token: private and secret keys by key
wrapping (a temporary AES key made on the source wraps each key with
CKM_AES_KEY_WRAP_PAD; this token unwraps it), public keys, certificates and
data objects by copying their attributes. Labels, IDs and usage attributes
are kept; moved keys are token objects, CKA_LOCAL false.

It reports every object: moved, already here (same class, ID and label), or
not moved and why (a key that is not extractable cannot leave its token).
The source's PIN comes from --from-pin-file or MODEXP_TOKEN_FROM_PIN (else a
prompt); this token's as for the other commands. --from-token picks the
source token by label (default: the only initialised token of the source).
The exit status is 1 when some object could not be moved.`,
		Example: `  modexp-token keys migrate --from /usr/lib/softhsm/libsofthsm2.so --from-token web --token t
  SOFTHSM2_CONF=/etc/softhsm/softhsm2.conf modexp-token keys migrate --from /usr/lib/softhsm/libsofthsm2.so --dry-run`,
		Args: noArgs,
	}
	kf := addKeyFlags(c, false)
	var from, fromToken, fromPINFile string
	var dryRun bool
	c.Flags().StringVar(&from, "from", "", "the source PKCS#11 `MODULE` (a .so path; required)")
	c.Flags().StringVar(&fromToken, "from-token", "", "the source token's `LABEL` (default: the only initialised token)")
	c.Flags().StringVar(&fromPINFile, "from-pin-file", "", "`FILE` holding the source token's user PIN (else MODEXP_TOKEN_FROM_PIN, else a prompt)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "list what would move, change nothing")
	// --label and --id of addKeyFlags make no sense here.
	_ = c.Flags().MarkHidden("label")
	_ = c.Flags().MarkHidden("id")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if from == "" {
			return usageErrorf("--from is required: the PKCS#11 module to copy from, e.g. --from /usr/lib/softhsm/libsofthsm2.so")
		}
		if kf.label != "" || kf.idHex != "" {
			return usageErrorf("migrate copies every object: --label and --id do not apply")
		}
		src, err := openSource(from, fromToken, pinSource{what: "source token's user PIN", file: fromPINFile, env: "MODEXP_TOKEN_FROM_PIN", flag: "from-pin-file"})
		if err != nil {
			return err
		}
		defer src.close()
		m, s, err := kf.session(true)
		if err != nil {
			return err
		}
		defer m.Close()
		defer s.close()
		failed, err := migrate(cmd.OutOrStdout(), src, s, dryRun)
		if err != nil {
			return err
		}
		if failed > 0 {
			return withCode(exitFailure, fmt.Errorf("%d object(s) could not be moved (listed above)", failed))
		}
		return nil
	}
	return c
}

// source is a logged-in session on the other module's token.
type source struct {
	p     *pkcs11.Ctx
	sh    pkcs11.SessionHandle
	label string
}

func (src *source) close() {
	_ = src.p.Logout(src.sh)
	_ = src.p.CloseSession(src.sh)
	_ = src.p.Finalize()
	src.p.Destroy()
}

// openSource loads module, finds the token and logs in.
func openSource(module, label string, pin pinSource) (*source, error) {
	if _, err := os.Stat(module); err != nil {
		return nil, notFoundf("--from %s: %v", module, err)
	}
	p := pkcs11.New(module)
	if p == nil {
		return nil, withCode(exitFailure, fmt.Errorf("--from %s: cannot load it as a PKCS#11 module", module))
	}
	fail := func(err error) (*source, error) {
		p.Destroy()
		return nil, err
	}
	if err := p.Initialize(); err != nil {
		return fail(fmt.Errorf("source module: C_Initialize: %w", err))
	}
	fin := func(err error) (*source, error) {
		_ = p.Finalize()
		return fail(err)
	}
	slots, err := p.GetSlotList(true)
	if err != nil {
		return fin(fmt.Errorf("source module: C_GetSlotList: %w", err))
	}
	var found []uint
	var labels []string
	for _, sl := range slots {
		ti, err := p.GetTokenInfo(sl)
		if err != nil || ti.Flags&pkcs11.CKF_TOKEN_INITIALIZED == 0 {
			continue
		}
		l := strings.TrimRight(ti.Label, " \x00")
		labels = append(labels, fmt.Sprintf("%q", l))
		if label == "" || l == label {
			found = append(found, sl)
		}
	}
	switch {
	case len(found) == 0 && label != "":
		return fin(notFoundf("the source module has no token labelled %q (tokens: %s)", label, strings.Join(labels, ", ")))
	case len(found) == 0:
		return fin(notFoundf("the source module has no initialised token"))
	case len(found) > 1:
		return fin(usageErrorf("the source module has %d tokens (%s): say which with --from-token", len(found), strings.Join(labels, ", ")))
	}
	sh, err := p.OpenSession(found[0], pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
	if err != nil {
		return fin(fmt.Errorf("source token: C_OpenSession: %w", err))
	}
	pinBytes, err := pin.read(false)
	if err != nil {
		_ = p.CloseSession(sh)
		return fin(err)
	}
	err = p.Login(sh, pkcs11.CKU_USER, string(pinBytes))
	wipe(pinBytes)
	if err != nil && !errors.Is(err, pkcs11.Error(pkcs11.CKR_USER_ALREADY_LOGGED_IN)) {
		_ = p.CloseSession(sh)
		return fin(withCode(exitPIN, fmt.Errorf("source token: log in: %w", err)))
	}
	ti, _ := p.GetTokenInfo(found[0])
	return &source{p: p, sh: sh, label: strings.TrimRight(ti.Label, " \x00")}, nil
}

// srcObject is one object of the source with the attributes migrate reads.
type srcObject struct {
	h     pkcs11.ObjectHandle
	class uint64
	kt    uint64
	attrs map[uint64][]byte
}

// pairKey names the key pair an object belongs to: its CKA_ID, or its
// label when it has no ID.
func (o *srcObject) pairKey() string {
	if id := o.attrs[ck.CKA_ID]; len(id) > 0 {
		return "id:" + string(id)
	}
	return "label:" + string(o.attrs[ck.CKA_LABEL])
}

func (o *srcObject) bool(t uint64) bool { v := o.attrs[t]; return len(v) == 1 && v[0] != 0 }

func (o *srcObject) String() string {
	kind := classNames[o.class]
	switch o.class {
	case ck.CKO_SECRET_KEY:
		kind = "secret"
	}
	if o.class != ck.CKO_CERTIFICATE && o.class != ck.CKO_DATA {
		kind += " " + strings.ToLower(strings.TrimPrefix(ck.Name("CKK_", o.kt), "CKK_"))
	}
	return fmt.Sprintf("%-18s label=%q id=%x", kind, o.attrs[ck.CKA_LABEL], o.attrs[ck.CKA_ID])
}

// readable attributes, by class: what migrate copies (when the source has
// them) besides CKA_CLASS.
var (
	keyUsage     = []uint64{ck.CKA_LABEL, ck.CKA_ID, ck.CKA_KEY_TYPE, ck.CKA_DERIVE, ck.CKA_START_DATE, ck.CKA_END_DATE}
	privateAttrs = append(append([]uint64{}, keyUsage...), ck.CKA_PRIVATE, ck.CKA_SENSITIVE, ck.CKA_EXTRACTABLE,
		ck.CKA_SIGN, ck.CKA_DECRYPT, ck.CKA_UNWRAP, ck.CKA_SUBJECT, ck.CKA_WRAP_WITH_TRUSTED, ck.CKA_DECAPSULATE)
	secretAttrs = append(append([]uint64{}, keyUsage...), ck.CKA_PRIVATE, ck.CKA_SENSITIVE, ck.CKA_EXTRACTABLE,
		ck.CKA_ENCRYPT, ck.CKA_DECRYPT, ck.CKA_SIGN, ck.CKA_VERIFY, ck.CKA_WRAP, ck.CKA_UNWRAP, ck.CKA_WRAP_WITH_TRUSTED)
	publicAttrs = append(append([]uint64{}, keyUsage...), ck.CKA_PRIVATE, ck.CKA_ENCRYPT, ck.CKA_VERIFY, ck.CKA_WRAP,
		ck.CKA_SUBJECT, ck.CKA_MODULUS, ck.CKA_PUBLIC_EXPONENT, ck.CKA_EC_PARAMS, ck.CKA_EC_POINT,
		ck.CKA_PARAMETER_SET, ck.CKA_VALUE, ck.CKA_ENCAPSULATE) // ML-DSA, SLH-DSA, ML-KEM: the set and the key
	certAttrs = []uint64{ck.CKA_LABEL, ck.CKA_ID, ck.CKA_PRIVATE, ck.CKA_CERTIFICATE_TYPE, ck.CKA_VALUE, ck.CKA_SUBJECT,
		ck.CKA_ISSUER, ck.CKA_SERIAL_NUMBER}
	dataAttrs = []uint64{ck.CKA_LABEL, ck.CKA_PRIVATE, ck.CKA_APPLICATION, ck.CKA_OBJECT_ID, ck.CKA_VALUE}
)

// keyTypesHere are the key types this token holds, by class.
var keyTypesHere = map[uint64][]uint64{
	ck.CKO_PRIVATE_KEY: {ck.CKK_RSA, ck.CKK_EC, ck.CKK_EC_EDWARDS, ck.CKK_DSA, ck.CKK_DH, ck.CKK_ML_DSA, ck.CKK_SLH_DSA, ck.CKK_ML_KEM, ck.CKK_EC_MONTGOMERY},
	ck.CKO_PUBLIC_KEY:  {ck.CKK_RSA, ck.CKK_EC, ck.CKK_EC_EDWARDS, ck.CKK_DSA, ck.CKK_DH, ck.CKK_ML_DSA, ck.CKK_SLH_DSA, ck.CKK_ML_KEM, ck.CKK_EC_MONTGOMERY},
	ck.CKO_SECRET_KEY:  {ck.CKK_AES, ck.CKK_GENERIC_SECRET, ck.CKK_SHA_1_HMAC, ck.CKK_SHA224_HMAC, ck.CKK_SHA256_HMAC, ck.CKK_SHA384_HMAC, ck.CKK_SHA512_HMAC},
}

// objects lists the source's objects of one class with their attributes.
func (src *source) objects(class uint64, types []uint64) ([]*srcObject, error) {
	if err := src.p.FindObjectsInit(src.sh, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, uint(class))}); err != nil {
		return nil, fmt.Errorf("source: C_FindObjectsInit: %w", err)
	}
	var hs []pkcs11.ObjectHandle
	for {
		got, _, err := src.p.FindObjects(src.sh, 64)
		if err != nil {
			_ = src.p.FindObjectsFinal(src.sh)
			return nil, fmt.Errorf("source: C_FindObjects: %w", err)
		}
		if len(got) == 0 {
			break
		}
		hs = append(hs, got...)
	}
	if err := src.p.FindObjectsFinal(src.sh); err != nil {
		return nil, fmt.Errorf("source: C_FindObjectsFinal: %w", err)
	}
	var out []*srcObject
	for _, h := range hs {
		o := &srcObject{h: h, class: class, attrs: map[uint64][]byte{}}
		// One attribute at a time: a sensitive or absent one fails alone.
		for _, t := range types {
			a, err := src.p.GetAttributeValue(src.sh, h, []*pkcs11.Attribute{pkcs11.NewAttribute(uint(t), nil)})
			if err == nil && len(a) == 1 {
				o.attrs[t] = a[0].Value
			}
		}
		if v, ok := o.attrs[ck.CKA_KEY_TYPE]; ok {
			o.kt = ulongOf(v)
		}
		out = append(out, o)
	}
	return out, nil
}

// ulongOf decodes a CK_ULONG of the source module (native byte order, as
// miekg/pkcs11 returns it).
func ulongOf(v []byte) uint64 {
	if u, ok := ck.ParseULong(v); ok {
		return u
	}
	var u uint64
	for i := len(v) - 1; i >= 0; i-- { // a 4-byte CK_ULONG (32-bit module)
		u = u<<8 | uint64(v[i])
	}
	return u
}

// template turns the copied attributes into a template for this token:
// CK_ULONG and CK_BBOOL values re-encoded, CKA_TOKEN true.
func (o *srcObject) template(types []uint64, skip ...uint64) []token.Attribute {
	t := []token.Attribute{ulong(ck.CKA_CLASS, o.class), boolAttr(ck.CKA_TOKEN, true)}
next:
	for _, typ := range types {
		for _, s := range skip {
			if typ == s {
				continue next
			}
		}
		v, ok := o.attrs[typ]
		if !ok {
			continue
		}
		switch typ {
		case ck.CKA_KEY_TYPE, ck.CKA_CERTIFICATE_TYPE, ck.CKA_PARAMETER_SET:
			t = append(t, ulong(typ, ulongOf(v)))
		case ck.CKA_PRIVATE, ck.CKA_SENSITIVE, ck.CKA_EXTRACTABLE, ck.CKA_SIGN, ck.CKA_DECRYPT, ck.CKA_UNWRAP,
			ck.CKA_ENCRYPT, ck.CKA_VERIFY, ck.CKA_WRAP, ck.CKA_DERIVE, ck.CKA_WRAP_WITH_TRUSTED:
			t = append(t, boolAttr(typ, o.bool(typ)))
		case ck.CKA_START_DATE, ck.CKA_END_DATE:
			if len(v) == 8 { // empty dates are left out
				t = append(t, attr(typ, v))
			}
		default:
			t = append(t, attr(typ, v))
		}
	}
	return t
}

// migrate moves everything it can and reports each object; it returns how
// many could not be moved.
func migrate(w io.Writer, src *source, dst *session, dryRun bool) (failed int, err error) {
	fmt.Fprintf(w, "from token %q to slot 0x%x%s\n", src.label, dst.slot, map[bool]string{true: " (dry run: nothing changes)"}[dryRun])
	var moved, here, skipped int
	// stranded holds the pair key (pairKey) of every private key that did
	// not move: its public half is left where it is, since a public key
	// alone here would promise a key pair this token does not have.
	stranded := map[string]bool{}
	report := func(o *srcObject, what string, err error) {
		switch {
		case err != nil && o.class == ck.CKO_PRIVATE_KEY:
			stranded[o.pairKey()] = true
			failed++
			fmt.Fprintf(w, "  %-8s %s: %v\n", "NOT", o, err)
		case err == nil:
			fmt.Fprintf(w, "  %-8s %s\n", what, o)
			if what == "already" {
				here++
			} else {
				moved++
			}
		default:
			failed++
			fmt.Fprintf(w, "  %-8s %s: %v\n", "NOT", o, err)
		}
	}
	var wrap *wrapPair
	defer func() {
		if wrap != nil {
			wrap.destroy(src, dst)
		}
	}()
	type classPlan struct {
		class uint64
		types []uint64
	}
	for _, plan := range []classPlan{{ck.CKO_SECRET_KEY, secretAttrs}, {ck.CKO_PRIVATE_KEY, privateAttrs},
		{ck.CKO_PUBLIC_KEY, publicAttrs}, {ck.CKO_CERTIFICATE, certAttrs}, {ck.CKO_DATA, dataAttrs}} {
		objs, err := src.objects(plan.class, plan.types)
		if err != nil {
			return failed, err
		}
		for _, o := range objs {
			if o.class == ck.CKO_PUBLIC_KEY && stranded[o.pairKey()] {
				skipped++
				fmt.Fprintf(w, "  %-8s %s: its private key did not move, so neither does it\n", "SKIPPED", o)
				continue
			}
			if o.class == ck.CKO_DATA || o.class == ck.CKO_CERTIFICATE {
				// not key types
			} else if !contains(keyTypesHere[o.class], o.kt) {
				report(o, "", fmt.Errorf("this token holds no %s %s keys", ck.Name("CKK_", o.kt), classNames[o.class]))
				continue
			}
			if dup, err := dst.alreadyHere(o); err != nil {
				return failed, err
			} else if dup {
				report(o, "already", nil)
				continue
			}
			isKey := o.class == ck.CKO_PRIVATE_KEY || o.class == ck.CKO_SECRET_KEY
			switch {
			case isKey && !o.bool(ck.CKA_EXTRACTABLE):
				report(o, "", errors.New("CKA_EXTRACTABLE is false: the key cannot leave its token"))
				continue
			case isKey && o.bool(ck.CKA_WRAP_WITH_TRUSTED):
				report(o, "", errors.New("CKA_WRAP_WITH_TRUSTED: only a wrapping key the source's SO marked trusted may wrap it"))
				continue
			case dryRun:
				report(o, "would", nil)
				continue
			}
			if isKey {
				if wrap == nil {
					if wrap, err = newWrapPair(src, dst); err != nil {
						return failed, err
					}
				}
				report(o, "moved", wrap.move(src, dst, o, plan.types))
				continue
			}
			_, err := dst.mod.CreateObject(dst.h, o.template(plan.types))
			report(o, "copied", err)
		}
	}
	if dryRun {
		fmt.Fprintf(w, "%d would move, %d already here, %d could not move", moved, here, failed)
	} else {
		fmt.Fprintf(w, "%d moved, %d already here, %d not moved", moved, here, failed)
	}
	if skipped > 0 {
		fmt.Fprintf(w, ", %d public key(s) left with their private keys", skipped)
	}
	fmt.Fprintln(w)
	return failed, nil
}

func contains(list []uint64, v uint64) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// alreadyHere reports whether this token has an object of o's class with
// o's ID and label.
func (s *session) alreadyHere(o *srcObject) (bool, error) {
	t := []token.Attribute{ulong(ck.CKA_CLASS, o.class)}
	for _, typ := range []uint64{ck.CKA_ID, ck.CKA_LABEL} {
		if v, ok := o.attrs[typ]; ok {
			t = append(t, attr(typ, v))
		}
	}
	hs, err := s.find(t)
	return len(hs) > 0, err
}

// wrapPair is the temporary AES key: on the source (wraps) and here
// (unwraps).
type wrapPair struct {
	src pkcs11.ObjectHandle
	dst uint64
}

// newWrapPair generates the temporary key on the source and makes its copy
// here; both are session objects.
func newWrapPair(src *source, dst *session) (*wrapPair, error) {
	h, err := src.p.GenerateKey(src.sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_AES_KEY_GEN, nil)}, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_SECRET_KEY), pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, pkcs11.CKK_AES),
		pkcs11.NewAttribute(pkcs11.CKA_VALUE_LEN, 32), pkcs11.NewAttribute(pkcs11.CKA_TOKEN, false),
		pkcs11.NewAttribute(pkcs11.CKA_WRAP, true), pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, true),
		pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, false), pkcs11.NewAttribute(pkcs11.CKA_LABEL, "modexp-token migrate"),
	})
	if err != nil {
		return nil, fmt.Errorf("source: generate the temporary wrapping key (CKM_AES_KEY_GEN): %w", err)
	}
	a, err := src.p.GetAttributeValue(src.sh, h, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_VALUE, nil)})
	if err != nil || len(a) != 1 || len(a[0].Value) != 32 {
		_ = src.p.DestroyObject(src.sh, h)
		return nil, fmt.Errorf("source: read the temporary wrapping key: %v", err)
	}
	value := a[0].Value
	defer wipe(value)
	d, err := dst.mod.CreateObject(dst.h, []token.Attribute{ulong(ck.CKA_CLASS, ck.CKO_SECRET_KEY), ulong(ck.CKA_KEY_TYPE, ck.CKK_AES),
		boolAttr(ck.CKA_TOKEN, false), boolAttr(ck.CKA_UNWRAP, true), attr(ck.CKA_VALUE, value)})
	if err != nil {
		_ = src.p.DestroyObject(src.sh, h)
		return nil, fmt.Errorf("make the temporary unwrapping key: %w", err)
	}
	return &wrapPair{src: h, dst: d}, nil
}

func (wp *wrapPair) destroy(src *source, dst *session) {
	_ = src.p.DestroyObject(src.sh, wp.src)
	_ = dst.mod.DestroyObject(dst.h, wp.dst)
}

// move wraps o on the source and unwraps it here.
func (wp *wrapPair) move(src *source, dst *session, o *srcObject, types []uint64) error {
	wrapped, err := src.p.WrapKey(src.sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_AES_KEY_WRAP_PAD, nil)}, wp.src, o.h)
	if err != nil {
		return fmt.Errorf("the source does not wrap it: %w", err)
	}
	// CKA_WRAP_WITH_TRUSTED was checked; it stays false here.
	tmpl := o.template(types, ck.CKA_WRAP_WITH_TRUSTED)
	_, err = dst.mod.UnwrapKey(dst.h, &token.Mechanism{Type: ck.CKM_AES_KEY_WRAP_PAD}, wp.dst, wrapped, tmpl)
	if err != nil {
		return fmt.Errorf("unwrap here: %w", err)
	}
	return nil
}
