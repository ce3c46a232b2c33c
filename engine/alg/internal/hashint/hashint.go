// Package hashint holds the conversion of RFC 6979 that the deterministic
// nonce generators of engine/alg/dsa and engine/alg/ecdsa share: bits2int (§2.3.2),
// which is also how FIPS 186-5 turns a hash into the integer z.
package hashint

// AppendBits2Int appends to dst the leftmost bits bits of b as a
// byteLen-byte big-endian integer (byteLen = ⌈bits/8⌉): b is cut to byteLen
// bytes, left-padded with zeros when shorter, and shifted right by the
// bits beyond bits. Constant time in b's value; dst's spare capacity is
// used when it has byteLen bytes of it.
func AppendBits2Int(dst, b []byte, byteLen, bits int) []byte {
	if len(b) > byteLen {
		b = b[:byteLen]
	}
	start := len(dst)
	for range byteLen - len(b) {
		dst = append(dst, 0)
	}
	dst = append(dst, b...)
	if excess := 8*len(b) - bits; excess > 0 {
		out := dst[start:]
		for i := len(out) - 1; i >= 0; i-- {
			var hi byte
			if i > 0 {
				hi = out[i-1] << (8 - excess)
			}
			out[i] = out[i]>>excess | hi
		}
	}
	return dst
}
