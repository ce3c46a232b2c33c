package ec

import "fmt"

// Marshal returns the uncompressed SEC 1 encoding 0x04‖X‖Y of a point
// (coordinates as returned by this package, ByteLen bytes each). It does
// not check the point.
func (c *Curve) Marshal(x, y []byte) []byte {
	out := make([]byte, 1+2*c.size)
	out[0] = 4
	copy(out[1+c.size-len(x):1+c.size], x)
	copy(out[1+2*c.size-len(y):], y)
	return out
}

// MarshalCompressed returns the compressed SEC 1 encoding (0x02 or 0x03
// by y's parity)‖X of a point.
func (c *Curve) MarshalCompressed(x, y []byte) []byte {
	out := make([]byte, 1+c.size)
	out[0] = 2
	if len(y) > 0 && y[len(y)-1]&1 == 1 {
		out[0] = 3
	}
	copy(out[1+c.size-len(x):], x)
	return out
}

// Unmarshal decodes a SEC 1 point, uncompressed (0x04‖X‖Y) or compressed
// (0x02/0x03‖X), and checks it: coordinates < p, on the curve. The point
// at infinity (0x00) is ErrInvalidPoint.
func (c *Curve) Unmarshal(data []byte) (x, y []byte, err error) {
	switch {
	case len(data) == 1+2*c.size && data[0] == 4:
		x = append([]byte(nil), data[1:1+c.size]...)
		y = append([]byte(nil), data[1+c.size:]...)
		if !c.IsOnCurve(x, y) {
			return nil, nil, fmt.Errorf("%w: %s point not on the curve or out of range", ErrInvalidPoint, c.name)
		}
		return x, y, nil
	case len(data) == 1+c.size && (data[0] == 2 || data[0] == 3):
		x = append([]byte(nil), data[1:]...)
		y, err = c.impl.decompress(x, data[0] == 3)
		if err != nil {
			return nil, nil, fmt.Errorf("ec: %s compressed point: %w", c.name, err)
		}
		return x, y, nil
	default:
		return nil, nil, fmt.Errorf("%w: %d-byte %s encoding (want 0x04‖X‖Y of %d bytes or 0x02/0x03‖X of %d)",
			ErrInvalidPoint, len(data), c.name, 1+2*c.size, 1+c.size)
	}
}

// MarshalECPoint returns the DER OCTET STRING wrapping the uncompressed
// point: the value of PKCS#11's CKA_EC_POINT.
func (c *Curve) MarshalECPoint(x, y []byte) []byte {
	return derOctetString(c.Marshal(x, y))
}

// UnmarshalECPoint decodes a CKA_EC_POINT value: a DER OCTET STRING
// wrapping a SEC 1 point, or (as some clients send) the bare point, and
// checks the point as Unmarshal does.
func (c *Curve) UnmarshalECPoint(data []byte) (x, y []byte, err error) {
	if inner, ok := parseDEROctetString(data); ok {
		if x, y, err = c.Unmarshal(inner); err == nil {
			return x, y, nil
		}
	}
	// A bare uncompressed point also starts with 0x04: try it as such.
	x, y, err2 := c.Unmarshal(data)
	if err2 == nil {
		return x, y, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ec: CKA_EC_POINT: %w", err)
	}
	return nil, nil, fmt.Errorf("ec: CKA_EC_POINT: %w", err2)
}

// derOctetString wraps b in a DER OCTET STRING.
func derOctetString(b []byte) []byte {
	n := len(b)
	var hdr []byte
	switch {
	case n < 0x80:
		hdr = []byte{0x04, byte(n)}
	case n < 0x100:
		hdr = []byte{0x04, 0x81, byte(n)}
	default:
		hdr = []byte{0x04, 0x82, byte(n >> 8), byte(n)}
	}
	return append(hdr, b...)
}

// parseDEROctetString returns the contents of the DER OCTET STRING that is
// exactly data (minimal length encoding, nothing after it).
func parseDEROctetString(data []byte) ([]byte, bool) {
	if len(data) < 2 || data[0] != 0x04 {
		return nil, false
	}
	n, rest := int(data[1]), data[2:]
	switch {
	case n < 0x80:
	case n == 0x81:
		if len(rest) < 1 || rest[0] < 0x80 {
			return nil, false
		}
		n, rest = int(rest[0]), rest[1:]
	case n == 0x82:
		if len(rest) < 2 {
			return nil, false
		}
		n, rest = int(rest[0])<<8|int(rest[1]), rest[2:]
		if n < 0x100 {
			return nil, false
		}
	default:
		return nil, false
	}
	if n != len(rest) {
		return nil, false
	}
	return rest, true
}
