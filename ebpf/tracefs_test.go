// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// The testdata/*.format files are verbatim copies of
// /sys/kernel/tracing/events/<group>/<name>/format from Linux 6.18.44
// (the project's CI VM).
func TestParseFormat(t *testing.T) {
	tests := []struct {
		file string
		want Format
	}{
		{"write_msr.format", Format{ID: 2153, Fields: []Field{
			{"common_type", "unsigned short", 0, 2, false},
			{"common_flags", "unsigned char", 2, 1, false},
			{"common_preempt_count", "unsigned char", 3, 1, false},
			{"common_pid", "int", 4, 4, true},
			{"msr", "unsigned", 8, 4, false},
			{"val", "u64", 16, 8, false},
			{"failed", "int", 24, 4, true},
		}}},
		{"cpu_frequency.format", Format{ID: 565, Fields: []Field{
			{"common_type", "unsigned short", 0, 2, false},
			{"common_flags", "unsigned char", 2, 1, false},
			{"common_preempt_count", "unsigned char", 3, 1, false},
			{"common_pid", "int", 4, 4, true},
			{"state", "u32", 8, 4, false},
			{"cpu_id", "u32", 12, 4, false},
		}}},
	}
	for _, tt := range tests {
		f, err := os.Open(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseFormat(bufio.NewScanner(f))
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if diff := cmp.Diff(&tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.file, diff)
		}
	}
}

func TestParseFormatErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"name: x\nID: 12\nformat:\n", // no fields
		"ID: x\n\tfield:u32 a;\toffset:8;\tsize:4;\tsigned:0;\n",     // bad ID
		"ID: 1\n\tfield:u32 a;\toffset:eight;\tsize:4;\tsigned:0;\n", // bad offset
		"ID: 1\n\tfield:u32 a;\toffset:8;\tsize:0;\tsigned:0;\n",     // no size
		"ID: 1\n\tfield:;\toffset:8;\tsize:4;\tsigned:0;\n",          // no name
	} {
		if _, err := parseFormat(bufio.NewScanner(strings.NewReader(in))); !errors.Is(err, ErrBadFormat) {
			t.Errorf("parseFormat(%q) = %v, want ErrBadFormat", in, err)
		}
	}
}

// The C struct write_msr_ctx (as bpf2go rendered it from the object's BTF)
// must match the kernel's own description of the record, in the committed
// copy and on the running kernel.
func TestWriteMSRContextMatchesKernel(t *testing.T) {
	var c msrtraceWriteMsrCtx
	ours := map[string][2]int{
		"msr":    {int(unsafe.Offsetof(c.Msr)), int(unsafe.Sizeof(c.Msr))},
		"val":    {int(unsafe.Offsetof(c.Val)), int(unsafe.Sizeof(c.Val))},
		"failed": {int(unsafe.Offsetof(c.Failed)), int(unsafe.Sizeof(c.Failed))},
	}
	tracefs, err := FindTraceFS("/")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"testdata", filepath.Join(tracefs, "events/msr/write_msr")} {
		f, err := os.Open(filepath.Join(src, map[bool]string{true: "write_msr.format", false: "format"}[src == "testdata"]))
		if err != nil {
			t.Fatal(err)
		}
		format, err := parseFormat(bufio.NewScanner(f))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		format.Group, format.Name = "msr", "write_msr"
		for name, want := range ours {
			fd, ok := format.Field(name)
			if !ok || fd.Offset != want[0] || fd.Size != want[1] {
				t.Errorf("%s: field %s = %+v, struct write_msr_ctx has offset %d size %d", src, name, fd, want[0], want[1])
			}
		}
		if err := CheckWriteMSRFormat(format); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// The reader's hand-written offsets (Tracer.decode) against the layout of
// the C structs.
func TestRecordLayout(t *testing.T) {
	var m msrtraceMsrEvent
	var p msrtraceTpEvent
	got := []uintptr{
		unsafe.Sizeof(m), unsafe.Offsetof(m.TimeNs), unsafe.Offsetof(m.Value), unsafe.Offsetof(m.Msr),
		unsafe.Offsetof(m.Cpu), unsafe.Offsetof(m.Pid), unsafe.Offsetof(m.Failed), unsafe.Offsetof(m.Comm),
		unsafe.Sizeof(p), unsafe.Offsetof(p.TimeNs), unsafe.Offsetof(p.Cpu), unsafe.Offsetof(p.Pid),
		unsafe.Offsetof(p.Comm), unsafe.Offsetof(p.Data), unsafe.Sizeof(p.Data),
	}
	want := []uintptr{48, 0, 8, 16, 20, 24, 28, 32, 96, 0, 8, 12, 16, 32, RawBytes}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record layout (-decode assumes +C struct):\n%s", diff)
	}
}

func TestDecodeFields(t *testing.T) {
	f := &Format{Group: "test", Name: "t", Fields: []Field{
		{"common_type", "unsigned short", 0, 2, false},
		{"cpu_id", "unsigned int", 8, 4, false},
		{"failed", "int", 12, 4, true},
		{"epp", "u8", 16, 1, false},
		{"delta", "s16", 18, 2, true},
		{"name", "char[8]", 20, 8, false},
		{"big", "u64", 32, 8, false},
		{"msg", "__data_loc char[]", 40, 4, false},
		{"beyond", "u64", 64, 8, false},
	}}
	raw := make([]byte, RawBytes)
	raw[8] = 3                                     // cpu_id 3
	copy(raw[12:], []byte{0xff, 0xff, 0xff, 0xff}) // failed -1
	raw[16] = 0x80                                 // epp 128
	copy(raw[18:], []byte{0xfe, 0xff})             // delta -2
	copy(raw[20:], "kworker\x00")
	copy(raw[32:], []byte{1, 0, 0, 0, 0, 0, 0, 0x80})
	want := []FieldValue{
		{"cpu_id", uint64(3)}, {"failed", int64(-1)}, {"epp", uint64(128)},
		{"delta", int64(-2)}, {"name", "kworker"}, {"big", uint64(0x8000000000000001)},
	}
	if diff := cmp.Diff(want, f.Decode(raw)); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
}

func TestSplitEvent(t *testing.T) {
	for _, tt := range []struct{ in, group, name string }{
		{"power:cpu_frequency", "power", "cpu_frequency"},
		{"msr/write_msr", "msr", "write_msr"},
	} {
		g, n, err := SplitEvent(tt.in)
		if err != nil || g != tt.group || n != tt.name {
			t.Errorf("SplitEvent(%q) = %q, %q, %v", tt.in, g, n, err)
		}
	}
	for _, in := range []string{"", "power", ":x", "x:", "a:b:c", "../x:y"} {
		if _, _, err := SplitEvent(in); !errors.Is(err, ErrBadEvent) {
			t.Errorf("SplitEvent(%q) = %v, want ErrBadEvent", in, err)
		}
	}
}

func TestReadFormatMissing(t *testing.T) {
	tracefs, err := FindTraceFS("/")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"amd_cpu:no_such_event", "no_such_group:write_msr"} {
		_, err := ReadFormat(tracefs, ev)
		if !errors.Is(err, ErrTracepointMissing) || !strings.Contains(err.Error(), ev) {
			t.Errorf("ReadFormat(%s) = %v, want ErrTracepointMissing naming it", ev, err)
		}
	}
	if _, err := ReadFormat(tracefs, WriteMSR); err != nil {
		t.Errorf("ReadFormat(%s): %v", WriteMSR, err)
	}
}
