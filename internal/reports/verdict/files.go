// SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
)

// Files are the files a plan's verdicts go to besides the KTAP on
// standard output: JUnit XML and JSON. They are created (as temporary
// files in the outputs' directories) before the checks start, so that an
// unwritable path stops a command before it changes anything, and
// appear whole, or not at all, when Write completes.
type Files struct {
	name        string
	junit, json *atomicfile.File
}

// OpenFiles creates the outputs junit and json ("" for none) for the plan
// name; inputs are the files the command reads, which an output may not
// be.
func OpenFiles(name, junit, json string, inputs []string) (*Files, error) {
	f := &Files{name: name}
	for _, o := range []struct {
		flag, path string
		dst        **atomicfile.File
	}{{"--junit", junit, &f.junit}, {"--json", json, &f.json}} {
		if o.path == "" {
			continue
		}
		af, err := atomicfile.Create(o.path, atomicfile.Options{Inputs: inputs, Replace: true})
		if err != nil {
			f.Abort()
			return nil, fmt.Errorf("%s: %w", o.flag, err)
		}
		*o.dst = af
	}
	return f, nil
}

// Chown gives the files to uid and gid (the invoking user under sudo).
func (f *Files) Chown(uid, gid int) error {
	for _, af := range []*atomicfile.File{f.junit, f.json} {
		if af == nil {
			continue
		}
		if err := af.Chown(uid, gid); err != nil {
			return fmt.Errorf("give %s to uid %d: %w", af.Name(), uid, err)
		}
	}
	return nil
}

// Write writes the cases to the files and commits them.
func (f *Files) Write(cases []*Case) error {
	var errs []error
	commit := func(af *atomicfile.File, write func(io.Writer) error) {
		if af == nil {
			return
		}
		if err := write(af); err != nil {
			af.Abort()
			errs = append(errs, fmt.Errorf("write %s: %w", af.Name(), err))
			return
		}
		if err := af.Commit(); err != nil {
			errs = append(errs, err)
		}
		af.Close()
	}
	commit(f.junit, func(w io.Writer) error { return WriteJUnit(w, f.name, cases) })
	commit(f.json, func(w io.Writer) error { return WriteJSON(w, cases) })
	return errors.Join(errs...)
}

// Abort removes the files not yet written.
func (f *Files) Abort() {
	for _, af := range []*atomicfile.File{f.junit, f.json} {
		if af != nil {
			af.Abort()
		}
	}
}

// caseJSON is a case as WriteJSON writes it.
type caseJSON struct {
	Name   string      `json:"name"`
	Result string      `json:"result"`
	Reason string      `json:"reason,omitempty"`
	Diag   []string    `json:"diag,omitempty"`
	Cases  []*caseJSON `json:"cases,omitempty"`
}

func toJSON(c *Case) *caseJSON {
	j := &caseJSON{Name: c.Name, Result: c.Outcome().String(), Reason: c.Reason, Diag: c.Diag}
	for _, s := range c.Cases {
		j.Cases = append(j.Cases, toJSON(s))
	}
	return j
}

// Schema names WriteJSON's document (docs/schemas/conform.schema.json).
const Schema = "hwpprobe-conform/1"

// Document is the Go form of WriteJSON's document, for its schema.
type Document struct {
	Schema string      `json:"schema"`
	Exit   int         `json:"exit"`
	Cases  []*caseJSON `json:"cases"`
}

// WriteJSON writes the cases as JSON: {"schema": Schema, "exit": N,
// "cases": [{name, result (pass, fail, skip), reason, diag, cases}]}.
func WriteJSON(w io.Writer, cases []*Case) error {
	out := Document{Schema: Schema, Exit: Exit(cases), Cases: []*caseJSON{}}
	for _, c := range cases {
		out.Cases = append(out.Cases, toJSON(c))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
