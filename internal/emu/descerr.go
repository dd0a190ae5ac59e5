// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// DescriptionError is a description's first problem: the file, the line,
// the field (a path such as cores[1].count; "yaml" for a syntax error)
// and what is wrong. It wraps ErrDescription. Error() gives one line,
// FILE:LINE: field: message, with control characters escaped.
type DescriptionError struct {
	File  string // "" until Load names the file
	Line  int    // 1-based
	Field string
	Err   error
}

// Error returns FILE:LINE: field: message on one line.
func (e *DescriptionError) Error() string {
	file := e.File
	if file == "" {
		file = "description"
	}
	return cli.OneLine(fmt.Sprintf("%s:%d: %s: %v", file, e.Line, e.Field, e.Err))
}

// Unwrap returns ErrDescription and the underlying error.
func (e *DescriptionError) Unwrap() []error { return []error{ErrDescription, e.Err} }

// fieldError is a validation error about one field.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }

func fieldErrorf(field, format string, a ...any) error {
	return &fieldError{field: field, err: fmt.Errorf(format, a...)}
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// parserProblems are the messages of yaml.v3's parser (not scanner)
// errors, whose "line N" is counted from 0 (yaml.v3 decode.go,
// parser.fail adds 1 only for scanner errors).
var parserProblems = []string{"did not find expected <document start>", "did not find expected node content",
	"did not find expected key", "did not find expected '-' indicator", "did not find expected ',' or ']'",
	"did not find expected ',' or '}'"}

// yamlErrorLine splits a yaml.v3 message "yaml: line N: msg" into the
// 1-based line and msg (line 1 when the message names none: yaml.v3 omits
// line 0).
func yamlErrorLine(msg string) (int, string) {
	msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n")
	msg = strings.TrimSpace(strings.SplitN(msg, "\n", 2)[0])
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if slices.Contains(parserProblems, m[2]) {
			n++
		}
		return n, m[2]
	}
	return 1, strings.TrimPrefix(msg, "yaml: ")
}

var unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type \S+$`)

// decodeError turns the strict decoder's first complaint into a
// DescriptionError naming the field at its line.
func decodeError(root *yaml.Node, data []byte, err error) error {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	line, text := yamlErrorLine(msg)
	if line > lastLine(data) {
		line = lastLine(data)
	}
	field := fieldAt(root.Content[0], line, "")
	if m := unknownFieldRE.FindStringSubmatch(text); m != nil {
		text = "unknown field"
		if !strings.HasSuffix(field, m[1]) {
			field = joinField(field, m[1])
		}
	}
	if field == "" {
		field = "yaml"
	}
	return &DescriptionError{Line: line, Field: field, Err: errors.New(text)}
}

// fieldAt returns the path of the deepest key or sequence item on line.
func fieldAt(n *yaml.Node, line int, prefix string) string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := joinField(prefix, k.Value)
			if f := fieldAt(v, line, p); f != "" {
				return f
			}
			if k.Line == line {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", prefix, i)
			if f := fieldAt(v, line, p); f != "" {
				return f
			}
			if v.Line == line {
				return p
			}
		}
	}
	return ""
}

func joinField(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

var fieldStepRE = regexp.MustCompile(`^([^.\[]*)((?:\[\d+\])*)$`)

// fieldLine returns the line of the field at path (e.g. cores[1].count),
// or of its nearest present ancestor, or def when none is present.
func fieldLine(n *yaml.Node, field string, def int) int {
	line := def
	cur := n
	for _, step := range strings.Split(field, ".") {
		m := fieldStepRE.FindStringSubmatch(step)
		if m == nil || cur.Kind != yaml.MappingNode {
			return line
		}
		var next *yaml.Node
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == m[1] {
				line, next = cur.Content[i].Line, cur.Content[i+1]
				break
			}
		}
		if next == nil {
			return line
		}
		for _, idx := range strings.FieldsFunc(m[2], func(r rune) bool { return r == '[' || r == ']' }) {
			i, _ := strconv.Atoi(idx)
			if next.Kind != yaml.SequenceNode || i >= len(next.Content) {
				return line
			}
			next = next.Content[i]
			line = next.Line
		}
		cur = next
	}
	return line
}

// lastLine is the number of the file's last line (1 for an empty file).
func lastLine(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return max(n, 1)
}
