package token

// Randomness (C_GenerateRandom, C_SeedRandom).

import (
	"crypto/rand"
	"fmt"

	"github.com/modexp-token/modexp-token/token/ck"
)

// maxRandom bounds one C_GenerateRandom call.
const maxRandom = 1 << 20

// GenerateRandom is C_GenerateRandom: n bytes from crypto/rand.
func (m *Module) GenerateRandom(sh uint64, n int) ([]byte, error) {
	if _, err := m.session(sh); err != nil {
		return nil, err
	}
	if n < 0 || n > maxRandom {
		return nil, ck.Errorf(ck.CKR_ARGUMENTS_BAD, "%d random bytes", n)
	}
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("token: random: %w: %w", ck.CKR_FUNCTION_FAILED, err)
	}
	return b, nil
}

// SeedRandom is C_SeedRandom. The token's randomness is the operating
// system's (crypto/rand), which takes no seed: the call accepts the seed
// material (clients such as PyKCS11's and pkcs11js's test suites seed
// before they generate and stop at an error) and mixes it into nothing. A
// seed can therefore neither weaken nor predict what the token generates;
// it is not kept, not logged, and not used.
func (m *Module) SeedRandom(sh uint64, seed []byte) error {
	_, err := m.session(sh)
	return err
}
