// SPDX-License-Identifier: Apache-2.0

package cpuid

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

func TestVendor(t *testing.T) {
	// Leaf 0 register values as the SDM documents them: EBX "Genu", EDX
	// "ineI", ECX "ntel"; AMD: "Auth" "enti" "cAMD".
	tests := []struct {
		regs Regs
		want string
	}{
		{Regs{EBX: 0x756e6547, EDX: 0x49656e69, ECX: 0x6c65746e}, "GenuineIntel"},
		{Regs{EBX: 0x68747541, EDX: 0x69746e65, ECX: 0x444d4163}, "AuthenticAMD"},
	}
	for _, tt := range tests {
		if got := Vendor(tt.regs); got != tt.want {
			t.Errorf("Vendor(%+v) = %q, want %q", tt.regs, got, tt.want)
		}
	}
}

func TestDecodeSignature(t *testing.T) {
	tests := []struct {
		eax  uint32
		want Signature
		src  string
	}{
		// This development VM: /dev/cpu/0/cpuid leaf 1 EAX read 0xa0671;
		// its /proc/cpuinfo prints cpu family 6, model 167, stepping 1.
		{0xa0671, Signature{6, 167, 1}, "dev VM /proc/cpuinfo"},
		// i7-1255U leaf 1 EAX from the LKML cpuid -r dump below;
		// INTEL_ALDERLAKE_L is model 0x9A = 154 (asm/intel-family.h).
		{0x906a4, Signature{6, 154, 4}, "i7-1255U LKML dump"},
		// Zen 4 Raphael (Ryzen 7000), processor ID 00A60F12 as ucodenix
		// and VirtualBox profiles use it: family 0x19, model 0x61.
		{0xa60f12, Signature{25, 97, 2}, "Zen 4 Raphael"},
		// Pentium 4 style family 0xF: extended family added.
		{0x00000f29, Signature{15, 2, 9}, "SDM Figure 3-6 rule, family 0xF"},
	}
	for _, tt := range tests {
		if got := DecodeSignature(tt.eax); got != tt.want {
			t.Errorf("DecodeSignature(%#x) = %v, want %v (%s)", tt.eax, got, tt.want, tt.src)
		}
	}
	if got := (Signature{6, 170, 4}).String(); got != "6:170:4" {
		t.Errorf("String = %q", got)
	}
}

func TestDecodeHybridAndCache(t *testing.T) {
	// SDM vol. 2A leaf 1AH: core type in EAX 31:24, 20H Atom, 40H Core.
	tests := []struct {
		eax  uint32
		want HybridInfo
	}{
		{0x40000001, HybridInfo{CoreTypeCore, 1}},
		{0x20000001, HybridInfo{CoreTypeAtom, 1}},
		{0, HybridInfo{CoreTypeNone, 0}},
	}
	for _, tt := range tests {
		if got := DecodeHybrid(tt.eax); got != tt.want {
			t.Errorf("DecodeHybrid(%#x) = %+v, want %+v", tt.eax, got, tt.want)
		}
	}
	// Leaf 4 EAX: type 4:0, level 7:5. 0x121 is level 1 data; 0x163 level 3 unified.
	if got := DecodeCache(0x121); got != (Cache{CacheData, 1}) {
		t.Errorf("DecodeCache(0x121) = %+v", got)
	}
	if got := DecodeCache(0x163); got != (Cache{CacheUnified, 3}) {
		t.Errorf("DecodeCache(0x163) = %+v", got)
	}
}

// lkml1255U is part of `cpuid -r` from an Alder Lake i7-1255U (6:154:4),
// posted to LKML on 2024-05-31 by its owner answering Thomas Gleixner's
// request for "output of cpuid -r" (the reader ran on an E-core: leaf 0x1A
// EAX 0x20000001).
var lkml1255U = map[Leaf]Regs{
	{0x0, 0}:  {EAX: 0x00000020, EBX: 0x756e6547, ECX: 0x6c65746e, EDX: 0x49656e69},
	{0x1, 0}:  {EAX: 0x000906a4, EBX: 0x12400800, ECX: 0x7ffafbff, EDX: 0xbfebfbff},
	{0x4, 0}:  {EAX: 0x7c004121, EBX: 0x01c0003f, ECX: 0x0000003f},
	{0x4, 1}:  {EAX: 0x7c004122, EBX: 0x01c0003f, ECX: 0x0000007f},
	{0x4, 2}:  {EAX: 0x7c01c143, EBX: 0x03c0003f, ECX: 0x000007ff},
	{0x4, 3}:  {EAX: 0x7c0fc163, EBX: 0x02c0003f, ECX: 0x00003fff, EDX: 0x00000004},
	{0x6, 0}:  {EAX: 0x00df8ff7, EBX: 0x00000002, ECX: 0x00000409, EDX: 0x00020003},
	{0x7, 0}:  {EAX: 0x00000002, EBX: 0x239ca7eb, ECX: 0x984007bc, EDX: 0xfc18c410},
	{0x1a, 0}: {EAX: 0x20000001},
}

func TestDecodePowerFeatures(t *testing.T) {
	tests := []struct {
		regs Regs
		want PowerFeatures
		src  string
	}{
		// Read on this VM (Sapphire Rapids host): /proc/cpuinfo lists
		// neither hwp nor epb.
		{Regs{EAX: 0x4}, PowerFeatures{}, "dev VM"},
		// The i7-1255U: HWP with all its options, Thread Director, no
		// Turbo Boost Max 3.0 (bit 14 clear); ECX 0x409: APERF/MPERF, EPB.
		{lkml1255U[Leaf{6, 0}], PowerFeatures{
			DigitalThermalSensor: true, TurboBoost: true, PTM: true, HWP: true,
			HWPNotification: true, HWPActivityWindow: true, HWPEPP: true,
			HWPPackageRequest: true, TurboBoostMax3: false, HardwareFeedback: true,
			ThreadDirector: true, APERFMPERF: true, EPB: true,
		}, "i7-1255U LKML dump"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, DecodePowerFeatures(tt.regs)); diff != "" {
			t.Errorf("%s: DecodePowerFeatures(%+v) (-want +got):\n%s", tt.src, tt.regs, diff)
		}
	}
}

func TestHybridDump(t *testing.T) {
	m := Map{0: lkml1255U}
	r, _ := m.CPUID(0, LeafSignature, 0)
	if got := DecodeSignature(r.EAX); got != (Signature{6, 154, 4}) {
		t.Errorf("signature %v, want 6:154:4 (INTEL_ALDERLAKE_L)", got)
	}
	r, _ = m.CPUID(0, LeafExtFeatures, 0)
	if !Hybrid(r) {
		t.Error("leaf 7 EDX bit 15 (Hybrid) not seen")
	}
	r, _ = m.CPUID(0, LeafHybrid, 0)
	if got := DecodeHybrid(r.EAX).CoreType; got != CoreTypeAtom {
		t.Errorf("core type %v, want Atom", got)
	}
	c, err := Caches(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Cache{{CacheData, 1}, {CacheInstruction, 1}, {CacheUnified, 2}, {CacheUnified, 3}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Caches (-want +got):\n%s", diff)
	}
	if !HasL3(c) {
		t.Error("the 1255U's E-cores share the L3: HasL3 false")
	}
}

func TestCachesMap(t *testing.T) {
	m := Map{0: {
		{LeafCache, 0}: {EAX: 0x121}, {LeafCache, 1}: {EAX: 0x122},
		{LeafCache, 2}: {EAX: 0x143},
	}}
	c, err := Caches(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Cache{{CacheData, 1}, {CacheInstruction, 1}, {CacheUnified, 2}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Caches (-want +got):\n%s", diff)
	}
	if HasL3(c) {
		t.Error("HasL3 true for an L1/L2-only enumeration")
	}
	if _, err := m.CPUID(5, 0, 0); !errors.Is(err, ErrOffline) {
		t.Errorf("absent CPU: %v", err)
	}
}

// TestDevAgainstKernel reads the real /dev/cpu/N/cpuid of this machine and
// compares with what the kernel itself reports from the same CPUID leaves:
// /proc/cpuinfo (vendor, family/model/stepping, leaf 6 flags) and the
// cache sysfs directories (leaf 4).
func TestDevAgainstKernel(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("must run as root (CI does): /dev/cpu/N/cpuid is mode 0600")
	}
	fsys := sysfs.NewFS("/")
	infos, err := fsys.CPUInfo()
	if err != nil {
		t.Fatal(err)
	}
	d := Open("/")
	defer d.Close()
	for _, info := range infos {
		cpu := info.Processor
		r0, err := d.CPUID(cpu, LeafVendor, 0)
		if err != nil {
			t.Fatalf("cpu%d leaf 0: %v", cpu, err)
		}
		if got := Vendor(r0); got != info.VendorID {
			t.Errorf("cpu%d vendor %q, /proc/cpuinfo %q", cpu, got, info.VendorID)
		}
		r1, err := d.CPUID(cpu, LeafSignature, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := Signature{uint32(info.Family), uint32(info.Model), uint32(info.Stepping)}
		if got := DecodeSignature(r1.EAX); got != want {
			t.Errorf("cpu%d signature %v, /proc/cpuinfo %v", cpu, got, want)
		}
		r6, err := d.CPUID(cpu, LeafThermalPower, 0)
		if err != nil {
			t.Fatal(err)
		}
		pf := DecodePowerFeatures(r6)
		// The kernel may clear a flag CPUID sets, never set one it lacks
		// (arch/x86/kernel/cpu/scattered.c maps these bits).
		for flag, bit := range map[string]bool{"hwp": pf.HWP, "hwp_epp": pf.HWPEPP, "epb": pf.EPB, "aperfmperf": pf.APERFMPERF, "dts": pf.DigitalThermalSensor, "pts": pf.PTM} {
			if info.HasFlag(flag) && !bit {
				t.Errorf("cpu%d: /proc/cpuinfo has %s but CPUID leaf 6 (%+v) does not", cpu, flag, r6)
			}
		}
		if info.VendorID != "GenuineIntel" {
			continue
		}
		caches, err := Caches(d, cpu)
		if err != nil {
			t.Fatal(err)
		}
		var levels []uint8
		for _, c := range caches {
			levels = append(levels, c.Level)
		}
		var sysLevels []uint8
		for i := 0; ; i++ {
			n, err := fsys.ReadInt("sys/devices/system/cpu", fmt.Sprint("cpu", cpu), "cache", fmt.Sprint("index", i), "level")
			if sysfs.IsNotExist(err) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			sysLevels = append(sysLevels, uint8(n))
		}
		if diff := cmp.Diff(sysLevels, levels); diff != "" {
			t.Errorf("cpu%d leaf 4 cache levels differ from sysfs cache/index*/level (-sysfs +cpuid):\n%s", cpu, diff)
		}
	}
}

func TestDevErrors(t *testing.T) {
	_, err := Open(t.TempDir()).CPUID(0, 0, 0)
	if !errors.Is(err, ErrNoDevice) {
		t.Errorf("missing device: %v, want ErrNoDevice", err)
	}
	// An offline or absent CPU: the real driver answers ENXIO on open.
	present, err := sysfs.NewFS("/").PresentCPUs()
	if err != nil {
		t.Fatal(err)
	}
	beyond := present[len(present)-1] + 1
	dev := Open("/")
	defer dev.Close()
	if _, err := dev.CPUID(beyond, 0, 0); err == nil {
		t.Errorf("cpu%d (beyond present %s) read without error", beyond, present)
	}
}

// TestDevPermission opens the real /dev/cpu/0/cpuid (mode 0600) as user
// nobody: the test re-runs itself under that credential, since root
// bypasses file modes.
func TestDevPermission(t *testing.T) {
	if os.Getenv("CPUID_TEST_AS_NOBODY") == "" {
		if os.Geteuid() != 0 {
			t.Fatal("must run as root (CI does)")
		}
		dir := t.TempDir()
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		exe, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "cpuid.test")
		if err := os.WriteFile(bin, exe, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-test.run=^TestDevPermission$", "-test.v")
		cmd.Env = append(os.Environ(), "CPUID_TEST_AS_NOBODY=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestDevPermission") {
			t.Fatalf("as nobody: %v\n%s", err, out)
		}
		return
	}
	if _, err := Open("/").CPUID(0, 0, 0); !errors.Is(err, ErrPermission) {
		t.Errorf("as uid %d: err = %v, want ErrPermission", os.Geteuid(), err)
	}
}
