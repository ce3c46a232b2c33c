// Package nodeclient tests the module from Node.js through the two PKCS#11
// libraries Node users have: pkcs11js (a native addon) and graphene-pk11
// (above it). The test installs pinned versions with npm into
// build/nodeclient (node-gyp builds the addon offline against the headers
// the nodejs package ships in /usr/include/node), runs
// testdata/suite.js against a throwaway token of the module and of
// SoftHSMv2, and compares the two. noble_test.go cross-checks the token's
// ML-KEM with @noble/post-quantum (installed into build/noble).
package nodeclient
