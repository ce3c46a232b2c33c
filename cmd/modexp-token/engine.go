package main

import (
	"errors"
	"io"
)

// runEngine runs the engine subcommands.
func runEngine(args []string, stdout io.Writer) error {
	_, _, err := splitSub(args, "table")
	if err != nil {
		return err
	}
	return errors.New("the chip reproduction table is not built yet")
}
