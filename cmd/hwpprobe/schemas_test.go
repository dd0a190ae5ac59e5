// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/reports/report"
	"github.com/hwpprobe/hwpprobe/internal/schema"
)

var updateSchemas = flag.Bool("update-schemas", false, "rewrite docs/schemas/ from the Go types")

// schemaDir is where the schema files are committed.
const schemaDir = "../../docs/schemas"

// TestSchemasCommitted: each file under docs/schemas/ is what the Go type
// of its output gives now, so a field added to an output without its
// schema fails here. `go test ./cmd/hwpprobe -run TestSchemasCommitted
// -update-schemas` rewrites them.
func TestSchemasCommitted(t *testing.T) {
	want := map[string]bool{}
	for _, o := range jsonOutputs {
		want[o.file] = true
		b, err := schema.Generate(o.name, o.title, o.typ)
		if err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		path := filepath.Join(schemaDir, o.file)
		if *updateSchemas {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (make it with -update-schemas)", err)
		}
		if d := cmp.Diff(string(got), string(b)); d != "" {
			t.Errorf("%s differs from what %s's type gives (-committed +now; -update-schemas rewrites it):\n%s", path, o.name, d)
		}
		if _, err := schema.Compile(o.file, got); err != nil {
			t.Error(err)
		}
	}
	ents, err := os.ReadDir(schemaDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !want[e.Name()] {
			t.Errorf("%s/%s is no output's schema", schemaDir, e.Name())
		}
	}
}

var validators struct {
	sync.Mutex
	m map[string]*schema.Validator
}

// checkSchema validates doc, a command's real output, against the
// committed schema of the output named name (jsonOutputs): every test that
// reads a command's JSON calls it. "hwpprobe-diff/1" is checked against
// the diff schema, which covers both versions.
func checkSchema(t *testing.T, name string, doc []byte) {
	t.Helper()
	if name == report.Schema {
		name = report.SchemaN
	}
	validators.Lock()
	defer validators.Unlock()
	v := validators.m[name]
	if v == nil {
		i := slices.IndexFunc(jsonOutputs, func(o jsonOutput) bool { return o.name == name })
		if i < 0 {
			t.Fatalf("no JSON output is named %q", name)
		}
		b, err := os.ReadFile(filepath.Join(schemaDir, jsonOutputs[i].file))
		if err != nil {
			t.Fatal(err)
		}
		if v, err = schema.Compile(jsonOutputs[i].file, b); err != nil {
			t.Fatal(err)
		}
		if validators.m == nil {
			validators.m = map[string]*schema.Validator{}
		}
		validators.m[name] = v
	}
	if err := v.Validate(doc); err != nil {
		t.Errorf("%s output does not follow docs/schemas/: %v\n%s", name, err, doc)
	}
}

// TestMatrixProfilesSchema validates matrix --json and profiles --json
// on the emulated 165U (the other outputs are validated by the tests that
// read them: decode, snapshot, trace, stat, diff, explain).
func TestMatrixProfilesSchema(t *testing.T) {
	dir := t.TempDir()
	runEmu(t, time.Minute, "run", "mtl-165u", "--", "sh", "-c",
		hwpprobeBin+" matrix performance powersave:epp=performance --json > "+dir+"/m.json && "+
			hwpprobeBin+" profiles --json > "+dir+"/p.json")
	for _, c := range []struct{ name, file string }{{"hwpprobe-matrix/1", "m.json"}, {"hwpprobe-profiles/1", "p.json"}} {
		b, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		checkSchema(t, c.name, b)
	}
}
