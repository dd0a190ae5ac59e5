#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the hwpprobe .deb and .rpm into bin/ with nfpm (a Go tool of this
# module, go.mod), from the binaries `make build` left in bin/
# (docs/packaging.md): stages the man pages (hidden `genman` command,
# cobra/doc) and the bash, zsh and fish completions, then runs nfpm on
# packaging/nfpm.yaml.
#
# $VERSION is the Makefile's (git describe); the package version is made
# from it: v1.2.3 -> 1.2.3, v1.2.3-4-gabcdef0 -> 1.2.3+4.gabcdef0, a bare
# commit -> 0.0.0+gitYYYYMMDD.HASH, and ".dirty" for a dirty work tree.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}

pkg_version() {
	local v=$1 dirty=
	case $v in *-dirty) dirty=.dirty v=${v%-dirty} ;; esac
	if [[ $v =~ ^v?([0-9]+(\.[0-9]+)*)(-([0-9]+)-(g[0-9a-f]+))?$ ]]; then
		v=${BASH_REMATCH[1]}
		[ -z "${BASH_REMATCH[3]}" ] || v+="+${BASH_REMATCH[4]}.${BASH_REMATCH[5]}"
	elif [[ $v =~ ^[0-9a-f]{7,40}$ ]]; then
		v="0.0.0+git$(git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || echo 0).$v"
	else
		v=0.0.0+dev
	fi
	echo "$v$dirty"
}

for b in hwpprobe hwpemu; do
	[ -x "bin/$b" ] || { echo "package: bin/$b is missing: run make build" >&2; exit 1; }
done
export PKG_VERSION=${PKG_VERSION:-$(pkg_version "$VERSION")}
PKG_STAGE=bin/pkg-stage # packaging/nfpm.yaml reads it there
# The man pages' date: the last commit's, so that packages rebuild the same.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

rm -rf "$PKG_STAGE"
mkdir -p "$PKG_STAGE"/man "$PKG_STAGE"/completions/{bash,zsh,fish}
for b in hwpprobe hwpemu; do
	"bin/$b" genman "$PKG_STAGE/man"
	"bin/$b" completion bash >"$PKG_STAGE/completions/bash/$b"
	"bin/$b" completion zsh >"$PKG_STAGE/completions/zsh/_$b"
	"bin/$b" completion fish >"$PKG_STAGE/completions/fish/$b.fish"
done
gzip -9n "$PKG_STAGE"/man/*.1
rm -f bin/hwpprobe_*.deb bin/hwpprobe-*.rpm
for p in deb rpm; do
	"$GO" tool nfpm package --config packaging/nfpm.yaml --packager "$p" --target bin/
done
ls bin/hwpprobe_*.deb bin/hwpprobe-*.rpm
