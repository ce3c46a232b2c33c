package token

// Domain parameters (CKO_DOMAIN_PARAMETERS) of DSA and DH keys, and their
// generation: C_GenerateKey with CKM_DSA_PARAMETER_GEN or
// CKM_DH_PKCS_PARAMETER_GEN (the mechanisms: mech/paramgen.go).
//
//   - CKK_DSA: CKA_PRIME, CKA_SUBPRIME, CKA_BASE (checked as for keys) and
//     CKA_PRIME_BITS. CKM_DSA_PARAMETER_GEN takes CKA_PRIME_BITS (1024,
//     2048 or 3072; CKR_TEMPLATE_INCOMPLETE when missing) and, optionally,
//     CKA_SUB_PRIME_BITS (160, 224 or 256, a FIPS 186-4 pair with L;
//     default 160, 224 and 256 for the three L, as SoftHSMv2 chooses).
//   - CKK_DH: CKA_PRIME, CKA_BASE, CKA_PRIME_BITS. CKM_DH_PKCS_PARAMETER_GEN
//     takes CKA_PRIME_BITS (1024 to 8192) and makes a safe prime with base
//     2 or 4 of order q = (p−1)/2 (engine/alg/dh.GenerateGroup): keys on it get
//     the subgroup checks of the RFC 7919 groups. It takes seconds at 1024
//     bits and up to minutes at 2048 and more (safe primes are rare).
//
// The primes are public: generation runs in math/big in software, not on
// the engine. A generated object has CKA_LOCAL true; CKA_PRIME, CKA_SUBPRIME
// and CKA_BASE in a generation template are CKR_ATTRIBUTE_READ_ONLY. The
// public values of a key pair are then generated from the object's
// attributes (C_GetAttributeValue, then C_GenerateKeyPair).

import (
	"github.com/modexp-token/modexp-token/token/ck"
	"github.com/modexp-token/modexp-token/token/mech"
)

// generateDomainParams is C_GenerateKey with a parameter generation
// mechanism: a new CKO_DOMAIN_PARAMETERS object.
func (ss *session) generateDomainParams(mc mech.ParamGenerator, cm *Mechanism, tmpl []Attribute) (uint64, error) {
	s := ss.slot
	t, err := ss.generateTemplate(mc, cm, tmpl, ck.CKO_DOMAIN_PARAMETERS)
	if err != nil {
		return 0, err
	}
	if err := ss.checkTemplateWritable(t, false); err != nil {
		return 0, err
	}
	vals, err := mc.GenerateParams(s, t)
	if err != nil {
		return 0, err
	}
	_, login := s.currentEpoch()
	a, sch, err := buildObjectFrom(t, vals, keyOrigin{mode: modeGenerate, mech: cm.Type}, login)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ss.checkWritable(a, s.login); err != nil {
		return 0, err
	}
	o, err := s.storeLocked(ss, 0, nil, a, sch)
	if err != nil {
		return 0, err
	}
	s.log.Info("domain parameters generated", "mechanism", ck.Name("CKM_", cm.Type), "handle", o.handle)
	return o.handle, nil
}
