// Package all registers every engine kind the product ships: "soft",
// "chip" and "device". Programs that open engines by name (the module, the
// CLI, the daemon) import it for its side effects.
package all

import (
	_ "github.com/modexp-token/modexp-token/engine/backend/chip"   // "chip:orup561", "chip:pukcc", "chip:cryptech"
	_ "github.com/modexp-token/modexp-token/engine/backend/device" // "device:unix:/path", "device:tcp:host:port"
	_ "github.com/modexp-token/modexp-token/engine/backend/soft"   // "soft"
)
