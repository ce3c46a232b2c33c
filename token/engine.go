package token

// The slot's engines: engine/guard holds the policy (primary and fallback,
// self-test at open, known-answer tests, fault accounting, routes by curve
// and size); the token opens the engine its configuration names and maps
// the guard's errors to CK_RVs (slot.engineErr).

import (
	"fmt"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/alg/ecdsa"
	"github.com/modexp-token/modexp-token/engine/guard"
	"github.com/modexp-token/modexp-token/token/config"
)

// EngineStatus is a slot's engine health, for the CLI, logs and tests.
type EngineStatus struct {
	guard.Status
	Fallback string // the slot's fallback policy
}

// EngineStatus reports the health of a slot's engine.
func (m *Module) EngineStatus(slotID uint64) (EngineStatus, error) {
	s, err := m.slot(slotID)
	if err != nil {
		return EngineStatus{}, err
	}
	return EngineStatus{Status: s.guard.Status(), Fallback: s.cfg.Fallback}, nil
}

// openEngine opens the slot's engine (a pool spec comes from `engines`)
// and its guard: exponent blinding, the software engine behind it by
// policy, fault accounting. A slot on the software engine shares the
// module's instance.
func (s *slot) openEngine() error {
	sc := s.cfg
	soft, err := s.m.softEngine()
	if err != nil {
		return fmt.Errorf("token: slot 0x%x: software engine: %w", sc.ID, err)
	}
	eng := soft
	if sc.Engine != config.DefaultEngine {
		if eng, err = engine.Open(sc.Engine); err != nil {
			return fmt.Errorf("token: slot 0x%x: %w", sc.ID, err)
		}
	}
	s.guard = guard.New(eng, guard.Options{
		Software:         soft,
		Fallback:         sc.Fallback == config.FallbackSoft,
		ExponentBlinding: sc.Blinding(),
		BlindingDefault:  sc.ExponentBlinding == nil,
		ECDSACheck:       ecdsaCheck(sc.ECDSACheck),
		Log:              s.log,
	})
	return nil
}

// engineName is the slot's engine, for messages and logs.
func (s *slot) engineName() string { return s.guard.Engine().Info().Name }

// ecdsaCheck is the guard's check of the configuration's ecdsa_check.
func ecdsaCheck(name string) ecdsa.Check {
	if name == config.ECDSACheckVerify {
		return ecdsa.CheckVerify
	}
	return ecdsa.CheckDefault
}
