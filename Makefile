# hwpprobe build. `make` builds bin/hwpprobe and bin/hwpemu; `make ci` is what
# CI runs (installs test dependencies, checks generated code, lints, tests).
GO       ?= go
# Pure-Go binaries: a cgo hwpemu deadlocks (see cmd/hwpemu/cgo_guard.go),
# and static binaries run unchanged on lab machines.
export CGO_ENABLED := 0
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
PKGS     := ./...

.PHONY: all build test lint generate check-generate deps ci bench clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

# Tests run as root in CI: the real-kernel tests (eBPF, perf, FUSE
# emulation) need it and do not skip there.
test:
	$(GO) test -count=1 -timeout 15m $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

# Regenerates the eBPF objects (needs clang; `make deps` installs it).
generate:
	$(GO) generate ./ebpf/...

# Fails when the committed eBPF objects differ from what the C sources give.
check-generate: generate
	@git diff --exit-code --stat -- ebpf/ || (echo "committed eBPF objects are stale: run make generate"; exit 1)

deps:
	scripts/install-deps.sh

ci: deps check-generate lint build test

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

clean:
	rm -rf bin
