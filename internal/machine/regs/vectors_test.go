// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vector is one line of a testdata TSV: a real register value and the
// fields its published decode (turbostat, x86_energy_perf_policy, kernel
// field definitions) gives.
type vector struct {
	file   string
	line   int
	reg    string
	raw    string
	ctx    string
	want   map[string]any
	source string
}

func readVectors(t *testing.T, file string) []vector {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		col := strings.Split(line, "\t")
		if len(col) != 5 {
			t.Fatalf("%s:%d: %d columns, want 5", file, n, len(col))
		}
		v := vector{file: file, line: n, reg: col[0], raw: col[1], ctx: col[2], source: col[4], want: map[string]any{}}
		for _, kv := range strings.Fields(col[3]) {
			k, s, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("%s:%d: expected field %q is not name=value", file, n, kv)
			}
			switch s {
			case "true", "false":
				v.want[k] = s == "true"
			default:
				x, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatalf("%s:%d: expected %s: %v", file, n, kv, err)
				}
				v.want[k] = x // JSON numbers decode to float64
			}
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// parseContext reads "REG=VALUE ... cpu=F:M" as the vectors give it.
func parseContext(t *testing.T, v vector) Context {
	t.Helper()
	ctx := Context{}
	for _, a := range strings.Fields(v.ctx) {
		if fm, ok := strings.CutPrefix(a, "cpu="); ok {
			f, m, _ := strings.Cut(fm, ":")
			fv, err1 := strconv.ParseUint(f, 0, 32)
			mv, err2 := strconv.ParseUint(m, 0, 32)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s:%d: bad cpu %q", v.file, v.line, fm)
			}
			ctx[CPUSignature] = Signature(uint32(fv), uint32(mv))
			continue
		}
		r, val, err := ParseAssignment(a)
		if err != nil {
			t.Fatalf("%s:%d: context %q: %v", v.file, v.line, a, err)
		}
		ctx[r.Address] = val
	}
	return ctx
}

// TestVectors decodes every line of the shared register vectors and of the
// extra vectors and compares each published field with the JSON that
// `hwpprobe decode --json` prints for it.
func TestVectors(t *testing.T) {
	var all []vector
	for _, f := range []string{"testdata/registers.tsv", "testdata/vectors-extra.tsv"} {
		vs := readVectors(t, f)
		if len(vs) == 0 {
			t.Fatalf("%s: no vectors", f)
		}
		all = append(all, vs...)
	}
	for _, v := range all {
		r, err := Lookup(v.reg)
		if err != nil {
			t.Errorf("%s:%d: %v", v.file, v.line, err)
			continue
		}
		raw, err := ParseValue(v.raw)
		if err != nil {
			t.Errorf("%s:%d: %v", v.file, v.line, err)
			continue
		}
		d := r.Decode(raw, parseContext(t, v))
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("%s:%d: %v", v.file, v.line, err)
		}
		var j struct {
			Fields map[string]any `json:"fields"`
		}
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatalf("%s:%d: %v in %s", v.file, v.line, err, b)
		}
		got := map[string]any{}
		for k := range v.want {
			if x, ok := j.Fields[k]; ok {
				got[k] = x
			} else {
				got[k] = "<missing>"
			}
		}
		if diff := cmp.Diff(v.want, got); diff != "" {
			t.Errorf("%s:%d: %s=%s (%s) -want +got:\n%s", v.file, v.line, v.reg, v.raw, v.source, diff)
		}
	}
}
