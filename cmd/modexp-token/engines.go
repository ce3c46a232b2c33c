package main

// The engine kinds the CLI can open (a slot's engine, bench --engine):
// engine.Open finds them in the registry their packages fill in init.
import _ "github.com/modexp-token/modexp-token/engine/backend/all"
