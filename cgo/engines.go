package main

// Every engine kind the product ships ("soft", "chip", "device") registers
// itself with package engine from its init function; engine/backend/all imports
// them all.
import _ "github.com/modexp-token/modexp-token/engine/backend/all"
