package main

import (
	"fmt"
	"net/url"
	"strings"
)

// pkcs11URI is the subset of an RFC 7512 PKCS#11 URI that names a key:
// the token (label, manufacturer, serial, model) and the object (label,
// id, type).
type pkcs11URI struct {
	Token, Manufacturer, Serial, Model string
	Object, ID, Type                   string // ID holds raw bytes
}

// String formats the URI with every path attribute percent-encoded where
// RFC 7512 requires it, ready to paste into openssl or p11tool.
func (u pkcs11URI) String() string {
	var parts []string
	add := func(k, v string, all bool) {
		if v != "" {
			parts = append(parts, k+"="+escape(v, all))
		}
	}
	add("model", u.Model, false)
	add("manufacturer", u.Manufacturer, false)
	add("serial", u.Serial, false)
	add("token", u.Token, false)
	add("id", u.ID, true)
	add("object", u.Object, false)
	add("type", u.Type, false)
	return "pkcs11:" + strings.Join(parts, ";")
}

// escape percent-encodes v: every byte when all is set (for binary IDs),
// otherwise all but RFC 3986 unreserved characters and the few path
// characters RFC 7512 leaves alone.
func escape(v string, all bool) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !all && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-._~:[]@!$'()*+,=&", c) >= 0) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// parseURI reads a PKCS#11 URI's path attributes. Query attributes (after
// '?', such as pin-value) are ignored: PINs never come from the command line.
func parseURI(s string) (pkcs11URI, error) {
	rest, ok := strings.CutPrefix(s, "pkcs11:")
	if !ok {
		return pkcs11URI{}, fmt.Errorf("not a PKCS#11 URI (want pkcs11:...): %q", s)
	}
	rest, _, _ = strings.Cut(rest, "?")
	var u pkcs11URI
	if rest == "" {
		return u, nil
	}
	for _, attr := range strings.Split(rest, ";") {
		k, v, ok := strings.Cut(attr, "=")
		if !ok {
			return u, fmt.Errorf("URI attribute without value: %q", attr)
		}
		val, err := url.PathUnescape(v)
		if err != nil {
			return u, fmt.Errorf("URI attribute %s: %w", k, err)
		}
		switch k {
		case "token":
			u.Token = val
		case "manufacturer":
			u.Manufacturer = val
		case "serial":
			u.Serial = val
		case "model":
			u.Model = val
		case "object":
			u.Object = val
		case "id":
			u.ID = val
		case "type":
			u.Type = val
		case "slot-id", "slot-description", "slot-manufacturer", "library-manufacturer",
			"library-description", "library-version":
			// Accepted and not needed to select a key.
		default:
			return u, fmt.Errorf("unknown URI attribute %q", k)
		}
	}
	return u, nil
}
