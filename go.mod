module github.com/modexp-token/modexp-token

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/ThalesGroup/crypto11 v1.6.2
	github.com/miekg/pkcs11 v1.1.2
	go.etcd.io/bbolt v1.5.0
	golang.org/x/crypto v0.59.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require (
	github.com/pkg/errors v0.9.1 // indirect
	github.com/thales-e-security/pool v0.0.2 // indirect
)
