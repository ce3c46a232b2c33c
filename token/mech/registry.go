package mech

// The registry: every mechanism the token offers, one line per family
// (mech_*.go) or per mechanism. NewRegistry (mechanism.go) derives each
// mechanism's CK_MECHANISM_INFO flags from the operations its type
// implements, and panics at load on a mechanism registered twice, one
// that serves no operation or takes no key type, or a capability flag
// that claims an operation.

import (
	"maps"
	"slices"

	"github.com/modexp-token/modexp-token/token/ck"
)

// Order is the registry's CKM_ values in ascending order, sorted
// once: C_GetMechanismList walks it instead of sorting on every call.
var Order = slices.Sorted(maps.Keys(Registry))

// Registry is the registry by CKM_ value.
var Registry = NewRegistry(
	rsaMechanisms(),
	dsaMechanisms(),
	dhMechanisms(),
	paramGenMechanisms(),
	ecdsaMechanisms(),
	ecdhMechanisms(),
	eddsaMechanisms(),
	mldsaMechanisms(),
	slhdsaMechanisms(),
	digestMechanisms(),
	hmacMechanisms(),
	secretKeyGenMechanisms(),
	aesBlockMechanisms(),
	desMechanisms(),
	[]Mechanism{&aesCTR{MechBase: aesBase(ck.CKM_AES_CTR)}},
	[]Mechanism{&AESGCM{MechBase: aesBase(ck.CKM_AES_GCM)}},
	cmacMechanisms(),
	aesMACMechanisms(),
	aesKWMechanisms(),
	aesEncryptDataMechanisms(),
	hkdfMechanisms(),
	mlkemMechanisms(),
	xdhMechanisms(),
)
