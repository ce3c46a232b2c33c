//go:build !race

package ec

const raceBuild = false
