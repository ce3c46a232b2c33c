//go:build amd64 && !purego

package aesni

//go:generate go run gen_amd64.go

import "golang.org/x/sys/cpu"

// haveKernel reports whether the kernels of kernel_amd64.s can run here:
// AES-NI and AVX (their VEX encoding, which allows unaligned memory
// operands and leaves no SSE/AVX transition).
var haveKernel = cpu.X86.HasAES && cpu.X86.HasAVX

// cbcEncKernel runs the CBC encryption kernel of k's round count on the
// whole blocks of src (at least one).
func cbcEncKernel(k *Key, iv *[BlockSize]byte, dst, src []byte) {
	n := len(src) / BlockSize
	switch k.rounds {
	case 10:
		cbcEnc10(&k.rk[0], &iv[0], &dst[0], &src[0], n)
	case 12:
		cbcEnc12(&k.rk[0], &iv[0], &dst[0], &src[0], n)
	default:
		cbcEnc14(&k.rk[0], &iv[0], &dst[0], &src[0], n)
	}
}

// cbcMACKernel runs the CBC-MAC kernel of k's round count on the whole
// blocks of src (at least one).
func cbcMACKernel(k *Key, x *[BlockSize]byte, src []byte) {
	n := len(src) / BlockSize
	switch k.rounds {
	case 10:
		cbcMAC10(&k.rk[0], &x[0], &src[0], n)
	case 12:
		cbcMAC12(&k.rk[0], &x[0], &src[0], n)
	default:
		cbcMAC14(&k.rk[0], &x[0], &src[0], n)
	}
}
