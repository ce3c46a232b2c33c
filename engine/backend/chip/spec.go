package chip

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Spec is a parsed chip spec: the profile name and its options, in the
// form "profile[,key=value|flag]...", e.g. "orup561,f=30e6,nw=5,vdd=4.5,scaled".
//
// Keys are lower case; values are Go-style numbers ("25e6", "0.5") or
// words. A bare word is a flag ("scaled"); a bare word containing a colon
// is shorthand for a fault option ("zero-above:1024" = "fault=zero-above:1024").
// Each key may appear once. Which keys a profile accepts is listed in the
// package documentation; an unknown key is an error, so typos never pass
// silently.
type Spec struct {
	Profile string
	opts    map[string]string
	order   []string
	used    map[string]bool
}

// ParseSpec parses the part of an engine spec after "chip:".
func ParseSpec(s string) (*Spec, error) {
	if len(s) > 1024 {
		return nil, fmt.Errorf("chip: spec longer than 1024 bytes")
	}
	parts := strings.Split(s, ",")
	sp := &Spec{Profile: strings.TrimSpace(parts[0]), opts: map[string]string{}, used: map[string]bool{}}
	if sp.Profile == "" {
		return nil, fmt.Errorf("chip: empty profile in spec %q (want one of %s)", s, strings.Join(Profiles(), ", "))
	}
	if !validWord(sp.Profile) {
		return nil, fmt.Errorf("chip: bad profile name %q", sp.Profile)
	}
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("chip: empty option in spec %q", s)
		}
		k, v, hasEq := strings.Cut(p, "=")
		if !hasEq {
			if strings.Contains(p, ":") {
				k, v = "fault", p
			} else {
				v = "true"
			}
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if !validWord(k) {
			return nil, fmt.Errorf("chip: bad option name %q in spec %q", k, s)
		}
		if v == "" {
			return nil, fmt.Errorf("chip: option %q has an empty value", k)
		}
		if _, dup := sp.opts[k]; dup {
			return nil, fmt.Errorf("chip: option %q given twice", k)
		}
		sp.opts[k] = v
		sp.order = append(sp.order, k)
	}
	return sp, nil
}

func validWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// String returns the canonical form of the spec (options in given order).
func (s *Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Profile)
	for _, k := range s.order {
		b.WriteByte(',')
		if s.opts[k] == "true" {
			b.WriteString(k)
			continue
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(s.opts[k])
	}
	return b.String()
}

// Has reports whether option k was given.
func (s *Spec) Has(k string) bool { _, ok := s.opts[k]; return ok }

func (s *Spec) str(k, def string) string {
	s.used[k] = true
	if v, ok := s.opts[k]; ok {
		return v
	}
	return def
}

func (s *Spec) float(k string, def, lo, hi float64) (float64, error) {
	s.used[k] = true
	v, ok := s.opts[k]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("chip: option %s=%q: not a number", k, v)
	}
	if f < lo || f > hi {
		return 0, fmt.Errorf("chip: option %s=%g out of range [%g, %g]", k, f, lo, hi)
	}
	return f, nil
}

func (s *Spec) int(k string, def, lo, hi int) (int, error) {
	s.used[k] = true
	v, ok := s.opts[k]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64) // accept "561" and "5.61e2"
	if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("chip: option %s=%q: not an integer", k, v)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, fmt.Errorf("chip: option %s=%s out of range [%d, %d]", k, v, lo, hi)
	}
	return int(f), nil
}

func (s *Spec) bool(k string) (bool, error) {
	s.used[k] = true
	v, ok := s.opts[k]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("chip: option %s=%q: not a boolean", k, v)
	}
	return b, nil
}

// checkUsed rejects options the profile did not read.
func (s *Spec) checkUsed() error {
	for _, k := range s.order {
		if !s.used[k] {
			return fmt.Errorf("chip: profile %s has no option %q", s.Profile, k)
		}
	}
	return nil
}
