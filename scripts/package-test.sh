#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests the packages `make package` left in bin/ (docs/packaging.md),
# without touching the host's files:
#   - installs the .deb with dpkg into a throwaway root (no maintainer
#     scripts to run) and runs the installed binaries: `version` is the
#     built binaries' and `completion bash` is the installed script;
#   - every command has its man page, and each renders without a groff
#     warning (`man -l`; line-filling ones aside);
#   - in a private mount namespace with the package's /usr laid over the
#     host's (overlayfs): `man hwpprobe-diff` finds the page, the installed
#     bash completion completes register and machine names through the
#     installed binaries, and `systemd-analyze verify` accepts the
#     exporter's unit (its ExecStart, its man page);
#   - purging the package leaves no file or directory behind;
#   - the .rpm holds the same files as the .deb (rpm -qlp).
# Needs root (dpkg --root, unshare), dpkg, man-db, systemd, bash-completion, rpm
# (scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
	echo "package-test: $*" >&2
	exit 1
}
one() { # one FILE matching the glob, or fail
	local m=("$@")
	[ ${#m[@]} -eq 1 ] && [ -f "${m[0]}" ] || fail "want one package, found: ${m[*]} (run make package)"
	echo "${m[0]}"
}
deb=$(one bin/hwpprobe_*.deb)
rpm=$(one bin/hwpprobe-*.rpm)

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/var/lib/dpkg/{info,updates,triggers}
touch "$root"/var/lib/dpkg/{status,available}
dpkg --root="$root" --log=/dev/null -i "$deb" >/dev/null

# The installed binaries are the built ones and say what they are.
for b in hwpprobe hwpemu; do
	want=$("bin/$b" version)
	got=$("$root/usr/bin/$b" version) || fail "$b version failed"
	[ "$got" = "$want" ] || fail "installed $b version: $got, want $want"
	got=$("$root/usr/bin/$b" --version) || fail "$b --version failed"
	[ "$got" = "$want" ] || fail "installed $b --version: $got, want $want"
	"$root/usr/bin/$b" completion bash | cmp -s - "$root/usr/share/bash-completion/completions/$b" ||
		fail "$b completion bash differs from the installed completion script"
	[ -s "$root/usr/share/zsh/vendor-completions/_$b" ] || fail "no zsh completion for $b"
	[ -s "$root/usr/share/fish/vendor_completions.d/$b.fish" ] || fail "no fish completion for $b"
done

# One man page per command: what genman writes now is what was installed.
pages=$(mktemp -d -p "$root")
bin/hwpprobe genman "$pages" && bin/hwpemu genman "$pages"
want=$(cd "$pages" && ls | sort)
got=$(cd "$root/usr/share/man/man1" && ls | sed 's/\.gz$//' | sort)
[ "$got" = "$want" ] || fail "installed man pages differ from the commands: $(diff <(echo "$want") <(echo "$got") | tr '\n' ' ')"
rm -rf "$pages"
for p in hwpprobe hwpprobe-diff hwpprobe-exporter hwpprobe-completion-bash hwpprobe-version hwpemu-run hwpemu-predict; do
	[ -f "$root/usr/share/man/man1/$p.1.gz" ] || fail "no man page $p.1"
done
for f in "$root"/usr/share/man/man1/*.1.gz; do
	# groff's "cannot adjust line" / "can't break line" are about filling
	# 80 columns, not about the page.
	w=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$f" 2>&1 >/dev/null |
		grep -v -e 'cannot adjust line' -e "can't break line" || true)
	[ -z "$w" ] || fail "$(basename "$f"): $w"
	MANWIDTH=80 man -P cat -l "$f" 2>/dev/null | grep -q '^NAME' || fail "$(basename "$f") renders no NAME section"
done

# The package's /usr over the host's, in a private mount namespace.
unshare -m --propagation private env ROOT="$root" bash -euo pipefail -s <<'NS' || fail "checks in the mount namespace failed"
mount -t overlay overlay -o "lowerdir=$ROOT/usr:/usr" /usr
fail() { echo "package-test: $*" >&2; exit 1; }
[ "$(man -w hwpprobe-diff)" = /usr/share/man/man1/hwpprobe-diff.1.gz ] || fail "man -w hwpprobe-diff: $(man -w hwpprobe-diff 2>&1)"
# complete PROG WORD...: what the installed bash completion offers for the
# last word, through the installed binary, with bash-completion loaded as
# an interactive shell has it.
complete() {
	bash -c 'source /usr/share/bash-completion/bash_completion; source "/usr/share/bash-completion/completions/$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		"__start_${COMP_WORDS[0]}" 2>/dev/null; printf "%s\n" "${COMPREPLY[@]}"' _ "$@" | sort
}
got=$(complete hwpprobe hwpprobe decode IA32_HWP_REQ | tr '\n' ' ')
[ "$got" = "IA32_HWP_REQUEST= IA32_HWP_REQUEST_PKG= " ] || fail "hwpprobe decode IA32_HWP_REQ<TAB>: $got"
got=$(complete hwpemu hwpemu run '')
want=$(/usr/bin/hwpemu list | awk '{print $1}' | sort)
[ "$got" = "$want" ] || fail "hwpemu run <TAB>: $got, want $want"
# ':' breaks bash words: the replies replace what follows the last one.
got=$(complete hwpprobe hwpprobe apply powersave:epp=balance_p | tr '\n' ' ')
[ "$got" = "epp=balance_performance epp=balance_power " ] || fail "hwpprobe apply powersave:epp=balance_p<TAB>: $got"
# verify exits 0 on a setting it cannot parse and ignores: any line fails.
out=$(systemd-analyze verify /usr/lib/systemd/system/hwpprobe-exporter.service 2>&1) && [ -z "$out" ] ||
	fail "systemd-analyze verify: $out"
NS

# Purging leaves nothing behind.
dpkg --root="$root" --log=/dev/null --purge hwpprobe >/dev/null
left=$(cd "$root" && find . -mindepth 1 ! -path './var' ! -path './var/lib' ! -path './var/lib/dpkg' ! -path './var/lib/dpkg/*')
[ -z "$left" ] || fail "left after purge: $(echo $left)"
! ls "$root"/var/lib/dpkg/info/hwpprobe.* >/dev/null 2>&1 || fail "dpkg still lists hwpprobe's files"

# The .rpm holds the .deb's files.
debfiles=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./|/|; /[^/]$/p' | sort)
rpmfiles=$(rpm -qlp "$rpm" 2>/dev/null | sort)
[ -n "$rpmfiles" ] && [ "$rpmfiles" = "$debfiles" ] ||
	fail "the rpm's files differ from the deb's: $(diff <(echo "$debfiles") <(echo "$rpmfiles") | tr '\n' ' ')"
echo "package-test: ok ($(echo "$debfiles" | wc -l) files; $(basename "$deb"), $(basename "$rpm"))"
