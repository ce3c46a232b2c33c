//go:build !race

package token

const raceBuild = false
