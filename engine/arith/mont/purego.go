//go:build purego

package mont

// PureGo reports whether the package was built with the purego tag, which
// forces the pure-Go limb kernel.
const PureGo = true
