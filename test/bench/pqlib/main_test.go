package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadOurs reads the first module's ops per CPU-second from a TSV laid
// out as p11bench writes it, skipping cells without a rate.
func TestReadOurs(t *testing.T) {
	tsv := "op\toperation\tthreads\tA_ops_per_s\tB_ops_per_s\tratio\tratio_cpu\tA_ops_per_cpu_s\tA_ops_per_thread_cpu_s\tA_ops\n" +
		"mldsa65-sign\tML-DSA-65 sign\t1\t3670.00\t\t\t\t5426.20\t5600.00\t7340\n" +
		"mldsa65-sign\tML-DSA-65 sign\t2\t3677.00\t\t\t\t5022.60\t5100.00\t7354\n" +
		"x25519-derive\tX25519 derive\t1\t\t\t\t\t\t\t0\n"
	path := filepath.Join(t.TempDir(), "bench.tsv")
	if err := os.WriteFile(path, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readOurs(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want float64
		ok   bool
	}{
		{key("mldsa65-sign", 1), 5426.20, true},
		{key("mldsa65-sign", 2), 5022.60, true},
		{key("x25519-derive", 1), 0, false},
	} {
		if v, ok := got[tc.key]; ok != tc.ok || v != tc.want {
			t.Errorf("%s: %v, %v; want %v, %v", tc.key, v, ok, tc.want, tc.ok)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.tsv")
	if err := os.WriteFile(bad, []byte("op\tthreads\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readOurs(bad); err == nil {
		t.Error("a TSV without the rate column was read")
	}
}

// TestBeforeRoundTrip: what writeTSV writes, readBefore reads back; a
// missing earlier run is no error.
func TestBeforeRoundTrip(t *testing.T) {
	rows := []row{
		{op: op{id: "mldsa44-sign", title: "ML-DSA-44 sign", check: func(_, _ []byte) bool { return true }}, threads: 2,
			lib: rate{perSec: 9000, perCPU: 9367.25}, libCheck: rate{perCPU: 8315.5}},
		{op: op{id: "x25519-derive", title: "X25519 derive"}, threads: 1, lib: rate{perSec: 20000, perCPU: 23896.75}, module: 13749.28},
	}
	path := filepath.Join(t.TempDir(), "pqlib.tsv")
	if err := writeTSV(path, rows); err != nil {
		t.Fatal(err)
	}
	got, err := readBefore(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{
		key("mldsa44-sign", 2):  {9367.25, 8315.5},
		key("x25519-derive", 1): {23896.75, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
	if m, err := readBefore(filepath.Join(t.TempDir(), "none.tsv")); err != nil || m != nil {
		t.Errorf("missing earlier run: %v, %v", m, err)
	}
}

// TestSelected is p11bench's --only: any comma-separated substring.
func TestSelected(t *testing.T) {
	for _, tc := range []struct {
		id, only string
		want     bool
	}{
		{"mldsa65-sign", "", true},
		{"mldsa65-sign", "mldsa", true},
		{"mldsa65-sign", "x25519,65-s", true},
		{"mldsa65-sign", "verify", false},
		{"mldsa65-sign", ",", false},
	} {
		if got := selected(tc.id, tc.only); got != tc.want {
			t.Errorf("selected(%q, %q) = %v, want %v", tc.id, tc.only, got, tc.want)
		}
	}
}
