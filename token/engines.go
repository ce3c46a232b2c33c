package token

// The engine kinds the module can open: engine.Open finds them in the
// registry their packages fill in init.
import _ "github.com/modexp-token/modexp-token/engine/all"
