package mech

// The domain parameter generation mechanisms: CKM_DSA_PARAMETER_GEN and
// CKM_DH_PKCS_PARAMETER_GEN (C_GenerateKey of a CKO_DOMAIN_PARAMETERS
// object, token/domain.go).

import (
	"context"
	"slices"
	"time"

	"github.com/modexp-token/modexp-token/engine/alg/dh"
	"github.com/modexp-token/modexp-token/engine/alg/dsa"
	"github.com/modexp-token/modexp-token/token/attr"
	"github.com/modexp-token/modexp-token/token/ck"
)

// paramGenTimeout bounds a parameter generation.
const paramGenTimeout = 10 * time.Minute

// paramGenMechanisms are CKM_DSA_PARAMETER_GEN and
// CKM_DH_PKCS_PARAMETER_GEN.
func paramGenMechanisms() []Mechanism {
	return []Mechanism{
		&dsaParamGen{MechBase{Type: ck.CKM_DSA_PARAMETER_GEN, KeyTypes: []uint64{ck.CKK_DSA}, MinBits: dsaMinBits, MaxBits: dsaMaxBits}},
		&dhParamGen{MechBase{Type: ck.CKM_DH_PKCS_PARAMETER_GEN, KeyTypes: []uint64{ck.CKK_DH}, MinBits: dhMinBits, MaxBits: dhMaxBits}},
	}
}

// dsaParamGen is CKM_DSA_PARAMETER_GEN.
type dsaParamGen struct{ MechBase }

// dhParamGen is CKM_DH_PKCS_PARAMETER_GEN.
type dhParamGen struct{ MechBase }

// templateBits reads a required CKA_*_BITS attribute of a generation
// template.
func templateBits(tmpl attr.Map, t uint64) (int, bool) {
	v, ok := tmpl[t]
	if !ok {
		return 0, false
	}
	n, _ := ck.ParseULong(v)
	return int(min(n, 1<<20)), true
}

// GenerateParams makes DSA domain parameters of the template's sizes.
func (m *dsaParamGen) GenerateParams(s Slot, tmpl attr.Map) (attr.Map, error) {
	l, ok := templateBits(tmpl, ck.CKA_PRIME_BITS)
	if !ok {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_PRIME_BITS missing")
	}
	n, ok := templateBits(tmpl, ck.CKA_SUB_PRIME_BITS)
	if !ok {
		n = map[int]int{1024: 160, 2048: 224, 3072: 256}[l]
	}
	if !slices.Contains(dsa.Sizes, dsa.Size{L: l, N: n}) {
		return nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "DSA sizes (L, N) = (%d, %d): want (1024, 160), (2048, 224), (2048, 256) or (3072, 256)", l, n)
	}
	ctx, cancel := context.WithTimeout(bg, paramGenTimeout)
	defer cancel()
	start := time.Now()
	p, err := dsa.GenerateParameters(ctx, nil, dsa.Size{L: l, N: n})
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "DSA parameter generation: %v", err)
	}
	s.Log().Info("DSA domain parameters generated", "L", l, "N", n, "duration", time.Since(start))
	return attr.Map{ck.CKA_PRIME: p.P.Bytes(), ck.CKA_SUBPRIME: p.Q.Bytes(), ck.CKA_BASE: p.G.Bytes()}, nil
}

// GenerateParams makes a DH group of the template's size.
func (m *dhParamGen) GenerateParams(s Slot, tmpl attr.Map) (attr.Map, error) {
	bits, ok := templateBits(tmpl, ck.CKA_PRIME_BITS)
	if !ok {
		return nil, ck.Errorf(ck.CKR_TEMPLATE_INCOMPLETE, "CKA_PRIME_BITS missing")
	}
	if bits < dh.MinBits || bits > dh.MaxBits {
		return nil, ck.Errorf(ck.CKR_ATTRIBUTE_VALUE_INVALID, "DH prime of %d bits (want %d to %d)", bits, dh.MinBits, dh.MaxBits)
	}
	ctx, cancel := context.WithTimeout(bg, paramGenTimeout)
	defer cancel()
	start := time.Now()
	g, err := dh.GenerateGroup(ctx, nil, bits)
	if err != nil {
		return nil, ck.Errorf(ck.CKR_FUNCTION_FAILED, "DH parameter generation: %v", err)
	}
	s.Log().Info("DH domain parameters generated", "bits", bits, "duration", time.Since(start))
	return attr.Map{ck.CKA_PRIME: g.P.Bytes(), ck.CKA_BASE: g.G.Bytes()}, nil
}
