# ModExp Token build.
#
#   make build   build/libmodexp-pkcs11.so (PKCS#11 module), build/libmodexp-pkcs11-fleet.so (the
#                module with the etcd keystore, docs/FLEET.md), build/modexp-token (CLI), build/modexpd (device daemon)
#   make test    gofmt check, go vet, make deadcode, race tests of the pure-Go packages, the
#                cgo package tests, the integration tests in test/
#   make demo    a token in build/demo on the software engine, a key, a
#                signature by pkcs11-tool verified by openssl
#   make demo-fleet  a local three-member etcd cluster, a key made on one host and
#                used by pkcs11-tool on another (docs/FLEET.md)
#   make bench   ops/s of ours vs SoftHSMv2 (test/bench/run.sh), about 5 minutes
#   make bench-fleet  sign ops/s on an etcd token vs a file token (test/bench/fleet.sh), about a minute
#   make bench-nginx  TLS handshakes/s of nginx on ours vs SoftHSMv2 (test/bench/nginx.sh), a few minutes
#   make deadcode  functions no program reaches (.ci/deadcode.allow lists the accepted ones)
#   make deps    the Debian packages the tests and the demo need
#   make install / make uninstall   PREFIX (default /usr/local), DESTDIR: the
#                module in $(PREFIX)/lib/MULTIARCH/pkcs11/, its p11-kit registration, the CLI
#                and the daemon, man pages, bash/zsh/fish completion, the systemd unit
#   make deb     build/modexp-token_VERSION_ARCH.deb (PREFIX=/usr), dpkg-deb
#   make clean

SHELL := /bin/bash
GO ?= go
BUILD := build
LIB := $(BUILD)/libmodexp-pkcs11.so
# The module with the etcd keystore backend (build tag modexp_etcd): kept
# out of LIB, whose users of token files must not pay for the etcd client.
LIB_FLEET := $(BUILD)/libmodexp-pkcs11-fleet.so
ETCD_TAGS := -tags modexp_etcd
CLI := $(BUILD)/modexp-token

# Only the C_* entry points are exported (see cgo/exports.map).
LIB_LDFLAGS := -extldflags=-Wl,--version-script=$(CURDIR)/cgo/exports.map

# The version the CLI and the daemon print (--version).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
VERSION_LDFLAGS := -X github.com/modexp-token/modexp-token/cmd/internal/version.Version=$(VERSION)

# Debian packages: PKCS#11 clients and tools used by the tests and the demo.
DEB_PACKAGES := gcc make openssl opensc p11-kit gnutls-bin libengine-pkcs11-openssl \
	softhsm2 libp11-kit-dev p11-kit-modules openssh-client nginx binutils util-linux \
	python3-pykcs11 python3-cryptography nodejs g++ python3
# The demo needs only these: the C compiler for cgo, pkcs11-tool, openssl.
DEMO_PACKAGES := gcc make openssl opensc
# How long apt-get waits for the dpkg and package-list locks that another
# apt-get or unattended-upgrades holds, instead of failing at once.
APT_LOCK_WAIT := 600
# Prefix of a recipe line whose wall time is printed after it (bash's time).
TIMED := TIMEFORMAT='  (%1R s)'; time

.PHONY: all build lib lib-fleet cli install uninstall deb test-install bench bench-device bench-fleet bench-nginx test test-purego test-ifma fmt-check vet test-go test-cgo test-integration deadcode deps deps-demo demo demo-fleet clean

all: build

build: lib lib-fleet cli

# go build decides itself what is stale; always ask it.
lib:
	@mkdir -p $(BUILD)
	$(GO) build -buildmode=c-shared -ldflags='$(LIB_LDFLAGS)' -o $(LIB) ./cgo
	@rm -f $(BUILD)/libmodexp-pkcs11.h

lib-fleet:
	@mkdir -p $(BUILD)
	$(GO) build $(ETCD_TAGS) -buildmode=c-shared -ldflags='$(LIB_LDFLAGS)' -o $(LIB_FLEET) ./cgo
	@rm -f $(BUILD)/libmodexp-pkcs11-fleet.h

# The CLI and the device daemon.
cli:
	@mkdir -p $(BUILD)
	$(GO) build $(ETCD_TAGS) -ldflags='$(VERSION_LDFLAGS)' -o $(CLI) ./cmd/modexp-token
	$(GO) build -ldflags='$(VERSION_LDFLAGS)' -o $(BUILD)/modexpd ./cmd/modexpd

# Installation. The module goes to the multiarch pkcs11/ directory
# (/usr/lib/x86_64-linux-gnu/pkcs11/ with PREFIX=/usr, where p11-kit and the
# docs look); its p11-kit file names it by absolute path, so p11-kit finds it
# under any PREFIX (p11-kit reads $(PREFIX)/share/p11-kit/modules only for
# PREFIX=/usr; elsewhere set P11KITDIR=/etc/pkcs11/modules).
PREFIX ?= /usr/local
DESTDIR ?=
MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null)
BINDIR ?= $(PREFIX)/bin
PKCS11DIR ?= $(PREFIX)/lib/$(MULTIARCH)/pkcs11
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
P11KITDIR ?= $(DATADIR)/p11-kit/modules
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/vendor-completions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
INSTALLED := $(PKCS11DIR)/libmodexp-pkcs11.so $(P11KITDIR)/modexp-token.module \
	$(BINDIR)/modexp-token $(BINDIR)/modexpd $(BASHCOMPDIR)/modexp-token \
	$(ZSHCOMPDIR)/_modexp-token $(FISHCOMPDIR)/modexp-token.fish \
	$(SYSTEMDDIR)/modexpd.service $(MANDIR)/man1/modexpd.1 $(MANDIR)/man5/modexp-token.toml.5

install: build
	install -d $(DESTDIR)$(PKCS11DIR) $(DESTDIR)$(P11KITDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(SYSTEMDDIR)
	install -m 0644 $(LIB) $(DESTDIR)$(PKCS11DIR)/libmodexp-pkcs11.so
	sed 's|^module: .*|module: $(PKCS11DIR)/libmodexp-pkcs11.so|' dist/p11-kit/modexp-token.module \
		> $(DESTDIR)$(P11KITDIR)/modexp-token.module && chmod 0644 $(DESTDIR)$(P11KITDIR)/modexp-token.module
	install -m 0755 $(CLI) $(BUILD)/modexpd $(DESTDIR)$(BINDIR)/
	rm -rf $(BUILD)/man && $(CLI) man --dir $(BUILD)/man
	install -m 0644 $(BUILD)/man/*.1 dist/man/modexpd.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 dist/man/modexp-token.toml.5 $(DESTDIR)$(MANDIR)/man5/
	$(CLI) completion bash > $(DESTDIR)$(BASHCOMPDIR)/modexp-token
	$(CLI) completion zsh > $(DESTDIR)$(ZSHCOMPDIR)/_modexp-token
	$(CLI) completion fish > $(DESTDIR)$(FISHCOMPDIR)/modexp-token.fish
	sed 's|@BINDIR@|$(BINDIR)|g' dist/systemd/modexpd.service > $(DESTDIR)$(SYSTEMDDIR)/modexpd.service
	@echo "installed; the module is $(PKCS11DIR)/libmodexp-pkcs11.so (p11-kit list-modules shows it as modexp-token)"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED)) $(DESTDIR)$(MANDIR)/man1/modexp-token.1 $(DESTDIR)$(MANDIR)/man1/modexp-token-*.1
	-rmdir $(DESTDIR)$(PKCS11DIR) 2>/dev/null

# A Debian package from the tree: make install into a staging root with
# PREFIX=/usr, then dpkg-deb (no debian/ directory needed; the control file
# is dist/debian/control.in).
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB_VERSION := $(shell echo '$(VERSION)' | sed -e 's/^v//' -e 's/^\([^0-9]\)/0.1+git\1/' -e 's/[^A-Za-z0-9.+~]/./g')
DEB_COMPRESS ?= -Zxz
DEB := $(BUILD)/modexp-token_$(DEB_VERSION)_$(DEB_ARCH).deb

deb: build
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/root/DEBIAN
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(BUILD)/deb/root PREFIX=/usr
	sed -e 's|@VERSION@|$(DEB_VERSION)|' -e 's|@ARCH@|$(DEB_ARCH)|' dist/debian/control.in > $(BUILD)/deb/root/DEBIAN/control
	dpkg-deb --root-owner-group $(DEB_COMPRESS) --build $(BUILD)/deb/root $(DEB)
	@echo "$(DEB)"

test: deps fmt-check vet deadcode test-go test-purego test-cgo test-integration test-install

fmt-check:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './build/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# cgo/'s test support is compiled only with the build tag modexp_testhooks
# (it stays out of the built library): vet and test it with the tag.
TESTHOOKS := -tags modexp_testhooks

vet:
	$(GO) vet ./...
	$(GO) vet $(ETCD_TAGS) ./keystore ./token ./keystore/etcdtest ./cmd/modexp-token ./test/largetoken
	$(GO) vet $(TESTHOOKS) ./cgo

# Pure-Go packages under the race detector. cgo/ is excluded (a module built
# with -race cannot be loaded by C hosts, and its tests run below), test/...
# too (it drives the built .so and the CLI).
test-go:
	$(GO) test -race $$($(GO) list ./... | grep -v -e '/cgo$$' -e '/test$$' -e '/test/')
	$(GO) test -race $(ETCD_TAGS) -run 'Etcd|Backend|Fleet|StoreCopy' ./keystore ./token ./cmd/modexp-token

# The pure-Go arithmetic kept for machines without MULX/ADX, tested everywhere.
# Then the trace test: the EC scalar multiplications' sequence of field
# operations does not depend on the secret, on every curve.
test-purego:
	$(GO) test -tags purego ./engine/arith/mont ./engine/backend/soft ./engine/arith/ec ./engine/alg/ecdsa ./engine/alg/rsa ./engine/alg/dsa ./engine/alg/dh
	$(GO) test -count=1 -tags ecoptrace -run ConstantTimeTrace ./engine/arith/ec

# The AVX-512 IFMA kernel on the hardware: fails (does not skip) where the
# CPU lacks it. Plain go test runs the same tests against the Go model and
# the emulated instructions on any machine and skips the hardware ones.
test-ifma:
	MODEXP_REQUIRE_IFMA=1 MODEXP_KERNEL=ifma $(GO) test -count=1 -run 'IFMA|ExpPair|Exp|Batch|Kernel|Trace|FuzzAMM52|Generated' ./engine/arith/mont
	MODEXP_REQUIRE_IFMA=1 MODEXP_KERNEL=ifma $(GO) test -count=1 ./engine/backend/soft ./engine/alg/rsa

# Under -race, whose checkptr checks the unsafe views of C memory too.
test-cgo:
	$(GO) test -race $(TESTHOOKS) ./cgo

# The Debian package installed with dpkg, used by its installed path, and
# removed: last, alone, so no other test sees a system-wide module.
test-install: build
	MODEXP_TEST_DEB=1 $(GO) test -count=1 -run TestDebianPackage ./test/install

# The counting test of a large token again with the token in etcd (an etcd
# member in a child process; 2,000 objects, a few seconds).
test-integration: build
	$(GO) test ./test/...
	$(GO) test $(ETCD_TAGS) -run Etcd ./test/largetoken

# Dead code: functions that neither the module's C entry points nor the
# commands reach. deadcode cannot see C callers, so the cgo exports are made
# roots by a file generated for the run (cgo/zz_deadcode_roots.go, build tag
# deadcode, removed after). Functions used only by tests count as dead: move
# them into the tests, or accept them with a reason in .ci/deadcode.allow.
# About 30 s; needs the Go proxy (or the module cache) for golang.org/x/tools.
DEADCODE := golang.org/x/tools/cmd/deadcode@v0.39.0
DEADCODE_ROOTS := cgo/zz_deadcode_roots.go

deadcode:
	@mkdir -p $(BUILD)
	@{ printf '//go:build deadcode\n\npackage main\n\n// Generated by make deadcode: the cgo exports as roots.\nvar _ = []any{\n'; \
	   sed -n 's|^//export \(.*\)$$|\t\1,|p' cgo/*.go; printf '}\n'; } > $(DEADCODE_ROOTS)
	@set -o pipefail; trap 'rm -f $(DEADCODE_ROOTS)' EXIT; \
	$(GO) run $(DEADCODE) -tags deadcode ./cgo ./cmd/... \
		| sed -E 's/:[0-9]+:[0-9]+: unreachable func: / /' | sort > $(BUILD)/deadcode.found
	@grep -v -e '^#' -e '^$$' .ci/deadcode.allow | awk '{print $$1 " " $$2}' | sort > $(BUILD)/deadcode.allowed
	@stale=$$(comm -13 $(BUILD)/deadcode.found $(BUILD)/deadcode.allowed); \
	if [ -n "$$stale" ]; then echo "deadcode: no longer dead, drop from .ci/deadcode.allow:"; echo "$$stale"; fi
	@dead=$$(comm -23 $(BUILD)/deadcode.found $(BUILD)/deadcode.allowed); \
	if [ -n "$$dead" ]; then echo "deadcode: unreachable from the module and the commands:"; echo "$$dead"; exit 1; fi; \
	echo "deadcode: nothing unreachable beyond .ci/deadcode.allow"

# Side-by-side benchmark against SoftHSMv2 on throwaway tokens: prints a table and
# a TSV, draws the table as build/bench/bench.svg (test/bench/benchchart), keeps
# them (and the module log) in build/bench/; the post-quantum, Ed448 and X25519
# rows also beside their libraries called in Go (test/bench/pqlib, pqlib.txt).
# BENCH_SECONDS (default 1), BENCH_THREADS (default 1,2), BENCH_ONLY (op ids:
# build/bench/p11bench --list). With the RSA-2048 sign rows (by default), a
# concurrency sweep follows: RSA-2048 sign at 1, 2, 4, 8, 16 threads, ours and
# SoftHSMv2, and openssl speed -multi T, drawn as build/bench/sweep.svg, with
# our 8-thread row over openssl speed -multi 2 (BENCH_SWEEP, BENCH_SWEEP_THREADS).
bench: deps build
	BENCH_OUT=$(CURDIR)/$(BUILD)/bench test/bench/run.sh

# The device engine (modexpd backed by the software engine, over a unix
# socket) against the software engine used directly, through PKCS#11 from C
# threads, on two slots of one module (issue 6). Same variables as bench;
# DEVICE_OPTS adds options to the device spec; BENCH_PROCS=N runs N client
# processes of one thread instead (test/bench/device.sh).
bench-device: deps build
	BENCH_OUT=$(CURDIR)/$(BUILD)/bench-device test/bench/device.sh

# A token in etcd against a token file (issue 18): the fleet module, two slots
# (one on a one-member etcd on loopback ports started and stopped by the
# script), RSA-2048 and P-256 sign in alternating rounds; etcd/file ops/s and
# per CPU. Same variables as bench; table and TSV in build/bench-fleet/.
bench-fleet: deps build
	BENCH_OUT=$(CURDIR)/$(BUILD)/bench-fleet test/bench/fleet.sh

# nginx with its TLS key on the token (libp11 engine), ours against SoftHSMv2
# alternating: the memory and CPU of a 16-worker start, first use and reload
# (issue 25), then master/worker modes, RSA-2048/P-256/Ed25519, TLS 1.3/1.2;
# handshakes/s, p99 and server CPU per handshake by process (issue 16), a few
# minutes. BENCH_PHASES (start,load), BENCH_SECONDS (default 3), BENCH_ROUNDS
# (2), BENCH_MODES, BENCH_KEYS, BENCH_TLS, BENCH_START_WORKERS (16); tables
# and TSVs in build/bench-nginx/. Not part of make test.
bench-nginx: deps build
	BENCH_OUT=$(CURDIR)/$(BUILD)/bench-nginx test/bench/nginx.sh

# The Debian packages a goal needs, installed when missing (one apt-get
# update first), waiting for apt's locks rather than failing on them
# (test/deps/apt-install.sh).
deps:
	@APT_LOCK_WAIT=$(APT_LOCK_WAIT) test/deps/apt-install.sh $(DEB_PACKAGES)

deps-demo:
	@APT_LOCK_WAIT=$(APT_LOCK_WAIT) test/deps/apt-install.sh $(DEMO_PACKAGES)

# The demo: one token in a local bbolt file, on the software engine.
DEMO := $(BUILD)/demo
DEMO_CONF := $(DEMO)/modexp-token.toml
DEMO_ENV := MODEXP_TOKEN_CONF=$(CURDIR)/$(DEMO_CONF) MODEXP_TOKEN_LOG=$(CURDIR)/$(DEMO)/module.log \
	HOME=$(CURDIR)/$(DEMO)/home XDG_DATA_HOME=$(CURDIR)/$(DEMO)/data
P11 := pkcs11-tool --module $(CURDIR)/$(LIB)

# Only what the demo uses is installed and built (the module, not the fleet
# module, the CLI or the daemon); each step prints its wall time.
demo:
	@$(TIMED) $(MAKE) --no-print-directory deps-demo
	@$(TIMED) $(MAKE) --no-print-directory lib
	rm -rf $(DEMO) && mkdir -p $(DEMO)/home $(DEMO)/data
	printf '[[slot]]\nlabel = "demo"\ntoken_file = "%s"\nengine = "soft"\n' "$(CURDIR)/$(DEMO)/token.db" > $(DEMO_CONF)
	$(TIMED) $(DEMO_ENV) $(P11) --init-token --label demo --so-pin 87654321
	$(TIMED) $(DEMO_ENV) $(P11) --login --login-type so --so-pin 87654321 --init-pin --pin 123456
	$(TIMED) $(DEMO_ENV) $(P11) --login --pin 123456 --keypairgen --key-type rsa:2048 --id 01 --label demo-key
	printf 'hello, ModExp Token\n' > $(DEMO)/msg.txt
	$(TIMED) $(DEMO_ENV) $(P11) --login --pin 123456 --sign --id 01 --mechanism SHA256-RSA-PKCS \
		--input-file $(DEMO)/msg.txt --output-file $(DEMO)/msg.sig
	$(TIMED) $(DEMO_ENV) $(P11) --read-object --type pubkey --id 01 --output-file $(DEMO)/pub.der
	openssl pkey -pubin -inform DER -in $(DEMO)/pub.der -out $(DEMO)/pub.pem
	$(TIMED) openssl dgst -sha256 -verify $(DEMO)/pub.pem -signature $(DEMO)/msg.sig $(DEMO)/msg.txt
	@echo
	@echo "The demo token is $(CURDIR)/$(DEMO)/token.db (configuration $(CURDIR)/$(DEMO_CONF),"
	@echo "module log $(CURDIR)/$(DEMO)/module.log; SO PIN 87654321, user PIN 123456). Next:"
	@echo
	@echo "  make cli                                             # builds $(CLI)"
	@echo "  export MODEXP_TOKEN_CONF=$(CURDIR)/$(DEMO_CONF) MODEXP_TOKEN_PIN=123456"
	@echo "  $(CLI) keys list                                      # the key and its pkcs11: URI"
	@echo "  $(CLI) keys generate --type ec:P-256 --label second  # another key"
	@echo "  pkcs11-tool --module $(CURDIR)/$(LIB) --login --pin 123456 -O  # what pkcs11-tool sees"
	@echo
	@echo "More recipes (OpenSSL, p11-kit, GnuTLS, OpenSSH, nginx): docs/USAGE.md"

# A three-member etcd cluster on loopback, two hosts, a key made on one and
# used by pkcs11-tool on the other (docs/FLEET.md).
demo-fleet: deps build
	test/fleet/demo.sh

clean:
	rm -rf $(BUILD)
