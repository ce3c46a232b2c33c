package mont

// BlindExponent returns e + r·order as big-endian bytes of fixed length
// (one limb more than order, whatever the values): the exponent blinding
// of engine/alg/dsa and engine/alg/dh, where order is a multiple of the base's
// order (q, or p−1). len(e) == len(order). Constant time.
func BlindExponent(e, order []uint64, r uint64) []byte {
	z := make([]uint64, len(order)+1)
	AddMulWord(z, e, order, r)
	b := make([]byte, 8*len(z))
	FillBytes(b, z)
	clear(z)
	return b
}
