// SPDX-License-Identifier: Apache-2.0

package vfs

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPutWalk(t *testing.T) {
	root := NewDir()
	root.Put("sys/devices/system/cpu/online", Const("0-1"))
	root.Put("dev/cpu/0/msr", &Device{Mode: 0o400})
	root.Put("sys/class/powercap/intel-rapl:0", &Symlink{Target: "../../devices/virtual/powercap/intel-rapl/intel-rapl:0"})

	n, ok := root.Walk("/sys/devices/system/cpu/online")
	if !ok {
		t.Fatal("online not found")
	}
	b, err := n.(*File).Read()
	if err != nil || string(b) != "0-1\n" {
		t.Errorf("online = %q, %v", b, err)
	}
	if _, ok := root.Walk("sys/nothing"); ok {
		t.Error("missing path found")
	}
	if _, ok := root.Walk("sys/devices/system/cpu/online/x"); ok {
		t.Error("walked through a file")
	}
	d, _ := root.Walk("sys")
	if diff := cmp.Diff([]string{"class", "devices"}, d.(*Dir).Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
}

func TestMkdirAllThroughFilePanics(t *testing.T) {
	root := NewDir()
	root.Put("a/b", Const("x"))
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	root.MkdirAll("a/b/c")
}

func TestStore(t *testing.T) {
	var got []string
	plain := &File{Write: func(b []byte) error { got = append(got, "write "+string(b)); return nil }}
	by := &File{
		Write: func(b []byte) error { got = append(got, "unused"); return nil },
		WriteBy: func(c Caller, b []byte) error {
			got = append(got, fmt.Sprintf("%d %s %s", c.PID, c.Comm, b))
			return nil
		},
	}
	ro := Const("x")
	c := Caller{PID: 42, Comm: "sh"}
	for _, f := range []*File{plain, by} {
		if !f.Writable() {
			t.Errorf("%+v not writable", f)
		}
		if err := f.Store(c, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if ro.Writable() {
		t.Error("Const file writable")
	}
	if err := ro.Store(c, []byte("v")); !errors.Is(err, syscall.EACCES) {
		t.Errorf("Store on a read-only file: %v, want EACCES", err)
	}
	if diff := cmp.Diff([]string{"write v", "42 sh v"}, got); diff != "" {
		t.Errorf("stores (-want +got):\n%s", diff)
	}
}
