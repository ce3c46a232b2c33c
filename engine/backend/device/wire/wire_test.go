package wire

import (
	"bytes"
	"crypto/elliptic"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"strings"
	"testing"
)

func sampleFrames() []*Frame {
	big1024 := bytes.Repeat([]byte{0xA5}, MaxOperand)
	return []*Frame{
		NewRequest(OpPing, 1),
		NewRequest(OpPing, 0xFFFFFFFF).Add(TagPayload, []byte("hello")),
		NewRequest(OpModExp, 7).Add(TagMod, []byte{0x0B}).Add(TagBase, []byte{2}).Add(TagExp, []byte{5}).AddU32(TagDeadlineMS, 1500).AddU8(TagMode, ModePublic),
		NewRequest(OpModExpCRT, 9).Add(TagBase, big1024).Add(TagP, big1024[:512]).Add(TagQ, big1024[:512]).
			Add(TagDP, big1024[:512]).Add(TagDQ, big1024[:512]).Add(TagQInv, big1024[:512]),
		NewRequest(OpECMul, 3).AddString(TagCurve, "P-256").Add(TagScalar, []byte{1, 2, 3}).Add(TagPX, nil).Add(TagPY, []byte{}),
		NewResponse(NewRequest(OpModExp, 42), StatusOK).Add(TagResult, []byte{0, 1}).AddU64(TagCycles, 1<<40).AddFloat(TagEnergy, 1.5e-6),
		NewResponse(NewRequest(OpModExp, 43), StatusBusy).AddU32(TagRetryAfterMS, 100).AddString(TagMessage, "busy"),
		{Version: 1, Kind: KindRequest, Op: 0x7777, ID: 5, Flags: 0xBEEF, Fields: []TLV{{Tag: 0x9001, Value: []byte{1}}}},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, f := range sampleFrames() {
		t.Run(f.Op.String(), func(t *testing.T) {
			b, err := f.Append(nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != f.EncodedLen() {
				t.Fatalf("EncodedLen %d, encoded %d", f.EncodedLen(), len(b))
			}
			if got := binary.BigEndian.Uint32(b); int(got) != len(b)-4 {
				t.Fatalf("length field %d, body %d", got, len(b)-4)
			}
			g, err := ReadFrame(bytes.NewReader(b), MaxFrame)
			if err != nil {
				t.Fatal(err)
			}
			if g.Version != f.Version || g.Kind != f.Kind || g.Op != f.Op || g.ID != f.ID || g.Status != f.Status || g.Flags != f.Flags {
				t.Fatalf("header: got %+v want %+v", g, f)
			}
			if len(g.Fields) != len(f.Fields) {
				t.Fatalf("%d fields, want %d", len(g.Fields), len(f.Fields))
			}
			for i := range f.Fields {
				if g.Fields[i].Tag != f.Fields[i].Tag || !bytes.Equal(g.Fields[i].Value, f.Fields[i].Value) {
					t.Fatalf("field %d: got %v want %v", i, g.Fields[i], f.Fields[i])
				}
			}
			b2, _ := g.Append(nil)
			if !bytes.Equal(b, b2) {
				t.Fatal("re-encoding differs")
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	f := NewRequest(OpInfo, 1).AddU8(TagProtoMin, 1).AddU32(TagMaxModBits, 4096).AddU64(TagCycles, 1<<50).
		AddFloat(TagEnergy, 0.25).AddBool(TagNativeCRT, true).AddString(TagMessage, "m").Add(TagCores, nil)
	cases := []struct {
		tag  Tag
		want uint64
	}{{TagProtoMin, 1}, {TagMaxModBits, 4096}, {TagCycles, 1 << 50}, {TagNativeCRT, 1}}
	for _, c := range cases {
		v, ok, err := f.Uint(c.tag)
		if !ok || err != nil || v != c.want {
			t.Errorf("Uint(%#x) = %d, %v, %v; want %d", c.tag, v, ok, err, c.want)
		}
	}
	if _, ok, err := f.Uint(TagCores); !ok || err == nil {
		t.Error("empty integer field accepted")
	}
	if _, ok, _ := f.Uint(TagMaxFrame); ok {
		t.Error("absent field found")
	}
	if v, ok, err := f.Float(TagEnergy); !ok || err != nil || v != 0.25 {
		t.Errorf("Float = %v %v %v", v, ok, err)
	}
	if f.Message() != "m" {
		t.Errorf("Message = %q", f.Message())
	}
}

func body(version, kind byte, op uint16, id uint32, fields ...byte) []byte {
	b := []byte{version, kind}
	b = binary.BigEndian.AppendUint16(b, op)
	b = binary.BigEndian.AppendUint32(b, id)
	b = append(b, 0, 0, 0, 0)
	return append(b, fields...)
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name string
		body []byte
		st   Status
		id   uint32
	}{
		{"short", []byte{1, 1, 0}, StatusBadFrame, 0},
		{"version 0", body(0, 1, 0x11, 5), StatusBadVersion, 5},
		{"version 2", body(2, 1, 0x21, 6), StatusBadVersion, 6},
		{"kind 3", body(1, 3, 0x11, 7), StatusBadFrame, 7},
		{"id 0", body(1, 1, 0x11, 0), StatusBadFrame, 0},
		{"truncated tlv header", body(1, 1, 0x11, 8, 0, 1, 0), StatusBadFrame, 8},
		{"truncated tlv value", body(1, 1, 0x11, 9, 0, 1, 0, 4, 1, 2), StatusBadFrame, 9},
		{"duplicate tag", body(1, 1, 0x21, 10, 0, 1, 0, 1, 7, 0, 1, 0, 1, 9), StatusBadFrame, 10},
		{"duplicate high tag", body(1, 1, 0x21, 11, 0x90, 1, 0, 0, 0x90, 1, 0, 0), StatusBadFrame, 11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.body)
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want *FrameError", err)
			}
			if fe.Status != c.st || fe.ID != c.id || fe.Fatal {
				t.Fatalf("got %+v, want status %v id %d", fe, c.st, c.id)
			}
		})
	}
}

func TestReadFrameLimits(t *testing.T) {
	big := NewRequest(OpModExp, 77).Add(TagPayload, make([]byte, 20000))
	_, err := big.Append(nil)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("encoding an oversized frame: %v", err)
	}
	// Build it by hand: the encoder refuses, a hostile peer does not.
	raw := binary.BigEndian.AppendUint32(nil, uint32(HeaderLen+4+20000))
	raw = append(raw, body(1, 1, uint16(OpModExp), 77, 0, 0x36, 0x4E, 0x20)...)
	raw = append(raw, make([]byte, 20000)...)
	next, _ := NewRequest(OpPing, 78).Append(nil)
	stream := bytes.NewReader(append(raw, next...))
	_, err = ReadFrame(stream, MaxFrame)
	var fe *FrameError
	if !errors.As(err, &fe) || fe.Status != StatusTooLarge || fe.ID != 77 || fe.Op != OpModExp || fe.Fatal {
		t.Fatalf("oversized: %v", err)
	}
	f, err := ReadFrame(stream, MaxFrame)
	if err != nil || f.ID != 78 {
		t.Fatalf("frame after the skipped one: %v %v", f, err)
	}
	if _, err := ReadFrame(stream, MaxFrame); err != io.EOF {
		t.Fatalf("at end: %v, want io.EOF", err)
	}

	for _, n := range []uint32{0, HeaderLen - 1, DiscardLimit + 1} {
		_, err := ReadFrame(bytes.NewReader(binary.BigEndian.AppendUint32(nil, n)), MaxFrame)
		if !errors.As(err, &fe) || !fe.Fatal {
			t.Errorf("length %d: %v, want fatal", n, err)
		}
	}
	_, err = ReadFrame(bytes.NewReader(next[:10]), MaxFrame)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v", err)
	}
}

func TestNames(t *testing.T) {
	if OpModExpCRT.String() != "MODEXP_CRT" || OpModExpPair.String() != "MODEXP_PAIR" || !OpModExpPair.Known() || !OpECMul.Known() || Op(0x99).Known() || !strings.HasPrefix(Op(0x99).String(), "OP_") {
		t.Error("op names")
	}
	if StatusShuttingDown.String() != "SHUTTING_DOWN" || Status(99).String() != "STATUS_99" {
		t.Error("status names")
	}
}

func TestCurves(t *testing.T) {
	// Generators, from SEC 2 / FIPS 186-4.
	gens := map[string][2]string{
		"P-256":     {"6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296", "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"},
		"secp256k1": {"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8"},
	}
	for name, g := range gens {
		c := LookupCurve(name)
		x, _ := new(big.Int).SetString(g[0], 16)
		y, _ := new(big.Int).SetString(g[1], 16)
		if !c.IsOnCurve(x, y) {
			t.Errorf("%s: generator not on curve", name)
		}
		if c.IsOnCurve(x, new(big.Int).Add(y, big.NewInt(1))) || c.IsOnCurve(new(big.Int), new(big.Int)) {
			t.Errorf("%s: off-curve point accepted", name)
		}
	}
	for _, n := range []string{"P-224", "P-384", "P-521"} {
		if c := LookupCurve(n); c == nil || c.P.BitLen() > c.FieldBytes*8 {
			t.Errorf("%s missing or mis-sized", n)
		}
	}
	if LookupCurve("P-999") != nil {
		t.Error("unknown curve found")
	}
}

func TestCurvesMatchStdlib(t *testing.T) {
	for _, c := range []elliptic.Curve{elliptic.P224(), elliptic.P256(), elliptic.P384(), elliptic.P521()} {
		p := c.Params()
		w := LookupCurve(p.Name)
		if w == nil || w.P.Cmp(p.P) != 0 || w.B.Cmp(p.B) != 0 || w.FieldBytes != (p.BitSize+7)/8 ||
			new(big.Int).Add(w.A, big.NewInt(3)).Cmp(p.P) != 0 || !w.IsOnCurve(p.Gx, p.Gy) {
			t.Errorf("%s differs from crypto/elliptic", p.Name)
		}
	}
}
