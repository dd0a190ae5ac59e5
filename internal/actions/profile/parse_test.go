// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical form
		kind Kind
	}{
		{"performance", "governor=performance", Sysfs},
		{"schedutil", "governor=schedutil", Sysfs},
		{"powersave:epp=performance", "governor=powersave,epp=performance", Sysfs},
		// docs/kernel-facts.md section 5's example, reordered into the write order.
		{"governor=powersave,epp=performance,epb=0,no_turbo=0,min_perf_pct=100,max_perf_pct=100,boost=1",
			"no_turbo=0,boost=1,min_perf_pct=100,max_perf_pct=100,governor=powersave,epp=performance,epb=0", Sysfs},
		{"epp=power@4-11,epp=balance_power", "epp=balance_power,epp=power@4-11", Sysfs},
		{"epp=128", "epp=128", Sysfs},
		{"epb=balance-power@0,1", "", Sysfs}, // "1" is not key=value: see TestParseErrors
		{"epb=normal", "epb=normal", Sysfs},
		{"scaling_max_freq=2.4GHz,scaling_min_freq=800MHz", "scaling_min_freq=800000,scaling_max_freq=2400000", Sysfs},
		{"scaling_max_freq=1500000", "scaling_max_freq=1500000", Sysfs},
		{"scaling_max_freq=1500000kHz@0-3", "scaling_max_freq=1500000@0-3", Sysfs},
		{"epp=power@8+0-3", "epp=power@0-3+8", Sysfs},
		{"energy_performance_preference=power,energy_perf_bias=15,scaling_governor=powersave", "governor=powersave,epp=power,epb=15", Sysfs},
		{"tuned:throughput-performance", "tuned:throughput-performance", Tuned},
		{"ppd:power-saver", "ppd:power-saver", PPD},
		{"current", "current", Current},
	}
	for _, tt := range tests {
		if tt.want == "" {
			continue
		}
		p, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if p.String() != tt.want || p.Kind != tt.kind {
			t.Errorf("Parse(%q) = %q kind %d, want %q kind %d", tt.in, p.String(), p.Kind, tt.want, tt.kind)
		}
		// The canonical form parses to itself.
		if q, err := Parse(p.String()); err != nil || q.String() != p.String() {
			t.Errorf("Parse(%q) = %v, %v; want itself", p.String(), q, err)
		}
	}
}

func TestParseFor(t *testing.T) {
	p, err := Parse("powersave:epp=balance_power,epp=power@4-11,epb=6@12-13")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key  Key
		cpu  int
		want string
		ok   bool
	}{
		{EPP, 0, "balance_power", true}, {EPP, 4, "power", true}, {EPP, 11, "power", true},
		{EPB, 12, "6", true}, {EPB, 0, "", false}, {Governor, 13, "powersave", true},
	} {
		if v, ok := p.For(tt.key, tt.cpu); v != tt.want || ok != tt.ok {
			t.Errorf("For(%s, %d) = %q, %v; want %q, %v", tt.key, tt.cpu, v, ok, tt.want, tt.ok)
		}
	}
	if !cmp.Equal(p.Settings[2].CPUs, cpus.List{4, 5, 6, 7, 8, 9, 10, 11}) {
		t.Errorf("subset %v", p.Settings[2])
	}
}

// TestParseErrors: each bad profile is one line that names the bad part.
func TestParseErrors(t *testing.T) {
	tests := []struct{ in, part string }{
		{"", "empty"},
		{"Performance!", "not a governor"},
		{"powersave:", "nothing after"},
		{"powersave:epp=fast", `unknown EPP`},
		{"epp=256", "unknown EPP"},
		{"epb=16", "unknown EPB"},
		{"epb=balance_power", "unknown EPB"}, // EPB names use hyphens
		{"frobnicate=1", `unknown key "frobnicate"`},
		{"min_perf_pct=101", "0-100"},
		{"no_turbo=2", "0-1"},
		{"no_turbo=1@0-3", "takes no @CPULIST"},
		{"epp=power@x", "bad CPU list"},
		{"epp=power@", "bad CPU list"},
		{"epp=power,epp=performance", "epp given twice"},
		{"epp=power@1,epp=performance@1", "epp@1 given twice"},
		{"scaling_max_freq=2.4THz", "want a frequency"},
		{"scaling_max_freq=0.1kHz", "whole number of kHz"},
		{"scaling_max_freq=-1", "want a frequency"},
		{"scaling_min_freq=2GHz,scaling_max_freq=1GHz", "above scaling_max_freq"},
		{"min_perf_pct=80,max_perf_pct=50", "above max_perf_pct"},
		{"epb=balance-power@0,1", `"1" is not key=value`},
		{"ppd:turbo", "power-profiles-daemon has"},
		{"tuned:", "not a TuneD profile name"},
		{"@profile.json", "want a .toml, .yaml or .yml file"},
		{"@missing.toml", "no such file"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q): no error", tt.in)
			continue
		}
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.part) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): %q, want one ErrSyntax line containing %q", tt.in, err, tt.part)
		}
	}
}

func TestParseFile(t *testing.T) {
	files := map[string]string{
		"a.toml":    "governor = \"powersave\"\nepp = \"performance\"\nepb = 0\nno_turbo = false\n[cpus.\"4-11\"]\nepp = \"power\"\n",
		"a.yaml":    "governor: powersave\nepp: performance\nepb: 0\nno_turbo: 0\ncpus:\n  4-11:\n    epp: power\n",
		"bad.toml":  "governor = \n",
		"bad.yaml":  "governor: [powersave\n",
		"key.yaml":  "governour: powersave\n",
		"list.yaml": "governor: [a, b]\n",
		"cpus.yaml": "cpus: 3\n",
		"none.yml":  "{}\n",
	}
	read := func(name string) ([]byte, error) {
		s, ok := files[name]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return []byte(s), nil
	}
	const want = "no_turbo=0,governor=powersave,epp=performance,epp=power@4-11,epb=0"
	for _, name := range []string{"a.toml", "a.yaml"} {
		p, err := ParseWith("@"+name, read)
		if err != nil || p.String() != want {
			t.Errorf("@%s = %v, %v; want %q", name, p, err, want)
		}
	}
	for name, part := range map[string]string{"bad.toml": "bad.toml", "bad.yaml": "bad.yaml", "key.yaml": `unknown key "governour"`,
		"list.yaml": "want a string or a number", "cpus.yaml": "table of CPU lists", "none.yml": "sets nothing"} {
		_, err := ParseWith("@"+name, read)
		if err == nil || !strings.Contains(err.Error(), part) || strings.Contains(err.Error(), "\n") {
			t.Errorf("@%s: %v, want one line containing %q", name, err, part)
		}
	}
}

func TestParseKHz(t *testing.T) {
	for in, want := range map[string]int64{"800000": 800000, "800MHz": 800000, "2.4GHz": 2400000, "1.25ghz": 1250000, "900000khz": 900000} {
		if got, err := ParseKHz(in); err != nil || got != want {
			t.Errorf("ParseKHz(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GHz", "1e6", "0x10", "NaN", "Inf", "0", "1.2345678MHz", "+5"} {
		if got, err := ParseKHz(in); err == nil {
			t.Errorf("ParseKHz(%q) = %d, want an error", in, got)
		}
	}
}
