// Package clients holds the end-to-end tests that drive the built PKCS#11
// module, build/libmodexp-pkcs11.so, through the real client programs a
// user runs: OpenSSL with libp11's engine, p11-kit and GnuTLS (p11tool,
// certtool), OpenSSH (ssh-keygen, ssh-agent, ssh-add), Go through crypto11
// and p11-kit's remoting, and OpenSC's pkcs11-tool. docs/USAGE.md gives the
// same recipes for people; these tests keep them honest. What none of
// those can drive (mechanism parameters pkcs11-tool 0.23 has no option for,
// DSA and DH key and parameter generation, DH derivation: the mechanisms
// p11-kit's RPC does not carry) TestPKCS11Tool drives from a child of the
// test binary that loads the module in process with miekg/pkcs11
// (pkcs11tool_inprocess_test.go). The Go libraries' own test suites run
// unmodified from the module cache: crypto11's (crypto11suite_test.go) and
// miekg/pkcs11's (miekgsuite_test.go, beside SoftHSMv2: ours must pass
// every test SoftHSMv2 passes but the identity checks of miekgAccepted).
//
// The package has no code of its own: everything is in its _test.go files.
//
// # Running
//
//	make build && go test ./test/clients
//
// Each test makes its own token in a t.TempDir(), with HOME,
// XDG_DATA_HOME, XDG_CONFIG_HOME and MODEXP_TOKEN_CONF pointing there, so
// no test reads or writes a real token, ~/.config or /etc. Client programs
// run with a minimal environment built by the test (PATH, the variables
// above, LC_ALL=C), never the caller's SSH_AUTH_SOCK, OPENSSL_CONF or
// GNUTLS_PIN.
//
// Environment of the test run:
//
//	MODEXP_CLIENTS_MODULE  "modexp" (default): the module built in build/;
//	                       "softhsm": SoftHSMv2 (/usr/lib/softhsm/libsofthsm2.so),
//	                       to check the test logic against a known-good module.
//	MODEXP_CLIENTS_LIB     path of the module to test instead of
//	                       build/libmodexp-pkcs11.so (modexp only).
//	MODEXP_TOKEN_ENGINE    passed through to the module: runs the whole suite
//	                       on another engine, e.g. "chip:pukcc".
//
// A missing client program or a module that has not been built is a test
// failure, not a skip: `make deps` installs the programs, `make build` the
// module.
package clients
