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

// SeedRandom is C_SeedRandom: the token's randomness is the operating
// system's (crypto/rand), which takes no seed, so the call answers
// CKR_RANDOM_SEED_NOT_SUPPORTED rather than pretend to mix the seed in.
func (m *Module) SeedRandom(sh uint64, seed []byte) error {
	if _, err := m.session(sh); err != nil {
		return err
	}
	return ck.Errorf(ck.CKR_RANDOM_SEED_NOT_SUPPORTED, "crypto/rand takes no seed")
}
