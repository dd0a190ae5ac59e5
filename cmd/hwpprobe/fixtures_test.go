package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// v1Fixtures are recordings written by the last hwpprobe that wrote format
// 1.0, next to what its show and export printed for them.
const v1Fixtures = "../../recording/testdata/v1"

// TestV1Fixtures: show and export print byte for byte what the version
// that wrote the files printed.
func TestV1Fixtures(t *testing.T) {
	recs, err := filepath.Glob(filepath.Join(v1Fixtures, "*.rec"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("no fixtures in %s: %v", v1Fixtures, err)
	}
	for _, rec := range recs {
		t.Run(filepath.Base(rec), func(t *testing.T) { checkFixtureOutput(t, rec, strings.TrimSuffix(rec, ".rec")) })
	}
}

// checkFixtureOutput runs show and export on rec and compares their
// standard output with golden+".show" and golden+".csv".
func checkFixtureOutput(t *testing.T, rec, golden string) {
	t.Helper()
	for _, c := range []struct {
		args []string
		ext  string
	}{
		{[]string{"show", rec}, ".show"},
		{[]string{"export", "--csv", rec}, ".csv"},
	} {
		want, err := os.ReadFile(golden + c.ext)
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runBin(t, c.args...)
		if code != 0 {
			t.Errorf("hwpprobe %v: exit %d, stderr %q", c.args, code, stderr)
		}
		if diff := cmp.Diff(string(want), stdout); diff != "" {
			t.Errorf("hwpprobe %v (-want +got):\n%s", c.args, diff)
		}
	}
}
