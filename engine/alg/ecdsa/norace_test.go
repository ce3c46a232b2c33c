//go:build !race

package ecdsa

const raceBuild = false
