// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// descFaults are descriptions an adversarial tester got accepted, or
// blamed on the wrong field (issue 21, fault 12), each with the one line
// ParseDescription must answer. FuzzParseDescription starts from them too.
var descFaults = []struct{ name, data, want string }{
	{"idle_w +inf", tiny + "power: {idle_w: .inf}\n",
		"description:14: power.idle_w: +Inf: want a finite number from 0 to 10000"},
	{"exponent -1e308", tiny + "power: {exponent: -1e308}\n",
		"description:14: power.exponent: -1e+308: want a finite number from 0 to 10"},
	{"platform_w nan", tiny + "power: {platform_w: .nan}\n",
		"description:14: power.platform_w: NaN: want a finite number from 0 to 10000"},
	{"active_w -inf", strings.Replace(tiny, "c: {}", "c: {active_w: -.inf}", 1),
		"description:11: core_types.c.active_w: -Inf: want a finite number from 0 to 10000"},
	{"thermal r +inf", tiny + "thermal: {ambient_c: 35, r_k_per_w: .inf, c_j_per_k: 10, source: assumed}\n",
		"description:14: thermal.r_k_per_w: +Inf: want a finite number from 0 to 1000"},
	{"ambient 1e300", tiny + "thermal: {ambient_c: 1e300, r_k_per_w: 1, c_j_per_k: 10, source: assumed}\n",
		"description:14: thermal.ambient_c: 1e+300: want a finite number from -50 to 150"},
	{"cache size_k", strings.Replace(tiny, "c: {}", "c:\n    caches:\n      - level: 1\n        type: Data\n        size_k: 2000000000\n        ways: 8\n        shared_by: core", 1),
		"description:15: core_types.c.caches[0].size_k: 2000000000: want 1 to 1073741824"},
	{"cache size_k not a multiple", strings.Replace(tiny, "c: {}", "c:\n    caches:\n      - level: 1\n        type: Data\n        size_k: 1\n        ways: 32\n        shared_by: core", 1),
		"description:15: core_types.c.caches[0].size_k: 1 KB: want a multiple of ways x 64 bytes (32 ways)"},
	{"cache level", strings.Replace(tiny, "c: {}", "c:\n    caches:\n      - type: Data\n        size_k: 48\n        ways: 12\n        level: 9\n        shared_by: core", 1),
		"description:16: core_types.c.caches[0].level: 9: want 1 to 7"},
	{"cache ways", strings.Replace(tiny, "c: {}", "c:\n    caches:\n      - level: 1\n        type: Data\n        size_k: 48\n        ways: 4096\n        shared_by: core", 1),
		"description:16: core_types.c.caches[0].ways: 4096: want 1 to 1024"},
	{"NUL in a file path", tiny + "files:\n  - {path: \"proc/cpuinfo\\0x\", mode: \"0444\"}\n",
		`description:15: files[0].path: "proc/cpuinfo\x00x": contains a NUL byte, which no file name can`},
	{"NUL in a link", tiny + "files:\n  - {path: sys/devices/system/cpu/x, link: \"a\\0b\"}\n",
		`description:15: files[0].link: "a\x00b": contains a NUL byte, which no link target can`},
	{"escape in the name", strings.Replace(tiny, "name: tiny", "name: \"\\e]2;pwned\\a\\e[2J\"", 1),
		`description:1: name: "\x1b]2;pwned\a\x1b[2J": want printable text (no control characters or escape sequences)`},
	{"newline in the name", strings.Replace(tiny, "name: tiny", "name: \"a\\nb\"", 1),
		`description:1: name: "a\nb": want printable text (no control characters or escape sequences)`},
	{"long name", strings.Replace(tiny, "name: tiny", "name: "+strings.Repeat("n", 257), 1),
		"description:1: name: 257 bytes: want at most 256"},
}

// TestParseDescriptionFaults: non-finite or absurd power figures, a NUL in
// a file's path, a name with control characters are refused, and a cache
// out of range names the very field.
func TestParseDescriptionFaults(t *testing.T) {
	for _, tc := range descFaults {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDescription([]byte(tc.data))
			got := "<nil>"
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseDescription error (-want +got):\n%s", diff)
			}
		})
	}
}
