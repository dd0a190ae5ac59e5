// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu"
)

// The unchanged hwpprobe binary, run under `hwpemu run`, must read every
// emulated machine at the usual paths. Expected register values come from
// the machine model itself (emu.Machine.ReadMSR, in this process), so these
// tests check the path model -> FUSE -> namespace -> hwpprobe; the model's
// own values are checked against published dumps in package emu. The
// kernel rules (governor switch, EBUSY) are checked against
// intel_pstate.c / amd-pstate.c as cited.

// MSR numbers (Intel SDM vol. 4; AMD PPR for family 19h).
const (
	msrMPERF       = 0xE7
	msrAPERF       = 0xE8
	msrEPB         = 0x1B0
	msrRAPLUnit    = 0x606
	msrPkgEnergy   = 0x611
	msrHWPCap      = 0x771
	msrHWPRequest  = 0x774
	msrAMDCPPCCap1 = 0xC00102B0
	msrAMDCPPCReq  = 0xC00102B3
	msrAMDRAPLUnit = 0xC0010299
	msrAMDPkgEnrgy = 0xC001029B
)

// snapshot is the part of `hwpprobe snapshot --json` (docs/snapshot.md)
// these tests compare.
type snapshot struct {
	Emulated string `json:"emulated"`
	Groups   []struct {
		CPUs []snapCPU `json:"cpus"`
	} `json:"groups"`
}

type raw struct {
	Raw string `json:"raw"`
}

type snapCPU struct {
	CPU   int `json:"cpu"`
	Sysfs struct {
		Governor string `json:"scaling_governor"`
		EPP      string `json:"energy_performance_preference"`
	} `json:"sysfs"`
	Registers struct {
		HWPRequest *struct {
			Raw                    string `json:"raw"`
			Min, Max, Desired, EPP int
		} `json:"hwp_request"`
		HWPCap *struct {
			Raw           string `json:"raw"`
			Highest       int    `json:"highest"`
			Guaranteed    int    `json:"guaranteed"`
			MostEfficient int    `json:"most_efficient"`
			Lowest        int    `json:"lowest"`
		} `json:"hwp_capabilities"`
		EPB *struct {
			Raw   string `json:"raw"`
			Value int    `json:"value"`
		} `json:"energy_perf_bias"`
		CPPCCap *raw `json:"amd_cppc_cap1"`
		CPPCReq *struct {
			Raw      string `json:"raw"`
			Max, Min int
			EPP      int `json:"epp"`
		} `json:"amd_cppc_req"`
	} `json:"registers"`
}

func (s snapshot) cpus() map[int]snapCPU {
	m := map[int]snapCPU{}
	for _, g := range s.Groups {
		for _, c := range g.CPUs {
			m[c.CPU] = c
		}
	}
	return m
}

func parseSnapshot(t *testing.T, out string) snapshot {
	t.Helper()
	var s snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("snapshot --json: %v\n%s", err, out)
	}
	return s
}

// regs is a CPU's registers as the snapshot shows them (raw values; ""
// where the register is absent).
type regs struct{ HWPRequest, HWPCap, EPB, CPPCCap, CPPCReq string }

func snapRegs(c snapCPU) regs {
	var r regs
	if v := c.Registers.HWPRequest; v != nil {
		r.HWPRequest = norm(v.Raw)
	}
	if v := c.Registers.HWPCap; v != nil {
		r.HWPCap = norm(v.Raw)
	}
	if v := c.Registers.EPB; v != nil {
		r.EPB = norm(v.Raw)
	}
	if v := c.Registers.CPPCCap; v != nil {
		r.CPPCCap = norm(v.Raw)
	}
	if v := c.Registers.CPPCReq; v != nil {
		r.CPPCReq = norm(v.Raw)
	}
	return r
}

func norm(s string) string {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return "bad " + s
	}
	return fmt.Sprintf("%#x", v)
}

// modelRegs reads the same registers from the model.
func modelRegs(t *testing.T, m *emu.Machine, cpu int) regs {
	t.Helper()
	rd := func(addr uint32) string {
		v, err := m.ReadMSR(cpu, addr)
		if err != nil {
			return ""
		}
		return fmt.Sprintf("%#x", v)
	}
	return regs{rd(msrHWPRequest), rd(msrHWPCap), rd(msrEPB), rd(msrAMDCPPCCap1), rd(msrAMDCPPCReq)}
}

func loadModel(t *testing.T, name string) *emu.Machine {
	t.Helper()
	m, err := emu.Load(name, emu.WithLoad(emu.ConstLoad{0}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSnapshotEveryMachine(t *testing.T) {
	names := emu.Names()
	if len(names) < 4 {
		t.Fatalf("built-in machines %v, want the four of issue #3", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, name)
			out := inMachine(t, name, "hwpprobe snapshot --json")
			s := parseSnapshot(t, out)
			if s.Emulated != name {
				t.Errorf("snapshot says emulated %q, want %q", s.Emulated, name)
			}
			got, want := map[int]regs{}, map[int]regs{}
			for cpu, c := range s.cpus() {
				got[cpu] = snapRegs(c)
			}
			for cpu := range m.NumCPUs() {
				if _, err := m.ReadMSR(cpu, msrHWPCap); err != nil && strings.Contains(err.Error(), "no such device") {
					continue // offline CPU: snapshot lists online CPUs
				}
				want[cpu] = modelRegs(t, m, cpu)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("registers hwpprobe read under hwpemu vs the model (-model +hwpprobe):\n%s", d)
			}
			text := inMachine(t, name, "hwpprobe snapshot")
			if !strings.Contains(text, fmt.Sprintf("EMULATED machine %q", name)) {
				t.Errorf("text snapshot does not say it is emulated:\n%s", text)
			}
		})
	}
}

// TestGovernorSwitch writes the governor and EPP through sysfs, as a user
// does, and checks what the emulated driver writes to the request register.
// intel_pstate (drivers/cpufreq/intel_pstate.c, intel_pstate_hwp_set()):
// under performance min = max = the maximum ratio (HWP highest with turbo
// on) and EPP 0; an EPP other than 0 written under performance fails with
// EBUSY (store_energy_performance_preference()); back in powersave the
// saved EPP returns. amd-pstate (amd-pstate.c): EPP 0 under performance and
// EBUSY for an EPP write while the policy is performance (what EPP it
// returns to in powersave changed between kernel versions: not checked).
func TestGovernorSwitch(t *testing.T) {
	tests := []struct {
		machine string
		amd     bool
	}{
		{"mtl-165u", false},
		{"spr-2s", false},
		{"zen4-amd-pstate", true},
	}
	const cpufreq = "/sys/devices/system/cpu/cpu1/cpufreq/"
	script := `
hwpprobe snapshot --json -C 1 > /dev/shm/before.json
echo performance > ` + cpufreq + `scaling_governor
hwpprobe snapshot --json -C 1 > /dev/shm/perf.json
if /bin/echo balance_power > ` + cpufreq + `energy_performance_preference 2> /dev/shm/err; then echo ebusy=no; else echo "ebusy=$(cat /dev/shm/err)"; fi
echo powersave > ` + cpufreq + `scaling_governor
hwpprobe snapshot --json -C 1 > /dev/shm/after.json
echo before=$(tr -d '\n' < /dev/shm/before.json)
echo perf=$(tr -d '\n' < /dev/shm/perf.json)
echo after=$(tr -d '\n' < /dev/shm/after.json)
`
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			kv := keyValues(inMachine(t, tt.machine, script))
			if !strings.Contains(kv["ebusy"], "Device or resource busy") {
				t.Errorf("EPP write under performance: %q, want EBUSY (Device or resource busy)", kv["ebusy"])
			}
			before := parseSnapshot(t, kv["before"]).cpus()[1]
			perf := parseSnapshot(t, kv["perf"]).cpus()[1]
			after := parseSnapshot(t, kv["after"]).cpus()[1]
			if perf.Sysfs.Governor != "performance" || after.Sysfs.Governor != "powersave" {
				t.Fatalf("governors read back: %q then %q", perf.Sysfs.Governor, after.Sysfs.Governor)
			}
			if tt.amd {
				req := perf.Registers.CPPCReq
				if req == nil || req.EPP != 0 {
					t.Errorf("amd CPPC_REQ under performance: %+v, want EPP 0", req)
				}
				return
			}
			req, hcap := perf.Registers.HWPRequest, perf.Registers.HWPCap
			if req == nil || hcap == nil {
				t.Fatalf("no HWP registers under performance: %+v", perf.Registers)
			}
			if req.Min != hcap.Highest || req.Max != hcap.Highest || req.EPP != 0 {
				t.Errorf("HWP_REQUEST under performance: min %d max %d epp %d, want min = max = highest %d, epp 0",
					req.Min, req.Max, req.EPP, hcap.Highest)
			}
			if a, b := after.Registers.HWPRequest, before.Registers.HWPRequest; a == nil || b == nil || *a != *b {
				t.Errorf("HWP_REQUEST back in powersave %+v, before %+v: want the powersave request restored", a, b)
			}
			if after.Sysfs.EPP != before.Sysfs.EPP {
				t.Errorf("energy_performance_preference back in powersave %q, before %q", after.Sysfs.EPP, before.Sysfs.EPP)
			}
		})
	}
}

// msrScript prints name=value (decimal) for an MSR of CPU cpu, read with dd
// at offset = MSR number as any reader of /dev/cpu/N/msr does.
func msrScript(name string, cpu int, addr uint32) string {
	return fmt.Sprintf("echo %s=$(dd if=/dev/cpu/%d/msr bs=8 count=1 iflag=skip_bytes skip=%d status=none | od -An -tu8 | tr -d ' ')\n", name, cpu, addr)
}

func num(t *testing.T, kv map[string]string, k string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(kv[k], 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, kv[k], err)
	}
	return v
}

// TestCountersAdvance reads APERF, MPERF and the package energy counter
// twice, 0.3 s apart, in one session: each must have advanced. Two busy
// processes run in between, which the closed loop (the default) places on
// CPUs 0 and 1 (docs/emulator.md, Placement): an idle CPU counts no
// cycles, as a real one in a C-state does not.
func TestCountersAdvance(t *testing.T) {
	tests := []struct {
		machine string
		energy  uint32
	}{
		{"mtl-165u", msrPkgEnergy},
		{"spr-2s", msrPkgEnergy},
		{"zen4-amd-pstate", msrAMDPkgEnrgy},
	}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			read := func(sfx string) string {
				return msrScript("aperf"+sfx, 1, msrAPERF) + msrScript("mperf"+sfx, 1, msrMPERF) + msrScript("energy"+sfx, 0, tt.energy)
			}
			busy := "(while :; do :; done) & b1=$!\n(while :; do :; done) & b2=$!\nsleep 0.3\n"
			kv := keyValues(inMachine(t, tt.machine, read("0")+busy+read("1")+"kill $b1 $b2\n"))
			for _, c := range []string{"aperf", "mperf", "energy"} {
				if a, b := num(t, kv, c+"0"), num(t, kv, c+"1"); b <= a {
					t.Errorf("%s did not advance: %d then %d", c, a, b)
				}
			}
		})
	}
}

// TestEnergyWrap starts each RAPL machine with every CPU idle (--busy 0)
// and its 32-bit energy counters 1.5 s of idle power short of wrapping
// (--energy-start); a read 2 s after the first must be below it, in the MSR
// and in powercap's energy_uj (which wraps at max_energy_range_uj,
// intel_rapl_common.c). The idle power comes from the same model in this
// process, on a fake clock.
func TestEnergyWrap(t *testing.T) {
	tests := []struct {
		machine      string
		unit, energy uint32
		powercap     bool
	}{
		{"mtl-165u", msrRAPLUnit, msrPkgEnergy, true},
		{"spr-2s", msrRAPLUnit, msrPkgEnergy, true},
		{"zen4-amd-pstate", msrAMDRAPLUnit, msrAMDPkgEnrgy, false},
	}
	const uj = "/sys/class/powercap/intel-rapl:0/energy_uj"
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			now := time.Unix(1e9, 0)
			m, err := emu.Load(tt.machine, emu.WithLoad(emu.ConstLoad{0}), emu.WithClock(func() time.Time { return now }))
			if err != nil {
				t.Fatal(err)
			}
			u, err := m.ReadMSR(0, tt.unit)
			if err != nil {
				t.Fatal(err)
			}
			// Energy status units: bits 12:8, 1/2^ESU J (SDM, MSR_RAPL_POWER_UNIT;
			// AMD's C001_0299 has the same layout).
			unitJ := 1 / float64(uint64(1)<<((u>>8)&0x1f))
			e0, _ := m.ReadMSR(0, tt.energy)
			now = now.Add(time.Second)
			e1, _ := m.ReadMSR(0, tt.energy)
			idleW := float64(uint32(e1-e0)) * unitJ
			if idleW <= 0 {
				t.Fatalf("model's idle package power is %v W", idleW)
			}
			start := float64(uint64(1)<<32)*unitJ - 1.5*idleW
			script := msrScript("e0", 0, tt.energy)
			if tt.powercap {
				script += "echo uj0=$(cat " + uj + ")\n"
			}
			script += "sleep 2\n" + msrScript("e1", 0, tt.energy)
			if tt.powercap {
				script += "echo uj1=$(cat " + uj + ")\n"
			}
			kv := keyValues(inMachine(t, tt.machine, script, "--busy", "0",
				"--energy-start", strconv.FormatFloat(start, 'f', -1, 64)))
			if a, b := num(t, kv, "e0"), num(t, kv, "e1"); b >= a || a < 1<<31 {
				t.Errorf("energy MSR %#x: %#x then %#x, want a value near 2^32 then a wrapped one (idle %.2f W)", tt.energy, a, b, idleW)
			}
			if tt.powercap {
				if a, b := num(t, kv, "uj0"), num(t, kv, "uj1"); b >= a {
					t.Errorf("energy_uj: %d then %d, want a wrap", a, b)
				}
			}
		})
	}
}
