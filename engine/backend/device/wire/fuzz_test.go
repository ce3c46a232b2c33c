package wire

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode: Decode never panics, and whatever it accepts re-encodes to
// exactly the same bytes (the encoding is canonical).
func FuzzDecode(f *testing.F) {
	for _, fr := range sampleFrames() {
		b, _ := fr.Append(nil)
		f.Add(b[4:])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fr, err := Decode(body)
		if err != nil {
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		b, err := fr.Append(nil)
		if err != nil {
			if len(body) > MaxFrame {
				return
			}
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(b[4:], body) {
			t.Fatalf("re-encoding differs:\n%x\n%x", b[4:], body)
		}
	})
}

// FuzzReadFrame: reading a stream of frames never panics, never loops and
// keeps going after recoverable frame errors.
func FuzzReadFrame(f *testing.F) {
	var all []byte
	for _, fr := range sampleFrames() {
		b, _ := fr.Append(nil)
		f.Add(b)
		all = append(all, b...)
	}
	f.Add(all)
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := bytes.NewReader(stream)
		for i := 0; i < 1000; i++ {
			before := r.Len()
			_, err := ReadFrame(r, 512)
			if err != nil {
				var fe *FrameError
				if !errors.As(err, &fe) || fe.Fatal {
					return
				}
			}
			if r.Len() >= before {
				t.Fatal("ReadFrame consumed nothing")
			}
		}
	})
}
