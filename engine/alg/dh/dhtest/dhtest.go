// Package dhtest hands the RFC 7919 groups to the tests of the packages
// that use engine/alg/dh (the token, the guard, test/): the token itself only
// recognises them by their prime (dh.LookupGroup).
package dhtest

import (
	"fmt"
	"math/big"

	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/alg/dh/internal/rfc7919"
)

// KnownGroups returns the RFC 7919 groups, ffdhe2048 first, as
// dh.LookupGroup returns them (name, p, g = 2 and q; fresh copies).
func KnownGroups() []dh.Group {
	var out []dh.Group
	for _, kg := range rfc7919.Groups {
		p, ok := new(big.Int).SetString(kg.P, 16)
		if !ok {
			panic("dhtest: bad group constant " + kg.Name)
		}
		g, err := dh.LookupGroup(p, big.NewInt(2))
		if err != nil || g.Name != kg.Name || g.Q == nil {
			panic(fmt.Sprintf("dhtest: %s not recognised by dh.LookupGroup: %v", kg.Name, err))
		}
		out = append(out, *g)
	}
	return out
}
