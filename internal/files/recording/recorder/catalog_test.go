// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/export"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	catalog "github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/internal/sampling/source"
	"github.com/hwpprobe/hwpprobe/msr"
)

// testAddr is an address no catalog register and no emulated machine
// has.
const testAddr = 0x7FF0

// withTestRegister serves testAddr on top of an emulated machine: on
// each CPU, 0x10 times the number of reads of it there so far, so that
// every sample sees a new value.
type withTestRegister struct {
	msr.Reader
	mu    sync.Mutex
	reads map[int]uint64
}

func (w *withTestRegister) ReadMSR(cpu int, addr uint32) (uint64, error) {
	if addr != testAddr {
		return w.Reader.ReadMSR(cpu, addr)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads[cpu]++
	return 0x10 * w.reads[cpu], nil
}

// TestCatalogRegisterRecorded adds a register to the catalog only (a
// test entry, catalog.Extend) and finds it sampled, recorded, in `show`'s
// summary and in the `export` CSV, with no other change: the sampler's
// register list comes from the catalog's sampled registers.
func TestCatalogRegisterRecorded(t *testing.T) {
	defer catalog.Extend(&catalog.Register{Name: "MSR_TEST_SAMPLED", Address: testAddr, Scope: catalog.Thread,
		Role: catalog.RoleStatus, Sampled: true, Doc: "a register only this test's catalog has",
		Fields: []catalog.FieldSpec{{Name: "level", Hi: 7, Lo: 0}}})()

	m, err := emu.Load("mtl-165u", emu.WithLoad(emu.ConstLoad{0.5}))
	if err != nil {
		t.Fatal(err)
	}
	// Two CPUs of the machine: a P-core thread and an E-core.
	topo := []sampler.Topo{{CPU: 0, Core: 0, Type: topology.PCore}, {CPU: 4, Core: 2, Type: topology.ECore}}
	set, err := source.Open(source.Config{Root: t.TempDir(), CPUs: topo, MSR: &withTestRegister{Reader: m, reads: map[int]uint64{}}, Emulated: "mtl-165u"})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()

	path := filepath.Join(t.TempDir(), "rec.hwpr")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := recording.NewWriter(f, recording.Meta{Tool: "hwpprobe"})
	if err != nil {
		t.Fatal(err)
	}
	res := Run(Config{
		W: w, Run: recording.RunStart{Run: 1, Side: "A"},
		Spec:     workload.Spec{Argv: []string{"sleep", "0.1"}},
		Interval: 20 * time.Millisecond,
		OpenSampler: func() (Sampler, *recording.Figures, error) {
			s, err := sampler.New(set)
			return s, FiguresFromInfo(set.Setup().Info()), err
		},
		HWPReg: set.Setup().HWPRegister,
	})
	if res.StartErr != nil || res.WriteErr != nil {
		t.Fatalf("run: %+v", res)
	}
	if err := w.Close(recording.End{Status: recording.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// Recorded: every sample holds the register on both CPUs, after the
	// ones the sampler has figures for.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := recording.Read(bytes.NewReader(data))
	if err != nil || rec.Problem != nil {
		t.Fatal(err, rec.Problem)
	}
	run := rec.Runs[0]
	if len(run.Samples) < 2 {
		t.Fatalf("%d samples", len(run.Samples))
	}
	var first uint64
	for i, s := range run.Samples {
		for _, c := range s.CPUs {
			v, ok := c.Reg(testAddr)
			if !ok || v == 0 || v%0x10 != 0 {
				t.Fatalf("sample %d cpu%d: test register %#x, %v; regs %+v", i, c.CPU, v, ok, c.Regs)
			}
			if c.Regs[len(c.Regs)-1].MSR != testAddr {
				t.Errorf("sample %d cpu%d: test register not last: %+v", i, c.CPU, c.Regs)
			}
			if i == 0 && c.CPU == 0 {
				first = v
			}
		}
	}

	// Shown: `show` lists its changes by the catalog name, decoded from
	// the field specs.
	var text bytes.Buffer
	if err := summary.Summarize(rec, run).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cpu0 MSR_TEST_SAMPLED:", fmt.Sprintf("0x%08x (level %d)", first, first)} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("show's summary lacks %q:\n%s", want, text.String())
		}
	}

	// Exported: a CSV column named after the register.
	var csv bytes.Buffer
	if _, err := export.WriteCSVFile(&csv, path); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(csv.String(), "\n")
	header := strings.Split(lines[0], ",")
	col := -1
	for i, h := range header {
		if h == "MSR_TEST_SAMPLED" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("CSV header lacks MSR_TEST_SAMPLED: %s", lines[0])
	}
	filled := 0
	for _, l := range lines[1:] {
		if cells := strings.Split(l, ","); len(cells) == len(header) && cells[col] != "" {
			filled++
		}
	}
	if filled < 2*len(run.Samples) {
		t.Errorf("%d CSV rows have the register, want one per CPU and sample (%d):\n%s", filled, 2*len(run.Samples), csv.String())
	}
}
