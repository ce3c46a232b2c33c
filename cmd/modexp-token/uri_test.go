package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modexp-token/modexp-token/engine/backend/soft"
)

func TestURIRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		u    pkcs11URI
		want string
	}{
		{"plain", pkcs11URI{Token: "demo", Object: "web", Type: "private"}, "pkcs11:token=demo;object=web;type=private"},
		{"binary id and spaces", pkcs11URI{Manufacturer: "ModExp Token", Token: "my token", ID: "\x01\xab", Type: "public"},
			"pkcs11:manufacturer=ModExp%20Token;token=my%20token;id=%01%AB;type=public"},
		{"reserved characters", pkcs11URI{Token: "a;b/c?d", Object: "x%y"}, "pkcs11:token=a%3Bb%2Fc%3Fd;object=x%25y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.u.String()
			if got != tc.want {
				t.Fatalf("String() = %q, want %q", got, tc.want)
			}
			back, err := parseURI(got)
			if err != nil {
				t.Fatalf("parseURI(%q): %v", got, err)
			}
			if back != tc.u {
				t.Fatalf("round trip = %+v, want %+v", back, tc.u)
			}
		})
	}
}

func TestParseURIRejects(t *testing.T) {
	for _, s := range []string{"file:x", "pkcs11:token", "pkcs11:bogus=1", "pkcs11:id=%zz"} {
		if _, err := parseURI(s); err == nil {
			t.Errorf("parseURI(%q) succeeded, want an error", s)
		}
	}
}

func TestParseURIIgnoresQuery(t *testing.T) {
	u, err := parseURI("pkcs11:object=k;type=private?pin-value=1234")
	if err != nil {
		t.Fatal(err)
	}
	if u.Object != "k" || u.Type != "private" {
		t.Fatalf("got %+v", u)
	}
}

func TestEngineTableTSV(t *testing.T) {
	var out, errOut strings.Builder
	if code := run([]string{"engine", "table", "--profile", "orup561", "--format", "tsv"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if lines[0] != "profile\tcase\tpublished\tunit\tsimulated\tdeviation_pct\tok" {
		t.Fatalf("header = %q", lines[0])
	}
	last := lines[len(lines)-1]
	var n, m int
	if _, err := fmt.Sscanf(last, "%d of %d published figures reproduced", &n, &m); err != nil || n != m || m == 0 {
		t.Fatalf("last line = %q (n=%d m=%d err=%v)", last, n, m, err)
	}
}

func TestEngineInfo(t *testing.T) {
	var out, errOut strings.Builder
	if code := run([]string{"engine", "info"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	ki := soft.Kernels()
	if !strings.Contains(out.String(), "kernel:       "+ki.Name+" (MODEXP_KERNEL="+ki.Requested+")") ||
		!strings.Contains(out.String(), "cpu features: ") {
		t.Fatalf("engine info:\n%s", out.String())
	}
	// A kernel selection error is the command's error.
	out.Reset()
	bad := ki
	bad.Err = errors.New("MODEXP_KERNEL=\"x\": not a kernel")
	if err := writeKernelInfo(&out, bad); err == nil || !strings.Contains(out.String(), "kernel:") {
		t.Fatalf("writeKernelInfo with an error: %v\n%s", err, out.String())
	}
}
