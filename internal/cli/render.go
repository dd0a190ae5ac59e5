// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
)

// Render writes a command's result in o.Format to stdout and in each
// -o file's format to that file (replaced whole, never one of inputs),
// through render, which writes the result in one format. A Single
// command's -o file takes the place of stdout.
func (o *Outputs) Render(stdout io.Writer, inputs []string, render func(io.Writer, Format) error) error {
	if len(o.Files) == 0 || !o.spec.Single {
		if err := render(stdout, o.Format); err != nil {
			return err
		}
	}
	return o.WriteFiles(inputs, render)
}

// WriteFiles writes the -o files through render as Render does, but
// those of the formats in except, which the command writes otherwise.
func (o *Outputs) WriteFiles(inputs []string, render func(io.Writer, Format) error, except ...Format) error {
	for _, fo := range o.Files {
		if slices.Contains(except, fo.Format) {
			continue
		}
		f, err := atomicfile.Create(fo.Path, atomicfile.Options{Inputs: inputs, Replace: true})
		if errors.Is(err, atomicfile.ErrSameFile) {
			return Usagef("%s: %s %w", o.spec.Command, fo.Flag, err)
		}
		if err != nil {
			return fmt.Errorf("%s: cannot create %s: %w", o.spec.Command, fo.Path, err)
		}
		if err := render(f, fo.Format); err != nil {
			f.Abort()
			return fmt.Errorf("%s: write %s: %w", o.spec.Command, fo.Path, err)
		}
		if err := f.Commit(); err != nil {
			return fmt.Errorf("%s: %w", o.spec.Command, err)
		}
	}
	return nil
}

// WriteJSON writes v as indented JSON, as every command's JSON output.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
