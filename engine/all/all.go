// Package all registers every engine kind the product ships. Programs that
// open engines by name (the module, the CLI, the daemon) import it for its
// side effects.
package all

import (
	_ "github.com/modexp-token/modexp-token/engine/soft" // "soft"
)
