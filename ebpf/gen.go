// SPDX-License-Identifier: Apache-2.0

package ebpf

// The objects are committed so that `go build` needs no clang. `make generate`
// rebuilds them; CI checks they are up to date (`make check-generate`). The
// flags are pinned and bpf2go strips DWARF and maps the source directory, so
// the output is byte-for-byte reproducible with Debian's clang 14, llvm-strip
// and libbpf-dev.
//go:generate go tool bpf2go -cc clang -strip llvm-strip -cflags "-O2 -g -Wall -Werror" -target bpfel -type msr_event -type tp_event -type write_msr_ctx msrtrace msrtrace.c -- -I/usr/include/x86_64-linux-gnu
