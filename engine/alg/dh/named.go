package dh

import (
	"fmt"
	"math/big"
	"strings"
)

// GroupByName returns the RFC 7919 group called name ("ffdhe2048",
// "ffdhe3072", ..., case-insensitively), with its q.
func GroupByName(name string) (*Group, error) {
	var names []string
	for _, kg := range knownGroups() {
		if strings.EqualFold(kg.Name, name) {
			return &Group{Name: kg.Name, P: new(big.Int).Set(kg.P), G: new(big.Int).Set(kg.G), Q: new(big.Int).Set(kg.Q)}, nil
		}
		names = append(names, kg.Name)
	}
	return nil, fmt.Errorf("%w: no group %q (want one of %s)", ErrInvalidParameters, name, strings.Join(names, ", "))
}

// GroupNames returns the names of the RFC 7919 groups GroupByName knows.
func GroupNames() []string {
	var names []string
	for _, kg := range knownGroups() {
		names = append(names, kg.Name)
	}
	return names
}
