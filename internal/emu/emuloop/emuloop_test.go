// SPDX-License-Identifier: Apache-2.0

package emuloop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// TestParse reads the loop file as hwpemu writes it (the closed lines
// are emu/closedloop's Info, whose own test parses it back; the open ones
// closedloop.OpenInfo's) and refuses what it does not write.
func TestParse(t *testing.T) {
	v1 := &cgroup.Group{Dirs: []string{"/sys/fs/cgroup/cpu/hwpemu-7", "/sys/fs/cgroup/cpuacct/hwpemu-7"}}
	obs := &cgroup.Group{Dirs: []string{"/sys/fs/cgroup/cpu/user.slice", "/sys/fs/cgroup/cpuacct/user.slice"}}
	for _, tc := range []struct {
		name, text string
		want       Loop
		state      string
		wantErr    string
	}{
		{name: "closed with observer",
			text: "closed cgroup=v1:/sys/fs/cgroup/cpu/hwpemu-7,/sys/fs/cgroup/cpuacct/hwpemu-7 observer=v1:/sys/fs/cgroup/cpu/user.slice,/sys/fs/cgroup/cpuacct/user.slice interval_ms=100 ref_mhz=27220 slowdown=5.488 host_cpus=2 quota_cpus=0.109\n",
			want: Loop{Closed: true, Group: v1, Observer: obs, Fields: [][2]string{{"cgroup", v1.String()}, {"observer", obs.String()},
				{"interval_ms", "100"}, {"ref_mhz", "27220"}, {"slowdown", "5.488"}, {"host_cpus", "2"}, {"quota_cpus", "0.109"}}},
			state: "closed"},
		{name: "closed without observer", text: "closed cgroup=v2:/sys/fs/cgroup/hwpemu-9 interval_ms=100",
			want:  Loop{Closed: true, Group: &cgroup.Group{V2: true, Dirs: []string{"/sys/fs/cgroup/hwpemu-9"}}, Fields: [][2]string{{"cgroup", "v2:/sys/fs/cgroup/hwpemu-9"}, {"interval_ms", "100"}}},
			state: "closed"},
		{name: "open with reason", text: "open reason=--busy fixes the emulated load",
			want: Loop{Fields: [][2]string{{"reason", "--busy fixes the emulated load"}}}, state: "open (--busy fixes the emulated load)"},
		{name: "open", text: "open", want: Loop{}, state: "open"},
		{name: "neither", text: "ajar", wantErr: `"ajar" is neither closed nor open`},
		{name: "closed without group", text: "closed interval_ms=100", wantErr: "cgroup: cgroup: \"\" is not"},
		{name: "closed bad pair", text: "closed cgroup=v2:/x junk", wantErr: `"junk" is not KEY=VALUE`},
		{name: "bad observer", text: "closed cgroup=v2:/x observer=v3:/y", wantErr: "observer: cgroup:"},
		{name: "open junk", text: "open because", wantErr: `open: "because" is not reason=TEXT`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) = %+v, %v; want error containing %q", tc.text, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.text, d)
			}
			if s := got.State(); s != tc.state {
				t.Errorf("State() = %q, want %q", s, tc.state)
			}
		})
	}
}

// TestRead: no loop file is not an error (real hardware); a file is read
// and parsed under the root; a bad one is an error naming it.
func TestRead(t *testing.T) {
	root := t.TempDir()
	fsys := sysfs.NewFS(root)
	if l, ok, err := Read(fsys); ok || err != nil || l.Closed {
		t.Errorf("no file: %+v, %v, %v; want not ok, no error", l, ok, err)
	}
	p := filepath.Join(root, sysfs.EmulatedLoop)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text   string
		ok     bool
		closed bool
		err    bool
	}{{"closed cgroup=v2:/g", true, true, false}, {"open reason=--open-loop", true, false, false}, {"what", false, false, true}} {
		if err := os.WriteFile(p, []byte(tc.text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		l, ok, err := Read(fsys)
		if ok != tc.ok || l.Closed != tc.closed || (err != nil) != tc.err || (err != nil && !strings.Contains(err.Error(), sysfs.EmulatedLoop)) {
			t.Errorf("%q: %+v, %v, %v", tc.text, l, ok, err)
		}
	}
}

// TestObserveOpen: in an open loop, or a closed one without an observer
// group, Observe moves nothing (no group is written to).
func TestObserveOpen(t *testing.T) {
	for _, l := range []Loop{{}, {Closed: true, Group: &cgroup.Group{V2: true, Dirs: []string{"/nonexistent/g"}}}} {
		if err := l.Observe(); err != nil {
			t.Errorf("%+v: %v", l, err)
		}
	}
	bad := Loop{Closed: true, Group: &cgroup.Group{V2: true, Dirs: []string{"/nonexistent/g"}}, Observer: &cgroup.Group{V2: true, Dirs: []string{"/nonexistent/o"}}}
	if err := bad.Observe(); err == nil || !strings.Contains(err.Error(), "closed loop: leave the command's group") {
		t.Errorf("observer group missing: %v", err)
	}
}
