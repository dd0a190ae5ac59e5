// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultTraceFS is where the kernel's tracefs is mounted (kernel 4.1+); older
// systems have it only under /sys/kernel/debug/tracing.
const DefaultTraceFS = "/sys/kernel/tracing"

// WriteMSR is the tracepoint every kernel MSR write goes through
// (include/trace/events/msr.h, kernel 4.2+).
const WriteMSR = "msr:write_msr"

// PowerEvents are the other tracepoints that show what cpufreq drivers ask
// for: power:* (include/trace/events/power.h) matters without HWP or in
// passive mode, amd_cpu:* (drivers/cpufreq/amd-pstate-trace.h) on AMD.
var PowerEvents = []string{
	"power:pstate_sample",
	"power:cpu_frequency",
	"power:cpu_frequency_limits",
	"amd_cpu:amd_pstate_perf",
	"amd_cpu:amd_pstate_epp_perf",
}

// FindTraceFS returns the tracefs mount point under root ("/" normally):
// root/sys/kernel/tracing when it holds events/, else
// root/sys/kernel/debug/tracing. When neither does and root is "/", it mounts
// tracefs on /sys/kernel/tracing, as `trace-cmd` and `perf` do.
func FindTraceFS(root string) (string, error) {
	primary := filepath.Join(root, DefaultTraceFS)
	for _, dir := range []string{primary, filepath.Join(root, "/sys/kernel/debug/tracing")} {
		fi, err := os.Stat(filepath.Join(dir, "events"))
		if err == nil && fi.IsDir() {
			return dir, nil
		}
		if errors.Is(err, fs.ErrPermission) {
			return "", fmt.Errorf("tracefs %s: %w", dir, ErrPermission)
		}
	}
	if filepath.Clean(root) != "/" {
		return "", fmt.Errorf("no tracefs under %s: %w", root, ErrNoTraceFS)
	}
	if err := unix.Mount("nodev", primary, "tracefs", 0, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			return "", fmt.Errorf("mount tracefs on %s: %w", primary, ErrPermission)
		}
		return "", fmt.Errorf("mount tracefs on %s: %v: %w", primary, err, ErrNoTraceFS)
	}
	return primary, nil
}

// SplitEvent splits "group:name" (or "group/name") into its parts.
func SplitEvent(event string) (group, name string, err error) {
	group, name, ok := strings.Cut(event, ":")
	if !ok {
		group, name, ok = strings.Cut(event, "/")
	}
	if !ok || group == "" || name == "" || strings.ContainsAny(group+name, "/:. ") {
		return "", "", fmt.Errorf("tracepoint %q: want group:name, e.g. power:cpu_frequency: %w", event, ErrBadEvent)
	}
	return group, name, nil
}

// Field is one field of a tracepoint record, from its format file.
type Field struct {
	Name   string
	Type   string // C type as the format file gives it ("u32", "char[16]", ...)
	Offset int
	Size   int
	Signed bool
}

// Format is a tracepoint's record layout, read from
// <tracefs>/events/<group>/<name>/format. Offsets differ between kernels, so
// records are always decoded with the running kernel's format.
type Format struct {
	Group, Name string
	ID          uint16 // the record's common_type
	Fields      []Field
}

// Event returns "group:name".
func (f *Format) Event() string { return f.Group + ":" + f.Name }

// Field returns the field called name.
func (f *Format) Field(name string) (Field, bool) {
	for _, fd := range f.Fields {
		if fd.Name == name {
			return fd, true
		}
	}
	return Field{}, false
}

// ReadFormat reads and parses the format file of event ("group:name") under
// tracefs. A tracepoint the kernel lacks gives an error wrapping
// ErrTracepointMissing.
func ReadFormat(tracefs, event string) (*Format, error) {
	group, name, err := SplitEvent(event)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(tracefs, "events", group, name, "format")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tracepoint %s: no %s: %w", event, path, ErrTracepointMissing)
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("tracepoint %s: %w", event, ErrPermission)
	}
	if err != nil {
		return nil, fmt.Errorf("tracepoint %s: %w", event, err)
	}
	defer f.Close()
	format, err := parseFormat(bufio.NewScanner(f))
	if err != nil {
		return nil, fmt.Errorf("tracepoint %s: %s: %w", event, path, err)
	}
	format.Group, format.Name = group, name
	return format, nil
}

// parseFormat parses a tracefs format file:
//
//	ID: 2153
//	format:
//		field:unsigned msr;	offset:8;	size:4;	signed:0;
func parseFormat(sc *bufio.Scanner) (*Format, error) {
	var f Format
	haveID := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "ID:"); ok {
			id, err := strconv.ParseUint(strings.TrimSpace(v), 10, 16)
			if err != nil {
				return nil, fmt.Errorf("bad ID line %q: %w", line, ErrBadFormat)
			}
			f.ID, haveID = uint16(id), true
			continue
		}
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		fd, err := parseField(line)
		if err != nil {
			return nil, err
		}
		f.Fields = append(f.Fields, fd)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !haveID || len(f.Fields) == 0 {
		return nil, fmt.Errorf("no ID or no fields: %w", ErrBadFormat)
	}
	return &f, nil
}

func parseField(line string) (Field, error) {
	var fd Field
	bad := fmt.Errorf("bad field line %q: %w", line, ErrBadFormat)
	for part := range strings.SplitSeq(line, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "field":
			decl := strings.TrimSpace(v)
			i := strings.LastIndexAny(decl, " \t*")
			if i < 0 {
				return fd, bad
			}
			fd.Type, fd.Name = strings.TrimSpace(decl[:i+1]), decl[i+1:]
			if b := strings.IndexByte(fd.Name, '['); b >= 0 {
				fd.Type += fd.Name[b:]
				fd.Name = fd.Name[:b]
			}
		case "offset":
			fd.Offset, err = strconv.Atoi(v)
		case "size":
			fd.Size, err = strconv.Atoi(v)
		case "signed":
			fd.Signed = v == "1"
		}
		if err != nil {
			return fd, bad
		}
	}
	if fd.Name == "" || fd.Size <= 0 || fd.Offset < 0 {
		return fd, bad
	}
	return fd, nil
}

// CheckWriteMSRFormat checks that the kernel's msr:write_msr record has the
// layout msrtrace.c's struct write_msr_ctx assumes: msr (4 bytes) at offset
// 8, val (8) at 16, failed (4) at 24.
func CheckWriteMSRFormat(f *Format) error {
	for _, want := range []Field{{Name: "msr", Offset: 8, Size: 4}, {Name: "val", Offset: 16, Size: 8}, {Name: "failed", Offset: 24, Size: 4}} {
		got, ok := f.Field(want.Name)
		if !ok || got.Offset != want.Offset || got.Size != want.Size {
			return fmt.Errorf("%s: field %s is not %d bytes at offset %d (%+v): %w", f.Event(), want.Name, want.Size, want.Offset, got, ErrBadFormat)
		}
	}
	return nil
}

// FieldValue is one decoded field of a tracepoint record: Value is an
// int64 (signed), uint64 (unsigned) or string (char arrays).
type FieldValue struct {
	Name  string
	Value any
}

// Decode decodes raw, a record of this tracepoint, field by field; the
// common_* header fields, fields past the end of raw and dynamic
// (__data_loc) fields are left out.
func (f *Format) Decode(raw []byte) []FieldValue {
	out := make([]FieldValue, 0, len(f.Fields))
	le := binary.LittleEndian
	for _, fd := range f.Fields {
		if strings.HasPrefix(fd.Name, "common_") || strings.HasPrefix(fd.Type, "__data_loc") || fd.Offset+fd.Size > len(raw) {
			continue
		}
		b := raw[fd.Offset : fd.Offset+fd.Size]
		var u uint64
		switch {
		case strings.HasPrefix(fd.Type, "char") && strings.Contains(fd.Type, "["):
			n := bytes.IndexByte(b, 0)
			if n < 0 {
				n = len(b)
			}
			out = append(out, FieldValue{fd.Name, string(b[:n])})
			continue
		case fd.Size == 1:
			u = uint64(b[0])
		case fd.Size == 2:
			u = uint64(le.Uint16(b))
		case fd.Size == 4:
			u = uint64(le.Uint32(b))
		case fd.Size == 8:
			u = le.Uint64(b)
		default:
			continue
		}
		if fd.Signed {
			shift := 64 - 8*fd.Size
			out = append(out, FieldValue{fd.Name, int64(u<<shift) >> shift})
		} else {
			out = append(out, FieldValue{fd.Name, u})
		}
	}
	return out
}
