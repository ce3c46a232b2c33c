package token

import (
	"github.com/modexp-token/modexp-token/token/attr"
)

// Key material in memory, as far as Go allows (see the package doc,
// "Key material in memory").

// wipeSecrets zeroes in place the secret values (fSecret attributes:
// CKA_PRIVATE_EXPONENT, the primes and CRT values, an EC key's CKA_VALUE)
// of every snapshot in the cache, and drops the prepared engine keys.
// Snapshots share value slices with earlier snapshots of the same object,
// so this is only for a cache nothing else can reach any more: the
// module's close, after every session (and operation) has ended. Caller
// holds s.mu.
func (s *slot) wipeSecretsLocked() {
	for _, o := range s.objects {
		sch, _ := objectSchema(o.attrs)
		for t, v := range o.attrs {
			if sch[t].Has(attr.Secret) {
				clear(v)
			}
		}
		o.dropPrepared()
	}
}
