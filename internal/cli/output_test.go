// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// diffSpec is diff's: a report on stdout, report files, the experiment
// file as its main file, and the older flags as aliases.
var diffSpec = OutputSpec{Command: "diff", Stdout: []Format{Text, KTAP}, Files: []Format{Markdown, JSON, HTML, JUnit}, Main: "experiment file"}

func parseOutputs(t *testing.T, spec OutputSpec, args []string) (*Outputs, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := AddOutputs(fs, spec, "the main file")
	o.FormatAlias(fs, "ktap", KTAP)
	o.FormatAlias(fs, "json-out", JSON)
	o.FileAlias(fs, "markdown", Markdown)
	o.FileAlias(fs, "json", JSON)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return o, o.Resolve()
}

func TestOutputs(t *testing.T) {
	snapshot := OutputSpec{Command: "snapshot", Stdout: []Format{Text, JSON}, Files: []Format{Text, JSON}}
	export := OutputSpec{Command: "export", Stdout: []Format{CSV, Parquet}, Single: true}
	tests := []struct {
		name   string
		spec   OutputSpec
		args   []string
		format Format
		files  []FileOutput
		main   string
		err    string // error substring; "" for accepted
	}{
		{"default", diffSpec, nil, Text, nil, "", ""},
		{"extension", diffSpec, []string{"-o", "r.md", "-o", "r.JSON"}, Text,
			[]FileOutput{{Markdown, "r.md", "-o"}, {JSON, "r.JSON", "-o"}}, "", ""},
		{"prefix", diffSpec, []string{"-o", "markdown=report", "--output=junit=x.txt"}, Text,
			[]FileOutput{{Markdown, "report", "-o"}, {JUnit, "x.txt", "-o"}}, "", ""},
		{"prefix that is no format is a path", diffSpec, []string{"-o", "a=b.hwpr"}, Text, nil, "a=b.hwpr", ""},
		{"main file fallback", diffSpec, []string{"-o", "exp.hwpr", "-o", "r.html"}, Text,
			[]FileOutput{{HTML, "r.html", "-o"}}, "exp.hwpr", ""},
		{"main file with an extension not written", diffSpec, []string{"-o", "exp.csv"}, Text, nil, "exp.csv", ""},
		{"alias of -o", diffSpec, []string{"--markdown", "r.txt", "--json", "j"}, Text,
			[]FileOutput{{Markdown, "r.txt", "--markdown"}, {JSON, "j", "--json"}}, "", ""},
		{"format", diffSpec, []string{"--format", "ktap"}, KTAP, nil, "", ""},
		{"alias of --format", diffSpec, []string{"--ktap"}, KTAP, nil, "", ""},
		{"alias and --format agree", diffSpec, []string{"--ktap", "--format", "ktap"}, KTAP, nil, "", ""},
		{"alias and --format contradict", diffSpec, []string{"--ktap", "--format", "text"}, "", nil, "", "diff: --ktap and --format contradict each other"},
		{"unsupported format", diffSpec, []string{"--format", "json"}, "", nil, "", "diff: --format \"json\": not a format it prints (text, ktap)"},
		{"unknown format", diffSpec, []string{"--format", "yaml"}, "", nil, "", `--format "yaml": not a format it prints`},
		{"format names are lower case", diffSpec, []string{"--format", "KTAP"}, "", nil, "", `--format "KTAP": not a format it prints`},
		{"empty format", diffSpec, []string{"--format", ""}, "", nil, "", `--format "": not a format it prints`},
		{"unsupported prefix", diffSpec, []string{"-o", "csv=r"}, "", nil, "", "diff: -o csv=r: not a format it writes to a file (markdown, json, html, junit)"},
		{"empty prefix file", diffSpec, []string{"-o", "json="}, "", nil, "", "json= names no file"},
		{"duplicate format", diffSpec, []string{"-o", "a.json", "--json", "b"}, "", nil, "", "diff: -o a.json and --json b both write json; give one"},
		{"duplicate main file", diffSpec, []string{"-o", "a.hwpr", "-o", "b.hwpr"}, "", nil, "", "diff: -o a.hwpr and -o b.hwpr: one experiment file only"},
		{"no main file: unknown extension", snapshot, []string{"-o", "s.out"}, "", nil, "", "snapshot: -o s.out: say the format as FORMAT=s.out (text, json)"},
		{"no main file: extension not written", snapshot, []string{"-o", "s.md"}, "", nil, "", "snapshot: -o s.md: markdown is not a format it writes to a file"},
		{"stdout and file", snapshot, []string{"--format", "json", "-o", "s.txt"}, JSON, []FileOutput{{Text, "s.txt", "-o"}}, "", ""},
		{"single: extension", export, []string{"-o", "x.parquet"}, Parquet, []FileOutput{{Parquet, "x.parquet", "-o"}}, "", ""},
		{"single: --format before extension", export, []string{"--format", "parquet", "-o", "x.csv"}, Parquet, []FileOutput{{Parquet, "x.csv", "-o"}}, "", ""},
		{"single: prefix", export, []string{"--format", "csv", "-o", "parquet=x"}, Parquet, []FileOutput{{Parquet, "x", "-o"}}, "", ""},
		{"single: default", export, []string{"-o", "x"}, CSV, []FileOutput{{CSV, "x", "-o"}}, "", ""},
		{"single: two", export, []string{"-o", "x", "-o", "y"}, "", nil, "", "export: one output only (-o x and -o y)"},
		{"single: unsupported prefix", export, []string{"-o", "json=x"}, "", nil, "", "export: -o json=x: not a format it writes (csv, parquet)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseOutputs(t, tt.spec, tt.args)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				if pe := (UsageError{}); !errors.As(err, &pe) && !strings.Contains(err.Error(), "invalid argument") {
					t.Errorf("error %v is not a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.files, o.Files); d != "" || o.Format != tt.format || o.Main != tt.main {
				t.Errorf("format %q main %q, want %q %q; files (-want +got):\n%s", o.Format, o.Main, tt.format, tt.main, d)
			}
		})
	}
}

func TestRender(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, []byte("input"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := OutputSpec{Command: "snapshot", Stdout: []Format{Text, JSON}, Files: []Format{Text, JSON}}
	render := func(w io.Writer, f Format) error { _, err := io.WriteString(w, "as "+string(f)+"\n"); return err }
	o, err := parseOutputs(t, spec, []string{"-o", filepath.Join(dir, "s.json"), "-o", "text=" + filepath.Join(dir, "s")})
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := o.Render(&stdout, []string{in}, render); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"stdout": stdout.String()}
	for _, n := range []string{"s.json", "s"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		got[n] = string(b)
	}
	if d := cmp.Diff(map[string]string{"stdout": "as text\n", "s.json": "as json\n", "s": "as text\n"}, got); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}
	// Never over an input.
	o, err = parseOutputs(t, spec, []string{"-o", "text=" + in})
	if err != nil {
		t.Fatal(err)
	}
	var ue UsageError
	if err := o.Render(io.Discard, []string{in}, render); !errors.As(err, &ue) {
		t.Errorf("writing over the input: %v, want a usage error", err)
	}
	if b, _ := os.ReadFile(in); string(b) != "input" {
		t.Errorf("the input was overwritten: %q", b)
	}
}
