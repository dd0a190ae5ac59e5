// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/perfcount"
)

// fakeSampler gives one CPU whose Avg_MHz counts the samples taken.
type fakeSampler struct{ n int }

func (f *fakeSampler) Sample(dst *sampler.Sample) error {
	f.n++
	dst.Time, dst.Interval = time.Now(), 10*time.Millisecond
	dst.CPUs = []sampler.CPU{{CPU: 0, AvgMHz: sampler.Value{V: float64(f.n), Src: sampler.SrcMSR},
		HWPRequest: sampler.Reg{Raw: 0x80002e17, Src: sampler.SrcMSR}}}
	return nil
}

// fakeTracer delivers two MSR writes stamped with CLOCK_MONOTONIC, and
// reports lost events. When stopped it delivers one more, stamped a
// second later (clear of any drift between the clocks): after the
// command's end, so not the run's.
type fakeTracer struct{ lost uint64 }

func (f *fakeTracer) Run(ctx context.Context, fn func(*ebpf.Event) error) error {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	for i, v := range []uint64{0x80002e17, 0x2727} {
		if err := fn(&ebpf.Event{TimeNs: uint64(ts.Nano()) + uint64(i), CPU: 1, PID: 9, Comm: "kworker", MSR: 0x774, Value: v}); err != nil {
			return err
		}
	}
	<-ctx.Done()
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	if err := fn(&ebpf.Event{TimeNs: uint64(ts.Nano() + 1e9), CPU: 1, PID: 9, Comm: "kworker", MSR: 0x774, Value: 0xdead}); err != nil {
		return err
	}
	f.lost = 3
	return nil
}

func (f *fakeTracer) Stats() (ebpf.Stats, error) { return ebpf.Stats{Lost: f.lost}, nil }

func TestRunRecordsEverything(t *testing.T) {
	var buf bytes.Buffer
	w, err := recording.NewWriter(&buf, recording.Meta{Tool: "hwpprobe"})
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSampler{}
	before := time.Now().UnixNano()
	var warn bytes.Buffer
	res := Run(Config{
		W: w, Run: recording.RunStart{Run: 1, Side: "A"},
		Spec:     workload.Spec{Argv: []string{"sh", "-c", "sleep 0.2; exit 4"}},
		Interval: 10 * time.Millisecond,
		OpenSampler: func() (Sampler, *recording.Figures, error) {
			return fs, &recording.Figures{Sources: map[string]string{"Avg_MHz": "msr"}}, nil
		},
		HWPReg:   0x774,
		Tracer:   &fakeTracer{},
		Snapshot: func() (string, []byte, error) { return "test", []byte(`{"ok":true}`), nil },
		Counters: perfcount.ProcessEvents(),
		Warn:     &warn,
	})
	if res.End.ExitCode != 4 || res.StartErr != nil || res.WriteErr != nil || res.Warnings != 0 {
		t.Fatalf("result %+v, warnings %s", res, warn.String())
	}
	if err := w.Close(recording.End{Status: recording.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	rec, err := recording.Read(&buf)
	if err != nil || rec.Problem != nil {
		t.Fatal(err, rec.Problem)
	}
	r := rec.Runs[0]
	if r.Start.PID == 0 || r.Start.Side != "A" || r.Start.Figures.Sources["Avg_MHz"] != "msr" ||
		!cmp.Equal(r.Start.Command, []string{"sh", "-c", "sleep 0.2; exit 4"}) || r.Start.UID != os.Getuid() {
		t.Errorf("run start %+v", r.Start)
	}
	// Every sample taken is stored, in order, with the last one taken
	// after the command ended.
	if len(r.Samples) != fs.n || fs.n < 2 {
		t.Errorf("%d samples stored, %d taken", len(r.Samples), fs.n)
	}
	for i, s := range r.Samples {
		if got := s.CPUs[0].Value(r.Column("Avg_MHz")); got != recording.Value(i+1) {
			t.Errorf("sample %d has Avg_MHz %v", i, got)
		}
	}
	// The write delivered after the command ended is left out.
	if len(r.Trace) != 2 || r.TraceLost != 3 || r.Trace[1].Value != 0x2727 {
		t.Errorf("trace %+v lost %d", r.Trace, r.TraceLost)
	}
	// Monotonic stamps became Unix times of this run.
	if ts := r.Trace[0].TimeNs; ts < before || ts > r.End.TimeNs {
		t.Errorf("trace time %d outside the run [%d, %d]", ts, before, r.End.TimeNs)
	}
	if r.Snapshot(recording.PhaseBefore) == nil || r.Snapshot(recording.PhaseAfter) == nil {
		t.Errorf("snapshots %+v", r.Snapshots)
	}
	if len(r.Process) != 1 || r.Process[0].Counts[0].Event != "task-clock" || !r.Process[0].Counts[0].Supported {
		t.Errorf("process %+v", r.Process)
	}
}

func TestRunCommandNotFound(t *testing.T) {
	var buf bytes.Buffer
	w, _ := recording.NewWriter(&buf, recording.Meta{})
	res := Run(Config{W: w, Run: recording.RunStart{Run: 1}, Spec: workload.Spec{Argv: []string{"hwpprobe-no-such-command"}},
		Tracer: &fakeTracer{}})
	if !errors.Is(res.StartErr, workload.ErrNotFound) || res.End.ExitCode != 127 {
		t.Fatalf("%+v", res)
	}
	rec, err := recording.Read(&buf)
	if err != nil || rec.Problem != nil || len(rec.Runs) != 1 {
		t.Fatal(err, rec.Problem)
	}
	if e := rec.Runs[0].End; e == nil || e.ExitCode != 127 || !strings.Contains(e.Error, "command not found") {
		t.Errorf("run end %+v", e)
	}
}

// TestRunWriteFailure: after a failed write the command still runs to its
// end, one warning is printed, and the result carries the error.
func TestRunWriteFailure(t *testing.T) {
	fw := &failingWriter{okBytes: 200}
	w, err := recording.NewWriter(fw, recording.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "done")
	var warn bytes.Buffer
	res := Run(Config{W: w, Run: recording.RunStart{Run: 1},
		Spec:     workload.Spec{Argv: []string{"sh", "-c", "sleep 0.1; touch " + mark}},
		Interval: 10 * time.Millisecond, Warn: &warn,
		OpenSampler: func() (Sampler, *recording.Figures, error) { return &fakeSampler{}, nil, nil }})
	if res.WriteErr == nil || res.End.ExitCode != 0 || res.Warnings != 1 {
		t.Errorf("result %+v", res)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Error("the command did not run to its end")
	}
	if !strings.Contains(warn.String(), "recording stopped") || strings.Count(warn.String(), "\n") != 1 {
		t.Errorf("warnings: %q", warn.String())
	}
}

type failingWriter struct{ okBytes, n int }

func (f *failingWriter) Write(b []byte) (int, error) {
	if f.n+len(b) > f.okBytes {
		return 0, unix.ENOSPC
	}
	f.n += len(b)
	return len(b), nil
}

func TestObserved(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor":              "powersave\n",
		"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor":              "powersave\n",
		"sys/devices/system/cpu/cpu2/cpufreq/scaling_governor":              "performance\n",
		"sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference": "balance_performance\n",
		"sys/devices/system/cpu/cpu2/cpufreq/energy_performance_preference": "performance\n",
		"sys/devices/system/cpu/intel_pstate/no_turbo":                      "0\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
	}
	got := Observed(sysfs.NewFS(root), cpus.List{0, 1, 2})
	want := []recording.Setting{
		{Name: "scaling_governor", Value: "powersave (0-1), performance (2)"},
		// cpu1 has no EPP file: the CPUs that have one are listed.
		{Name: "energy_performance_preference", Value: "balance_performance (0), performance (2)"},
		{Name: "intel_pstate/no_turbo", Value: "0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := Observed(sysfs.NewFS(root), cpus.List{0, 1}); got[0].Value != "powersave" {
		t.Errorf("uniform setting: %+v", got[0])
	}
}

// TestHost reads this machine: what uname and /proc/cpuinfo say.
func TestHost(t *testing.T) {
	h := Host(sysfs.NewFS("/"))
	var u unix.Utsname
	unix.Uname(&u)
	infos, err := sysfs.NewFS("/").CPUInfo()
	if err != nil {
		t.Fatal(err)
	}
	if h.Kernel != unix.ByteSliceToString(u.Release[:]) || h.CPUModel != infos[0].ModelName || h.Family != infos[0].Family ||
		h.Microcode != infos[0].Microcode || h.OnlineCPU == "" {
		t.Errorf("%+v", h)
	}
}

// failTracer fails at once, before the run starts.
type failTracer struct{}

func (failTracer) Run(context.Context, func(*ebpf.Event) error) error {
	return errors.New("ring buffer gone")
}
func (failTracer) Stats() (ebpf.Stats, error) { return ebpf.Stats{}, nil }

// TestTracerFailsEarly: a tracer that fails before the run starts leaves
// a file-level note, and the file stays well-formed.
func TestTracerFailsEarly(t *testing.T) {
	var buf bytes.Buffer
	w, _ := recording.NewWriter(&buf, recording.Meta{})
	res := Run(Config{W: w, Run: recording.RunStart{Run: 1}, Spec: workload.Spec{Argv: []string{"true"}}, Tracer: failTracer{}})
	if res.End.ExitCode != 0 || res.Warnings != 1 {
		t.Fatalf("%+v", res)
	}
	rec, err := recording.Read(&buf)
	if err != nil || rec.Problem != nil {
		t.Fatal(err, rec.Problem)
	}
	if len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0].Text, "ring buffer gone") || rec.Runs[0].End == nil {
		t.Errorf("notes %+v runs %+v", rec.Notes, rec.Runs)
	}
}

// TestExperimentOfRuns records four runs of two sides in one file, as diff
// will (ABBA), and reads them back in order with their sides and statuses.
func TestExperimentOfRuns(t *testing.T) {
	var buf bytes.Buffer
	w, err := recording.NewWriter(&buf, recording.Meta{Kind: "diff", Sides: []recording.Side{
		{Label: "A", Settings: []recording.Setting{{Name: "scaling_governor", Value: "powersave"}}},
		{Label: "B", Settings: []recording.Setting{{Name: "scaling_governor", Value: "performance"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, side := range []string{"A", "B", "B", "A"} {
		res := Run(Config{W: w, Run: recording.RunStart{Run: i + 1, Side: side},
			Spec: workload.Spec{Argv: []string{"sh", "-c", "exit " + string(rune('0'+i))}}, Counters: perfcount.ProcessEvents()})
		if res.End.ExitCode != i {
			t.Fatalf("run %d: %+v", i+1, res)
		}
	}
	w.Close(recording.End{Status: recording.StatusComplete})
	rec, err := recording.Read(&buf)
	if err != nil || !rec.Complete() {
		t.Fatal(err, rec.Problem)
	}
	var got []string
	for _, r := range rec.Runs {
		got = append(got, r.Start.Side+string(rune('0'+r.End.ExitCode)))
		if len(r.Process) != 1 {
			t.Errorf("run %d: %d process records", r.Start.Run, len(r.Process))
		}
	}
	if diff := cmp.Diff([]string{"A0", "B1", "B2", "A3"}, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if len(rec.Meta.Sides) != 2 {
		t.Errorf("sides %+v", rec.Meta.Sides)
	}
}

// TestTraceOptions: the tracer gets the setup's filters and polls once a
// flush, not every ebpf.DefaultPollInterval (the recorder's CPU time at
// 10 Hz, docs/record.md "Observer cost").
func TestTraceOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		o    SetupOptions
		want ebpf.Options
	}{
		{"every CPU", SetupOptions{MSRs: []uint32{0x774, 0x1b0}},
			ebpf.Options{MSRs: []uint32{0x774, 0x1b0}, PollInterval: time.Second}},
		{"some CPUs", SetupOptions{MSRs: []uint32{0xc00102b3}, CPUs: cpus.List{0, 4}},
			ebpf.Options{MSRs: []uint32{0xc00102b3}, CPUs: []int{0, 4}, PollInterval: time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, traceOptions(c.o)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
