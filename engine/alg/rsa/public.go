package rsa

import (
	"fmt"
	"math/big"
	"sync"

	"github.com/modexp-token/modexp-token/engine/arith/mont"
)

// Public returns m^e mod n (big-endian, modulus length) for the public key
// (n, e). Variable time: only public data.
func Public(n *big.Int, e int, m []byte) ([]byte, error) {
	if n == nil || n.Sign() <= 0 || n.BitLen() > MaxPublicBits || e < 1 {
		return nil, fmt.Errorf("rsa: public: %w", ErrInvalidKey)
	}
	nm, err := publicModulus(n.Bytes())
	if err != nil {
		return nil, err
	}
	x := make([]uint64, nm.Limbs())
	if mont.SetBytes(x, m)&nm.Less(x) != 1 {
		return nil, fmt.Errorf("rsa: public: %w", ErrInputRange)
	}
	nm.ExpVarTime(x, x, big.NewInt(int64(e)).Bytes())
	out := make([]byte, nm.Size())
	mont.FillBytes(out, x)
	return out, nil
}

// publicModuli caches the Montgomery set-up of the moduli that Public saw
// last (public data: n only), so that verifying many signatures of one key
// does not recompute R² mod n each time (for RSA-2048 that set-up costs
// about as much as the exponentiation by 65537 itself). At most
// maxPublicModuli entries; when full, it is emptied.
var publicModuli struct {
	sync.Mutex
	m map[string]*mont.Modulus
}

const maxPublicModuli = 64

// publicModulus returns the prepared modulus n (big-endian, no leading
// zeros), from the cache or made and cached.
func publicModulus(nb []byte) (*mont.Modulus, error) {
	publicModuli.Lock()
	nm := publicModuli.m[string(nb)]
	publicModuli.Unlock()
	if nm != nil {
		return nm, nil
	}
	nm, err := mont.NewModulus(nb)
	if err != nil {
		return nil, fmt.Errorf("rsa: public: modulus: %w", ErrInvalidKey)
	}
	publicModuli.Lock()
	if publicModuli.m == nil || len(publicModuli.m) >= maxPublicModuli {
		publicModuli.m = make(map[string]*mont.Modulus)
	}
	publicModuli.m[string(nb)] = nm
	publicModuli.Unlock()
	return nm, nil
}
