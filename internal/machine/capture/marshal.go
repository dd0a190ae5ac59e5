// SPDX-License-Identifier: Apache-2.0

package capture

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hwpprobe/hwpprobe/internal/emu"
)

// Marshal returns d as a YAML description: provenance first, registers
// and CPUID leaves one per line in hex, file contents as literal blocks
// where YAML can hold them byte for byte (quoted strings otherwise).
func Marshal(d *emu.Description) ([]byte, error) {
	b, err := marshalRaw(d)
	if err != nil {
		return nil, err
	}
	return checkBack(d, b)
}

func marshalRaw(d *emu.Description) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(d); err != nil {
		return nil, fmt.Errorf("encode description: %w", err)
	}
	dropZero(&n)
	setContents(&n, d.Files)
	moveFirst(&n, "name", "summary", "captured", "unreadable")
	restyle(&n, "")
	comment(&n, "cores", "CPU count only: the topology served is the captured sysfs and CPUID below.")
	comment(&n, "files", "Served verbatim and read-only by hwpemu; no kernel rule is applied to a capture.")
	var b bytes.Buffer
	b.WriteString("# A machine captured by `hwpprobe capture` (docs/capture.md): every file, CPUID\n" +
		"# leaf and register below is what the machine answered; `unreadable` lists what\n" +
		"# could not be read. Serve it with: hwpemu run FILE -- CMD\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, fmt.Errorf("encode description: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode description: %w", err)
	}
	return b.Bytes(), nil
}

func checkBack(d *emu.Description, b []byte) ([]byte, error) {
	back, err := emu.ParseDescription(b)
	if err != nil {
		return nil, fmt.Errorf("capture wrote a description it cannot read back (a bug): %w", err)
	}
	if !reflect.DeepEqual(back.Files, d.Files) || !reflect.DeepEqual(back.CPUID, d.CPUID) || !reflect.DeepEqual(back.MSRs, d.MSRs) {
		return nil, errors.New("capture wrote a description that reads back different (a bug)")
	}
	return b, nil
}

// dropZero removes top-level entries that hold only zero values (the
// model's power and RAPL settings, which a capture does not use).
func dropZero(n *yaml.Node) {
	m := n
	var keep []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !isZero(m.Content[i+1]) || slices.Contains([]string{"name", "vendor", "family", "model", "packages", "cores", "core_types", "tsc_mhz"}, m.Content[i].Value) {
			keep = append(keep, m.Content[i], m.Content[i+1])
		}
	}
	m.Content = keep
}

func isZero(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value == "" || n.Value == "0" || n.Value == "false"
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if !isZero(n.Content[i]) {
				return false
			}
		}
		return true
	case yaml.SequenceNode:
		return len(n.Content) == 0
	}
	return false
}

// moveFirst puts the given top-level keys first, in that order.
func moveFirst(m *yaml.Node, keys ...string) {
	var first, rest []*yaml.Node
	for _, k := range keys {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				first = append(first, m.Content[i], m.Content[i+1])
			}
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !slices.Contains(keys, m.Content[i].Value) {
			rest = append(rest, m.Content[i], m.Content[i+1])
		}
	}
	m.Content = append(first, rest...)
}

func comment(m *yaml.Node, key, text string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i].HeadComment = text
		}
	}
}

// hexKeys are the fields written in hex.
var hexKeys = []string{"msr", "value", "leaf", "subleaf", "regs", "microcode", "unit_msr", "limit_msr"}

// restyle sets the styles Marshal promises, below the key parent.
func restyle(n *yaml.Node, parent string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			restyle(n.Content[i+1], n.Content[i].Value)
		}
	case yaml.SequenceNode:
		if slices.Contains([]string{"flags", "regs", "devices", "offline"}, parent) {
			n.Style = yaml.FlowStyle
		}
		for _, c := range n.Content {
			if c.Kind == yaml.MappingNode && slices.Contains([]string{"msrs", "cpuid", "cores", "unreadable"}, parent) {
				c.Style = yaml.FlowStyle
			}
			restyle(c, parent)
		}
	case yaml.ScalarNode:
		switch {
		case slices.Contains(hexKeys, parent) && n.Tag == "!!int":
			if v, err := strconv.ParseUint(n.Value, 10, 64); err == nil {
				n.Value = "0x" + strconv.FormatUint(v, 16)
			}
		case parent == "content" && strings.Contains(n.Value, "\n") && !startsBlank(n.Value):
			n.Style = yaml.LiteralStyle
		case parent == "content":
			n.Style = yaml.DoubleQuotedStyle
		}
	}
}

// startsBlank reports whether s starts with white space (or is empty), which
// a literal block cannot hold as it is.
func startsBlank(s string) bool {
	return s == "" || strings.ContainsRune(" \t\n\r", rune(s[0]))
}

// setContents puts the files' contents into their nodes as they are:
// yaml.v3's Node.Encode loses some (a lone newline becomes empty).
func setContents(m *yaml.Node, files []emu.FileEntry) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "files" {
			continue
		}
		for j, item := range m.Content[i+1].Content {
			for k := 0; k+1 < len(item.Content); k += 2 {
				if item.Content[k].Value == "content" && j < len(files) {
					item.Content[k+1].Value, item.Content[k+1].Tag = files[j].Content, "!!str"
				}
			}
		}
	}
}
