//go:build !amd64 || purego

package aesni

// haveKernel: no kernel in this build; every Key runs over crypto/aes.
const haveKernel = false

// The kernels' entry points are never reached without a kernel (NewKey
// gives every Key a crypto/aes block): they exist for the build.

func cbcEncKernel(*Key, *[BlockSize]byte, []byte, []byte) { panic("aesni: no kernel in this build") }
func cbcMACKernel(*Key, *[BlockSize]byte, []byte)         { panic("aesni: no kernel in this build") }
func subWord(uint32) uint32                               { panic("aesni: no kernel in this build") }
