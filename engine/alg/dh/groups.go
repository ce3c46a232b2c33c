package dh

// shortValueBits is the private-value length that RFC 7919 §5.2 and
// NIST SP 800-56A (table 26) allow for each group: twice its security
// strength. They are the lengths OpenSSL 3 draws for these groups
// (ossl_ffc_named_group keylength), and so what SoftHSMv2 gives.
var shortValueBits = map[string]int{
	"ffdhe2048": 225,
	"ffdhe3072": 275,
	"ffdhe4096": 325,
}

// ShortValueBits returns the length in bits of a private value of twice
// the group's security strength (RFC 7919 §5.2), or 0 for a group that is
// not one of the RFC 7919 groups.
func (g *Group) ShortValueBits() int { return shortValueBits[g.Name] }
