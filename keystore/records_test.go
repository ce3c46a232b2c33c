package keystore

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func testPINRecord(tries uint32) pinRecord {
	return pinRecord{
		KDF:     KDFParams{Time: 3, MemoryKiB: 65536, Threads: 4},
		Salt:    bytes.Repeat([]byte{0x5a}, 16),
		Wrapped: bytes.Repeat([]byte{0xa5}, wrappedLen),
		Tries:   tries,
	}
}

func TestTokenRecordRoundTrip(t *testing.T) {
	user := testPINRecord(7)
	tests := []struct {
		name string
		rec  tokenRecord
	}{
		{"no user PIN", tokenRecord{Label: "token", Serial: "0123456789abcdef", SO: testPINRecord(0)}},
		{"user PIN", tokenRecord{Label: "", Serial: "fedcba9876543210", SO: testPINRecord(1 << 31), User: &user}},
		{"long label", tokenRecord{Label: strings.Repeat("é", maxLabelLen/2), Serial: "0000000000000000", SO: testPINRecord(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := encodeTokenRecord(&tt.rec)
			got, err := decodeTokenRecord(enc)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.rec) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", *got, tt.rec)
			}
			if again := encodeTokenRecord(got); !bytes.Equal(again, enc) {
				t.Fatalf("re-encoding differs")
			}
		})
	}
}

func TestObjectRecordRoundTrip(t *testing.T) {
	sealed := bytes.Repeat([]byte{1}, nonceSize+tagSize+5)
	tests := []struct {
		name string
		rec  objectRecord
	}{
		{"empty", objectRecord{Attrs: []storedAttr{}}},
		{"clear", objectRecord{Attrs: []storedAttr{{Type: 0, Value: []byte{}}, {Type: 3, Value: []byte("label")}}}},
		{"sealed", objectRecord{Attrs: []storedAttr{{Type: 0x11, Sealed: true, Value: sealed}, {Type: 0x102, Value: []byte{1}}}}},
		{"mixed", objectRecord{Attrs: []storedAttr{{Type: 1, Value: []byte{9}}, {Type: 0x120, Sealed: true, Value: sealed}, {Type: 1 << 63, Value: bytes.Repeat([]byte{7}, 70000)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := encodeObjectRecord(&tt.rec, nil)
			got, err := decodeObjectRecord(enc)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.rec) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", *got, tt.rec)
			}
			if again := encodeObjectRecord(got, nil); !bytes.Equal(again, enc) {
				t.Fatalf("re-encoding differs")
			}
		})
	}
}

func TestDecodeObjectRecordRejects(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "end of record"},
		{"version 0", []byte{0, 0}, "version"},
		{"version 3", []byte{3, 0}, "version"},
		{"version 2 without MAC", []byte{2, 0}, "too short for its MAC"},
		{"trailing", []byte{1, 0, 0}, "trailing"},
		{"overlong count", []byte{1, 0x80, 0x00}, "overlong"},
		{"count overruns", []byte{1, 5, 1, 0, 0}, "overruns"},
		{"value overruns", []byte{1, 1, 1, 0, 9, 'a'}, "exceeds"},
		{"bad bool", []byte{1, 1, 1, 2, 0}, "boolean"},
		{"out of order", []byte{1, 2, 2, 0, 0, 1, 0, 0}, "order"},
		{"duplicate", []byte{1, 2, 1, 0, 0, 1, 0, 0}, "order"},
		{"short sealed", []byte{1, 1, 1, 1, 1, 'x'}, "too short"},
		{"truncated varint", []byte{1, 0x80}, "varint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeObjectRecord(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("decode(%x) = %v, want error containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestDecodeTokenRecordRejects(t *testing.T) {
	good := tokenRecord{Label: "l", Serial: "0123456789abcdef", SO: testPINRecord(0)}
	mutate := func(f func(*tokenRecord)) []byte {
		r := good
		f(&r)
		return encodeTokenRecord(&r)
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"short serial", mutate(func(r *tokenRecord) { r.Serial = "abc" }), "serial"},
		{"time 0", mutate(func(r *tokenRecord) { r.SO.KDF.Time = 0 }), "time"},
		{"huge memory", mutate(func(r *tokenRecord) { r.SO.KDF.MemoryKiB = 1 << 30 }), "out of range"},
		{"threads 0", mutate(func(r *tokenRecord) { r.SO.KDF.Threads = 0 }), "threads"},
		{"short salt", mutate(func(r *tokenRecord) { r.SO.Salt = r.SO.Salt[:8] }), "salt"},
		{"short wrapped", mutate(func(r *tokenRecord) { r.SO.Wrapped = r.SO.Wrapped[:10] }), "wrapped"},
		{"trailing", append(encodeTokenRecord(&good), 0), "trailing"},
		{"cut", encodeTokenRecord(&good)[:20], "record"},
		{"unknown KDF", func() []byte { b := encodeTokenRecord(&good); b[1+1+1+1+16] = 9; return b }(), "KDF"},
		{"version 3", func() []byte { b := encodeTokenRecord(&good); b[0] = 3; return b }(), "version"},
		{"policy of 0 tries", mutate(func(r *tokenRecord) { r.Policy = &Policy{KDF: InsecureTestKDFParams} }), "policy"},
		{"policy KDF time 0", mutate(func(r *tokenRecord) { r.Policy = &Policy{MaxPINTries: 3, KDF: KDFParams{MemoryKiB: 64, Threads: 1}} }), "policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeTokenRecord(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("decode = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

// The decoders must never panic, and accept only canonical encodings:
// whatever decodes re-encodes to the same bytes.
func FuzzDecodeObjectRecord(f *testing.F) {
	f.Add([]byte{1, 0})
	f.Add(encodeObjectRecord(&objectRecord{Attrs: []storedAttr{{Type: 3, Value: []byte("x")}, {Type: 0x11, Sealed: true, Value: make([]byte, 40)}}}, nil))
	f.Add(encodeObjectRecord(&objectRecord{Attrs: []storedAttr{{Type: 3, Value: []byte("x")}}}, func([]byte) []byte { return make([]byte, macSize) }))
	f.Fuzz(func(t *testing.T, in []byte) {
		rec, err := decodeObjectRecord(in)
		if err != nil {
			return
		}
		var mac func([]byte) []byte
		if rec.MAC != nil {
			mac = func(body []byte) []byte {
				if !bytes.Equal(body, rec.body) {
					t.Fatalf("MAC'd body %x, decoded %x", body, rec.body)
				}
				return rec.MAC
			}
		}
		if out := encodeObjectRecord(rec, mac); !bytes.Equal(out, in) {
			t.Fatalf("not canonical: %x re-encodes to %x", in, out)
		}
	})
}

func FuzzDecodeTokenRecord(f *testing.F) {
	user := testPINRecord(2)
	f.Add(encodeTokenRecord(&tokenRecord{Label: "l", Serial: "0123456789abcdef", SO: testPINRecord(0)}))
	f.Add(encodeTokenRecord(&tokenRecord{Label: "", Serial: "0123456789abcdef", SO: testPINRecord(1), User: &user}))
	f.Add(encodeTokenRecord(&tokenRecord{Label: "p", Serial: "0123456789abcdef", SO: testPINRecord(1), Policy: &Policy{MaxPINTries: 5, KDF: DefaultKDFParams}}))
	f.Fuzz(func(t *testing.T, in []byte) {
		rec, err := decodeTokenRecord(in)
		if err != nil {
			return
		}
		if out := encodeTokenRecord(rec); !bytes.Equal(out, in) {
			t.Fatalf("not canonical: %x re-encodes to %x", in, out)
		}
	})
}
