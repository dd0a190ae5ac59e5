// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
)

// One output model for every command that prints results (docs/outputs
// in README.md): --format F chooses what goes to standard output, and
// -o [FORMAT=]FILE, repeatable, writes one format to one file, FORMAT
// from the prefix or else from FILE's extension. A command whose main
// product is a file (diff's experiment, record's recording) takes that
// file as -o FILE when FILE says no format the command writes, so its
// older invocations keep working. The older flags (--json, --markdown
// FILE, --ktap, --csv ...) remain as aliases of --format and -o.

// Format is an output format.
type Format string

// The formats.
const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "markdown"
	HTML     Format = "html"
	KTAP     Format = "ktap"
	JUnit    Format = "junit"
	CSV      Format = "csv"
	Parquet  Format = "parquet"
)

// formats are every Format, for FORMAT= prefixes.
var formats = []Format{Text, JSON, Markdown, HTML, KTAP, JUnit, CSV, Parquet}

// extensions map a file's extension to its format.
var extensions = map[string]Format{
	".txt": Text, ".json": JSON, ".md": Markdown, ".markdown": Markdown, ".html": HTML, ".htm": HTML,
	".ktap": KTAP, ".tap": KTAP, ".xml": JUnit, ".csv": CSV, ".parquet": Parquet,
}

// OutputSpec declares what a command writes.
type OutputSpec struct {
	// Command names the command in messages.
	Command string
	// Stdout are the formats --format takes; the first is the default.
	Stdout []Format
	// Files are the formats -o writes to a file.
	Files []Format
	// Main, when not "", is the command's main file (as "experiment
	// file"): -o FILE is that file when FILE has no FORMAT= prefix and
	// its extension names none of Files.
	Main string
	// Single: the command writes one output, to standard output or, with
	// -o FILE, to FILE instead; FILE's format is its prefix, else
	// --format's when given, else its extension's, else the default.
	Single bool
}

// FileOutput is one file -o (or an alias) asks for.
type FileOutput struct {
	Format Format
	Path   string
	Flag   string // the option that gave it, for messages: "-o", "--json"
}

// Outputs are a command's parsed --format and -o. Resolve checks them
// and fills Format, Files and Main.
type Outputs struct {
	spec OutputSpec
	// Format is what goes to standard output.
	Format Format
	// Files are the files to write, in the order given.
	Files []FileOutput
	// Main is the main file -o named ("" none).
	Main string

	format     Format // --format or an alias
	formatFlag string // the flag that set format, "" not given
	raw        []FileOutput
	err        error // a contradiction found while parsing
}

// AddOutputs adds --format and -o, --output to fs for spec; mainUsage,
// when spec.Main is set, describes the main file in -o's usage.
func AddOutputs(fs *pflag.FlagSet, spec OutputSpec, mainUsage string) *Outputs {
	o := &Outputs{spec: spec}
	fs.Var(&formatValue{o: o, flag: "--format"}, "format", "what to print on standard output: "+formatList(spec.Stdout)+" (default "+string(spec.Stdout[0])+")")
	usage := "write FORMAT to FILE (repeatable; FORMAT from the prefix or FILE's extension): " + formatList(spec.Files)
	switch {
	case spec.Single:
		usage = "write to FILE instead of standard output (its format: FORMAT=, else --format, else FILE's extension)"
	case spec.Main != "" && len(spec.Files) == 0:
		usage = mainUsage
	case spec.Main != "":
		usage += "; any other FILE: " + mainUsage
	}
	if len(spec.Files) > 0 || spec.Main != "" || spec.Single {
		fs.VarP(&outputValue{o: o, flag: "-o"}, "output", "o", usage)
	}
	return o
}

// FormatAlias adds name, a bool flag that is --format f.
func (o *Outputs) FormatAlias(fs *pflag.FlagSet, name string, f Format) {
	fs.Var(&formatValue{o: o, flag: "--" + name, fixed: f}, name, "alias of --format "+string(f))
	fs.Lookup(name).NoOptDefVal = "true"
}

// FileAlias adds name, a FILE flag that is -o f=FILE.
func (o *Outputs) FileAlias(fs *pflag.FlagSet, name string, f Format) {
	fs.Var(&outputValue{o: o, flag: "--" + name, fixed: f}, name, "alias of -o "+string(f)+"=FILE")
}

// Resolve checks the flags against the spec: a format the command does
// not write, a -o whose format cannot be told, two outputs of one format
// are usage errors. (Two outputs that are one file are iocheck's to
// refuse, by device and inode.)
func (o *Outputs) Resolve() error {
	cmd := o.spec.Command
	if o.err != nil {
		return o.err
	}
	o.Format = o.spec.Stdout[0]
	if o.formatFlag != "" {
		if !slices.Contains(o.spec.Stdout, o.format) {
			return Usagef("%s: %s %q: not a format it prints (%s)", cmd, o.formatFlag, o.format, formatList(o.spec.Stdout))
		}
		o.Format = o.format
	}
	if o.spec.Single {
		return o.resolveSingle()
	}
	o.Files, o.Main = nil, ""
	seen := map[Format]FileOutput{}
	for _, r := range o.raw {
		f, err := o.fileFormat(r)
		if err != nil {
			return err
		}
		if f == "" {
			if o.Main != "" {
				return Usagef("%s: -o %s and -o %s: one %s only", cmd, o.Main, r.Path, o.spec.Main)
			}
			o.Main = r.Path
			continue
		}
		if prev, ok := seen[f]; ok {
			return Usagef("%s: %s %s and %s %s both write %s; give one", cmd, prev.Flag, prev.Path, r.Flag, r.Path, f)
		}
		r.Format = f
		seen[f] = r
		o.Files = append(o.Files, r)
	}
	return nil
}

// resolveSingle resolves the one output of a Single command.
func (o *Outputs) resolveSingle() error {
	o.Files = nil
	if len(o.raw) > 1 {
		return Usagef("%s: one output only (-o %s and -o %s)", o.spec.Command, o.raw[0].Path, o.raw[1].Path)
	}
	if len(o.raw) == 0 {
		return nil
	}
	r := o.raw[0]
	switch ext := extensions[strings.ToLower(filepath.Ext(r.Path))]; {
	case r.Format != "":
	case o.formatFlag != "":
		r.Format = o.format
	case slices.Contains(o.spec.Stdout, ext):
		r.Format = ext
	default:
		r.Format = o.spec.Stdout[0]
	}
	if !slices.Contains(o.spec.Stdout, r.Format) {
		return Usagef("%s: %s %s=%s: not a format it writes (%s)", o.spec.Command, r.Flag, r.Format, r.Path, formatList(o.spec.Stdout))
	}
	o.Format = r.Format
	o.Files = []FileOutput{r}
	return nil
}

// Check resolves the flags (Resolve), then checks the -o files against
// inputs, streams and each other (CheckFiles, in the spec's command's
// name), before the command reads or changes anything.
func (o *Outputs) Check(inputs []string, streams []iocheck.Stream) error {
	if err := o.Resolve(); err != nil {
		return err
	}
	return CheckFiles(o.spec.Command, iocheck.Set{Inputs: inputs, Outputs: o.IOCheck(), Streams: streams})
}

// fileFormat is the format of the -o r, or "" for the main file.
func (o *Outputs) fileFormat(r FileOutput) (Format, error) {
	cmd := o.spec.Command
	if r.Format != "" {
		if !slices.Contains(o.spec.Files, r.Format) {
			return "", Usagef("%s: %s %s=%s: not a format it writes to a file (%s)", cmd, r.Flag, r.Format, r.Path, formatList(o.spec.Files))
		}
		return r.Format, nil
	}
	ext, known := extensions[strings.ToLower(filepath.Ext(r.Path))]
	switch {
	case known && slices.Contains(o.spec.Files, ext):
		return ext, nil
	case o.spec.Main != "":
		return "", nil
	case known:
		return "", Usagef("%s: %s %s: %s is not a format it writes to a file (%s)", cmd, r.Flag, r.Path, ext, formatList(o.spec.Files))
	}
	return "", Usagef("%s: %s %s: say the format as FORMAT=%s (%s)", cmd, r.Flag, r.Path, r.Path, formatList(o.spec.Files))
}

// File returns the file to write in format f, "" for none.
func (o *Outputs) File(f Format) string {
	for _, fo := range o.Files {
		if fo.Format == f {
			return fo.Path
		}
	}
	return ""
}

// IOCheck returns the files for iocheck, named by the option that gave
// each.
func (o *Outputs) IOCheck() []iocheck.Output {
	var out []iocheck.Output
	for _, fo := range o.Files {
		out = append(out, iocheck.Output{Name: fo.Flag, Path: fo.Path})
	}
	return out
}

// Changed reports whether any -o or --format (or an alias) was given.
func (o *Outputs) Changed() bool { return o.formatFlag != "" || len(o.raw) > 0 }

// formatList names the formats fs, "none" for none.
func formatList(fs []Format) string {
	if len(fs) == 0 {
		return "none"
	}
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// setFormat records --format (or an alias) f from flag; two that differ
// contradict each other.
func (o *Outputs) setFormat(flag string, f Format) {
	if o.formatFlag != "" && o.format != f && o.err == nil {
		o.err = Usagef("%s: %s and %s contradict each other", o.spec.Command, o.formatFlag, flag)
	}
	o.format, o.formatFlag = f, flag
}

// formatValue is --format, or a bool alias of one format (fixed).
type formatValue struct {
	o     *Outputs
	flag  string
	fixed Format
	set   bool
}

func (v *formatValue) String() string {
	if v.fixed != "" {
		return fmt.Sprint(v.set)
	}
	return string(v.o.format)
}

func (v *formatValue) Type() string {
	if v.fixed != "" {
		return "bool"
	}
	return "format"
}

// IsBoolFlag makes an alias a flag that takes no value.
func (v *formatValue) IsBoolFlag() bool { return v.fixed != "" }

func (v *formatValue) Set(s string) error {
	if v.fixed == "" {
		v.o.setFormat(v.flag, Format(s))
		return nil
	}
	switch s {
	case "true":
		v.set = true
		v.o.setFormat(v.flag, v.fixed)
	case "false":
		v.set = false
	default:
		return fmt.Errorf("not true or false")
	}
	return nil
}

// outputValue is -o, or a FILE alias of one format (fixed).
type outputValue struct {
	o     *Outputs
	flag  string
	fixed Format
}

func (v *outputValue) String() string { return "" }

func (v *outputValue) Type() string {
	if v.fixed != "" {
		return "FILE"
	}
	return "[FORMAT=]FILE"
}

func (v *outputValue) Set(s string) error {
	if s == "" {
		return fmt.Errorf("an empty file name")
	}
	r := FileOutput{Path: s, Flag: v.flag, Format: v.fixed}
	if name, path, ok := strings.Cut(s, "="); ok && v.fixed == "" && slices.Contains(formats, Format(name)) {
		if path == "" {
			return fmt.Errorf("%s= names no file", name)
		}
		r.Format, r.Path = Format(name), path
	}
	v.o.raw = append(v.o.raw, r)
	return nil
}
