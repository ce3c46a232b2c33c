# ModExp Token build.
#
#   make build   build/libmodexp-pkcs11.so (PKCS#11 module), build/modexp-token (CLI), build/modexpd (device daemon)
#   make test    gofmt check, go vet, race tests of the pure-Go packages, the
#                cgo package tests, the integration tests in test/
#   make demo    a token in build/demo on the software engine, a key, a
#                signature by pkcs11-tool verified by openssl
#   make bench   ops/s of ours vs SoftHSMv2 (test/bench/run.sh), about 2 minutes
#   make deadcode  functions no program reaches (.ci/deadcode.allow lists the accepted ones)
#   make deps    the Debian packages the tests and the demo need
#   make clean

SHELL := /bin/bash
GO ?= go
BUILD := build
LIB := $(BUILD)/libmodexp-pkcs11.so
CLI := $(BUILD)/modexp-token

# Only the C_* entry points are exported (see cgo/exports.map).
LIB_LDFLAGS := -extldflags=-Wl,--version-script=$(CURDIR)/cgo/exports.map

# Debian packages: PKCS#11 clients and tools used by the tests and the demo.
DEB_PACKAGES := gcc make openssl opensc p11-kit gnutls-bin libengine-pkcs11-openssl \
	softhsm2 libp11-kit-dev p11-kit-modules openssh-client nginx binutils util-linux
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: all build lib cli bench bench-device test test-purego test-ifma fmt-check vet test-go test-cgo test-integration deadcode deps demo clean

all: build

build: lib cli

# go build decides itself what is stale; always ask it.
lib:
	@mkdir -p $(BUILD)
	$(GO) build -buildmode=c-shared -ldflags='$(LIB_LDFLAGS)' -o $(LIB) ./cgo
	@rm -f $(BUILD)/libmodexp-pkcs11.h

# The CLI and the device daemon.
cli:
	@mkdir -p $(BUILD)
	$(GO) build -o $(CLI) ./cmd/modexp-token
	$(GO) build -o $(BUILD)/modexpd ./cmd/modexpd

test: deps fmt-check vet test-go test-purego test-cgo test-integration

fmt-check:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './build/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# cgo/'s test support is compiled only with the build tag modexp_testhooks
# (it stays out of the built library): vet and test it with the tag.
TESTHOOKS := -tags modexp_testhooks

vet:
	$(GO) vet ./...
	$(GO) vet $(TESTHOOKS) ./cgo

# Pure-Go packages under the race detector. cgo/ is excluded (a module built
# with -race cannot be loaded by C hosts, and its tests run below), test/...
# too (it drives the built .so and the CLI).
test-go:
	$(GO) test -race $$($(GO) list ./... | grep -v -e '/cgo$$' -e '/test$$' -e '/test/')

# The pure-Go arithmetic kept for machines without MULX/ADX, tested everywhere.
test-purego:
	$(GO) test -tags purego ./engine/internal/mont ./engine/soft ./engine/ec ./engine/ecdsa ./engine/rsa ./engine/dsa ./engine/dh

# The AVX-512 IFMA kernel on the hardware: fails (does not skip) where the
# CPU lacks it. Plain go test runs the same tests against the Go model and
# the emulated instructions on any machine and skips the hardware ones.
test-ifma:
	MODEXP_REQUIRE_IFMA=1 MODEXP_KERNEL=ifma $(GO) test -count=1 -run 'IFMA|ExpPair|Exp|Kernel|Trace|FuzzAMM52|Generated' ./engine/internal/mont
	MODEXP_REQUIRE_IFMA=1 MODEXP_KERNEL=ifma $(GO) test -count=1 ./engine/soft ./engine/rsa

test-cgo:
	$(GO) test $(TESTHOOKS) ./cgo

test-integration: build
	$(GO) test ./test/...

# Dead code: functions that neither the module's C entry points (roots listed
# in cgo/deadcode_roots.go, build tag deadcode) nor the commands reach.
# Functions used only by tests count as dead: move them into the tests, or
# accept them with a reason in .ci/deadcode.allow. About 30 s; needs the Go
# proxy (or the module cache) for golang.org/x/tools.
DEADCODE := golang.org/x/tools/cmd/deadcode@v0.39.0

deadcode:
	@mkdir -p $(BUILD)
	@set -o pipefail; $(GO) run $(DEADCODE) -tags deadcode ./cgo ./cmd/... \
		| sed -E 's/:[0-9]+:[0-9]+: unreachable func: / /' | sort > $(BUILD)/deadcode.found
	@grep -v -e '^#' -e '^$$' .ci/deadcode.allow | awk '{print $$1 " " $$2}' | sort > $(BUILD)/deadcode.allowed
	@stale=$$(comm -13 $(BUILD)/deadcode.found $(BUILD)/deadcode.allowed); \
	if [ -n "$$stale" ]; then echo "deadcode: no longer dead, drop from .ci/deadcode.allow:"; echo "$$stale"; fi
	@dead=$$(comm -23 $(BUILD)/deadcode.found $(BUILD)/deadcode.allowed); \
	if [ -n "$$dead" ]; then echo "deadcode: unreachable from the module and the commands:"; echo "$$dead"; exit 1; fi; \
	echo "deadcode: nothing unreachable beyond .ci/deadcode.allow"

# Side-by-side benchmark against SoftHSMv2 on throwaway tokens: prints a table and
# a TSV, keeps them (and the module log) in build/bench/. BENCH_SECONDS (default 1),
# BENCH_THREADS (default 1,2), BENCH_ONLY (op ids: build/bench/p11bench --list).
bench: deps build
	BENCH_OUT=$(CURDIR)/$(BUILD)/bench test/bench/run.sh

# The device engine (modexpd backed by the software engine, over a unix
# socket) against the software engine used directly, through PKCS#11 from C
# threads, on two slots of one module (issue 6). Same variables as bench;
# DEVICE_OPTS adds options to the device spec.
bench-device: deps build
	BENCH_OUT=$(CURDIR)/$(BUILD)/bench-device test/bench/device.sh

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi

# The demo: one token in a local bbolt file, on the software engine.
DEMO := $(BUILD)/demo
DEMO_CONF := $(DEMO)/modexp-token.toml
DEMO_ENV := MODEXP_TOKEN_CONF=$(CURDIR)/$(DEMO_CONF) MODEXP_TOKEN_LOG=$(CURDIR)/$(DEMO)/module.log \
	HOME=$(CURDIR)/$(DEMO)/home XDG_DATA_HOME=$(CURDIR)/$(DEMO)/data
P11 := pkcs11-tool --module $(CURDIR)/$(LIB)

demo: deps build
	rm -rf $(DEMO) && mkdir -p $(DEMO)/home $(DEMO)/data
	printf '[[slot]]\nlabel = "demo"\ntoken_file = "%s"\nengine = "soft"\n' "$(CURDIR)/$(DEMO)/token.db" > $(DEMO_CONF)
	$(DEMO_ENV) $(P11) --init-token --label demo --so-pin 87654321
	$(DEMO_ENV) $(P11) --login --login-type so --so-pin 87654321 --init-pin --pin 123456
	$(DEMO_ENV) $(P11) --login --pin 123456 --keypairgen --key-type rsa:2048 --id 01 --label demo-key
	printf 'hello, ModExp Token\n' > $(DEMO)/msg.txt
	$(DEMO_ENV) $(P11) --login --pin 123456 --sign --id 01 --mechanism SHA256-RSA-PKCS \
		--input-file $(DEMO)/msg.txt --output-file $(DEMO)/msg.sig
	$(DEMO_ENV) $(P11) --read-object --type pubkey --id 01 --output-file $(DEMO)/pub.der
	openssl pkey -pubin -inform DER -in $(DEMO)/pub.der -out $(DEMO)/pub.pem
	openssl dgst -sha256 -verify $(DEMO)/pub.pem -signature $(DEMO)/msg.sig $(DEMO)/msg.txt

clean:
	rm -rf $(BUILD)
