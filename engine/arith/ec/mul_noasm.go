//go:build !amd64 || purego

package ec

// haveADX is false without the assembly products (other architectures,
// or the purego build tag): the pure-Go products are used.
const haveADX = false

func montMul4ADX(z, x, y, m *[4]uint64, m0inv uint64) { panic("ec: no assembly products") }

func montMulP256ADX(z, x, y, m *[4]uint64) { panic("ec: no assembly products") }

func montSqr4ADX(z, x, m *[4]uint64, m0inv uint64) { panic("ec: no assembly products") }

func montSqrP256ADX(z, x, m *[4]uint64) { panic("ec: no assembly products") }

func mul9ADX(z *[18]uint64, x, y *[9]uint64) { panic("ec: no assembly products") }

func montMulP521ADX(z, x, y *[9]uint64) { panic("ec: no assembly products") }

func montMul9ADX(z, x, y, m *[9]uint64, m0inv uint64) { panic("ec: no assembly products") }

func montSqrP521ADX(z, x *[9]uint64) { panic("ec: no assembly products") }
