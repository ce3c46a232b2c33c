package e2e

import "fmt"

// LibP11Engine is libp11's OpenSSL engine (Debian libengine-pkcs11-openssl,
// amd64 layout).
const LibP11Engine = "/usr/lib/x86_64-linux-gnu/engines-3/pkcs11.so"

// OpenSSLEngineConf is an openssl.cnf (for OPENSSL_CONF) that loads
// libp11's engine on the PKCS#11 module at module.
func OpenSSLEngineConf(module string) string {
	return fmt.Sprintf(`openssl_conf = openssl_init

[openssl_init]
engines = engine_section

[engine_section]
pkcs11 = pkcs11_section

[pkcs11_section]
engine_id = pkcs11
dynamic_path = %s
MODULE_PATH = %s
init = 0
`, LibP11Engine, module)
}
