# SPDX-License-Identifier: Apache-2.0
# hwpprobe build. `make` builds bin/hwpprobe and bin/hwpemu; `make ci` is what
# CI runs (installs test dependencies, checks generated code, lints, tests).
# Go from the download lives in /usr/local/go/bin, which sudo's
# secure_path drops: put it on PATH for make and everything it runs
# (install-deps.sh, the tests' own go build) when no go is on PATH.
GODIR    := $(if $(shell command -v go 2>/dev/null),,$(if $(wildcard /usr/local/go/bin/go),/usr/local/go/bin))
export PATH := $(if $(GODIR),$(GODIR):)$(PATH)
GO       ?= go
# Pure-Go binaries: a cgo hwpemu deadlocks (see cmd/hwpemu/cgo_guard.go),
# and static binaries run unchanged on lab machines.
export CGO_ENABLED := 0
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
PKGS     := ./...

.PHONY: all build test lint generate check-generate schemas deps ci bench fuzz clean package package-test licences

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

# Tests run as root in CI: the real-kernel tests (eBPF, perf, FUSE
# emulation) need it and do not skip there.
# Host-dependent tests run once per host variant (internal/hostvariant):
# the list of what ran is printed after the tests.
VARIANT_LOG := $(CURDIR)/bin/host-variants.log
test:
	@mkdir -p bin; rm -f $(VARIANT_LOG)
	@HWPPROBE_HOSTVARIANT_LOG=$(VARIANT_LOG) $(GO) test -count=1 -timeout 25m $(PKGS); rc=$$?; \
	echo "host variants run (internal/hostvariant, docs/testing.md):"; \
	sort -k3,3 -k4,4 -k2,2 $(VARIANT_LOG) 2>/dev/null | sed 's/^/  /'; exit $$rc

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

# Regenerates the eBPF objects (needs clang; `make deps` installs it) and
# records the compiler and the source's hash in ebpf/msrtrace.gen.
generate:
	GO=$(GO) scripts/bpfgen.sh generate

# Fails when the committed eBPF objects are not what the C source gives:
# byte for byte with the recorded clang, by structure with any other.
check-generate:
	GO=$(GO) scripts/bpfgen.sh check

# Rewrites docs/schemas/ from the Go types of the JSON outputs (the tests
# fail while a committed schema differs from what its type gives).
schemas:
	cd cmd/hwpprobe && $(GO) test -count=1 -run '^TestSchemasCommitted$$' . -update-schemas

deps:
	scripts/install-deps.sh

ci: deps check-generate lint build package-test test

# A .deb and an .rpm in bin/ with nfpm: both binaries, one man page per
# command, bash/zsh/fish completions, the docs and the exporter's systemd
# unit (docs/packaging.md).
package: build
	GO=$(GO) VERSION=$(VERSION) scripts/package.sh

# Installs the .deb into a throwaway root and checks it, its man pages,
# completions and unit, and the .rpm's contents (scripts/package-test.sh).
package-test: package
	scripts/package-test.sh

# Every dependency's licence is on the allow-list; every source file has
# an SPDX line (internal/licenses; also part of make test).
licences:
	$(GO) test -count=1 -run 'TestDependencyLicences|TestSPDX' ./internal/licenses

# Every fuzz target for FUZZTIME each (default 10m; not part of ci, which
# replays their seeds and committed corpora): make fuzz FUZZTIME=30s
fuzz:
	GO=$(GO) scripts/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

clean:
	rm -rf bin
