// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// refChildEnv makes the test binary the child of TestX86EnergyPerfPolicy:
// in the private mount namespace it was started in, it serves the MSR
// values of the environment variable's JSON at /dev/cpu/N/msr, runs the
// tool and prints its output.
const refChildEnv = "REGS_REFERENCE_CHILD"

// refGraftEnv makes the test binary the tool's launcher: started by the
// child in a mount namespace of its own, it grafts the child's FUSE tree
// (descriptor 3; the variable holds the spec) over the real paths and
// executes the tool. The server and the grafted paths live in different
// namespaces, so no thread of the server reads its own files: a cgo test
// binary's glibc reads /sys/devices/system/cpu/online when it creates a
// thread, and a server reading itself deadlocks.
const refGraftEnv = "REGS_REFERENCE_GRAFT"

func TestMain(m *testing.M) {
	if v := os.Getenv(refGraftEnv); v != "" {
		fmt.Fprintln(os.Stderr, "reference launcher:", graftAndExec(v))
		os.Exit(1)
	}
	if spec := os.Getenv(refChildEnv); spec != "" {
		out, err := referenceChild(spec)
		os.Stdout.Write(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reference child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// refSpec is what the child emulates and runs.
type refSpec struct {
	Tool string                    // path of x86_energy_perf_policy
	Args []string                  // its arguments
	Shim []string                  // the CPUID library's environment
	MSRs map[int]map[uint32]uint64 // CPU -> address -> value
	Stat string                    // /proc/stat to show (this VM's CPUs)
	// Zero makes every other MSR read as 0 (turbostat exits on the
	// first MSR it cannot read).
	Zero bool
	// CPUID answers these leaves (subleaf ignored), every other one
	// with zeros, so that the tool sees this machine whatever the host.
	CPUID map[uint32][4]uint32
	// Files are further files of the emulated tree, by path.
	Files map[string]string
	Env   []string // extra environment of the tool
	// Until, when set, stops the tool at the first line matching it.
	Until string
}

// refTree is the emulated tree spec s describes.
func refTree(s refSpec) *vfs.Dir {
	tree := vfs.NewDir()
	tree.Put("proc/stat", vfs.Const(s.Stat))
	tree.Put("proc/cpuinfo", vfs.Const("processor\t: 0\n"))
	for cpu, regs := range s.MSRs {
		tree.Put(fmt.Sprintf("dev/cpu/%d/msr", cpu), &vfs.Device{Mode: 0o600, ReadAt: func(p []byte, off int64) (int, error) {
			v, ok := regs[uint32(off)]
			if (!ok && !s.Zero) || len(p) != 8 {
				return 0, syscall.EIO
			}
			binary.LittleEndian.PutUint64(p, v)
			return 8, nil
		}})
		tree.Put(fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu), vfs.Const("0\n"))
		tree.Put(fmt.Sprintf("sys/devices/system/cpu/cpu%d/power/energy_perf_bias", cpu), vfs.Const("6\n"))
	}
	tree.Put("dev/cpu/0/cpuid", &vfs.Device{Mode: 0o444, ReadAt: func(p []byte, off int64) (int, error) {
		if len(p) != 16 {
			return 0, syscall.EIO
		}
		// Leaves without subleaves: ECX (the upper half of the offset)
		// is whatever the caller left there, as __get_cpuid does.
		for i, v := range s.CPUID[uint32(off)] {
			binary.LittleEndian.PutUint32(p[4*i:], v)
		}
		return 16, nil
	}})
	for p, c := range s.Files {
		tree.Put(p, vfs.Const(c))
	}
	return tree
}

// referenceChild serves spec js through FUSE and runs the tool through
// the launcher (refGraftEnv), returning its output.
func referenceChild(js string) ([]byte, error) {
	var s refSpec
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		return nil, err
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("make / private: %w", err)
	}
	// The server lives as long as this process; the grafts go with the
	// launcher's namespace.
	srv, err := fusefs.New(refTree(s), fusefs.Options{Name: "regs-reference"})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(withoutRefEnv(os.Environ()), refGraftEnv+"="+js)
	cmd.ExtraFiles = []*os.File{srv.MountFD()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if s.Until == "" {
		return cmd.CombinedOutput()
	}
	return runUntil(cmd, regexp.MustCompile(s.Until))
}

// graftAndExec is the launcher: js is the spec, descriptor 3 the tree. It
// returns only on failure.
func graftAndExec(js string) error {
	var s refSpec
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	tree := os.NewFile(3, "emulated tree")
	_, err := fusefs.Graft(tree, "/")
	tree.Close()
	if err != nil {
		return err
	}
	env := append(append(withoutRefEnv(os.Environ()), s.Shim...), s.Env...)
	return syscall.Exec(s.Tool, append([]string{s.Tool}, s.Args...), env)
}

// withoutRefEnv returns env without the child's and launcher's variables.
func withoutRefEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, refChildEnv+"=") && !strings.HasPrefix(kv, refGraftEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// runUntil runs cmd and stops it at the first output line matching stop
// (turbostat measures forever on an emulated machine whose counters do not
// move; its configuration dump comes first), or after a minute.
func runUntil(cmd *exec.Cmd, stop *regexp.Regexp) ([]byte, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return nil, err
	}
	pw.Close()
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	var out []byte
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		out = append(append(out, sc.Bytes()...), '\n')
		if stop.Match(sc.Bytes()) {
			break
		}
	}
	cmd.Process.Kill()
	pr.Close()
	cmd.Wait()
	return out, nil
}

var (
	reqLine = regexp.MustCompile(`^cpu(\d+): HWP_REQ: min (\d+) max (\d+) des (\d+) epp (\d+) window 0x([0-9a-f]+) \((\d+)\*10\^(\d+)us\) use_pkg (\d+)$`)
	capLine = regexp.MustCompile(`^cpu(\d+): HWP_CAP: low (\d+) eff (\d+) guar (\d+) high (\d+)$`)
	pkgLine = regexp.MustCompile(`^pkg0: HWP_REQ_PKG: min (\d+) max (\d+) des (\d+) epp (\d+) window 0x([0-9a-f]+) \((\d+)\*10\^(\d+)us\)$`)
	intLine = regexp.MustCompile(`^pkg0: MSR_HWP_INTERRUPT: 0x[0-9a-f]+ \(Excursion_Min-(EN|Dis)abled, Guaranteed_Perf_Change-(EN|Dis)abled\)$`)
	stsLine = regexp.MustCompile(`^pkg0: MSR_HWP_STATUS: 0x[0-9a-f]+ \((No-)?Excursion_Min, (No-)?Guaranteed_Perf_Change\)$`)
)

// TestX86EnergyPerfPolicy is a differential test against the reference
// decoder: the kernel's x86_energy_perf_policy (Debian linux-cpupower)
// reads random HWP register values from an emulated /dev/cpu/N/msr, and
// its printed decode must equal ours field by field, the activity window
// (all 10 bits, in µs) included.
func TestX86EnergyPerfPolicy(t *testing.T) {
	peers, stat, cpus := refSetup(t)
	for _, p := range peers {
		p.Run(t, func(t *testing.T) { testX86EnergyPerfPolicy(t, p, stat, cpus) })
	}
}

func testX86EnergyPerfPolicy(t *testing.T, p testbin.Peer, stat string, cpus int) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Skylake client with HWP, notification, window, EPP, package
	// request (leaf 6 EAX 0xf87) and EPB (ECX bit 3), as emu/cpuidshim's
	// test and the shared cpuid-shim README give it.
	cpuid := intelCPUID(0x4e, [4]uint32{0xf87, 0, 0x9, 0}, 1800, 4000)
	const rounds = 20
	checked := map[string]int{}
	for round := 0; round < rounds; round++ {
		spec := refSpec{Tool: p.Tools["x86_energy_perf_policy"], Shim: p.Env, Stat: stat, CPUID: cpuid,
			MSRs: map[int]map[uint32]uint64{}}
		pkg := map[uint32]uint64{
			hwp.MSR_IA32_PM_ENABLE:       1,
			hwp.MSR_IA32_HWP_REQUEST_PKG: rng.Uint64(),
			hwp.MSR_IA32_HWP_INTERRUPT:   rng.Uint64() & 0x7,
			hwp.MSR_IA32_HWP_STATUS:      rng.Uint64() & 0x3f,
			hwp.MSR_IA32_MISC_ENABLE:     0x00850089,
		}
		for cpu := 0; cpu < cpus; cpu++ {
			m := map[uint32]uint64{
				hwp.MSR_IA32_HWP_REQUEST:      rng.Uint64(),
				hwp.MSR_IA32_HWP_CAPABILITIES: rng.Uint64() & 0xffffffff,
			}
			for a, v := range pkg {
				m[a] = v
			}
			spec.MSRs[cpu] = m
		}
		out := runRef(t, spec)
		field := func(raw uint64, reg uint32, name string) uint64 {
			r, _ := ByAddress(reg)
			v, ok := r.Decode(raw, nil).Field(name)
			if !ok {
				t.Fatalf("%s has no field %s", r.Name, name)
			}
			return v.(uint64)
		}
		for _, line := range strings.Split(string(out), "\n") {
			line = strings.TrimSpace(line)
			if m := reqLine.FindStringSubmatch(line); m != nil {
				cpu, _ := strconv.Atoi(m[1])
				raw := spec.MSRs[cpu][hwp.MSR_IA32_HWP_REQUEST]
				compareRequest(t, line, raw, hwp.MSR_IA32_HWP_REQUEST, m[2:], field)
				checked["HWP_REQ"]++
			} else if m := pkgLine.FindStringSubmatch(line); m != nil {
				compareRequest(t, line, pkg[hwp.MSR_IA32_HWP_REQUEST_PKG], hwp.MSR_IA32_HWP_REQUEST_PKG, append(m[1:], ""), field)
				checked["HWP_REQ_PKG"]++
			} else if m := capLine.FindStringSubmatch(line); m != nil {
				cpu, _ := strconv.Atoi(m[1])
				raw := spec.MSRs[cpu][hwp.MSR_IA32_HWP_CAPABILITIES]
				got := []string{m[2], m[3], m[4], m[5]}
				var want []string
				for _, f := range []string{"lowest", "most_efficient", "guaranteed", "highest"} {
					want = append(want, strconv.FormatUint(field(raw, hwp.MSR_IA32_HWP_CAPABILITIES, f), 10))
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%#x: tool %q, we low/eff/guar/high %v", raw, line, want)
				}
				checked["HWP_CAP"]++
			} else if m := intLine.FindStringSubmatch(line); m != nil {
				raw := pkg[hwp.MSR_IA32_HWP_INTERRUPT]
				if (m[1] == "EN") != (field(raw, hwp.MSR_IA32_HWP_INTERRUPT, "excursion_min") == 1) ||
					(m[2] == "EN") != (field(raw, hwp.MSR_IA32_HWP_INTERRUPT, "guaranteed_perf_change") == 1) {
					t.Errorf("%#x: tool %q disagrees", raw, line)
				}
				checked["HWP_INTERRUPT"]++
			} else if m := stsLine.FindStringSubmatch(line); m != nil {
				raw := pkg[hwp.MSR_IA32_HWP_STATUS]
				if (m[1] == "") != (field(raw, hwp.MSR_IA32_HWP_STATUS, "excursion_min") == 1) ||
					(m[2] == "") != (field(raw, hwp.MSR_IA32_HWP_STATUS, "guaranteed_perf_change") == 1) {
					t.Errorf("%#x: tool %q disagrees", raw, line)
				}
				checked["HWP_STATUS"]++
			}
		}
		if t.Failed() {
			t.Logf("tool output:\n%s", out)
			return
		}
	}
	for _, k := range []string{"HWP_REQ", "HWP_CAP", "HWP_REQ_PKG"} {
		if checked[k] < rounds {
			t.Errorf("compared %d %s lines, want at least %d: %v", checked[k], k, rounds, checked)
		}
	}
	t.Logf("compared with x86_energy_perf_policy: %v", checked)
}

// refSetup returns the kernel's tools under the CPUID library, one per
// CPUID path this host can take (internal/testbin.PeerTools), and this
// VM's /proc/stat, whose CPUs the tools walk.
func refSetup(t *testing.T) (peers []testbin.Peer, stat string, cpus int) {
	t.Helper()
	peers = testbin.PeerTools(t)
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "cpu") && !strings.HasPrefix(l, "cpu ") {
			cpus++
		}
	}
	return peers, string(b), cpus
}

// intelCPUID is an Intel machine's CPUID as the tools read it, whatever
// the host: leaf 0 GenuineIntel up to leaf 0x1A; leaf 1 family 6, model,
// stepping 1; leaf 6 as given; leaf 0x16 the base and maximum MHz with a
// 100 MHz bus; leaf 0x1A zero (not hybrid: leaf 7 EDX bit 15 is clear);
// leaf 0x80000000 up to 0x80000008; leaf 0x80000007 invariant TSC (EDX
// bit 8). The served file answers every other leaf with zeros.
func intelCPUID(model uint32, leaf6 [4]uint32, baseMHz, maxMHz uint32) map[uint32][4]uint32 {
	return map[uint32][4]uint32{
		// "Genu" "ntel" "ineI" in EBX, ECX, EDX.
		0:          {0x1a, 0x756e6547, 0x6c65746e, 0x49656e69},
		1:          {uint32(Signature(6, model)) | 1, 0x100800, 0x7ffafbbf, 0xbfebfbff},
		6:          leaf6,
		0x16:       {baseMHz, maxMHz, 100, 0},
		0x1a:       {0, 0, 0, 0},
		0x80000000: {0x80000008, 0, 0, 0},
		0x80000007: {0, 0, 0, 0x100},
	}
}

// runRef runs spec in a child process in a new mount namespace and
// returns the tool's output.
func runRef(t *testing.T, spec refSpec) []byte {
	t.Helper()
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), refChildEnv+"="+string(js))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", spec.Tool, err, out)
	}
	return out
}

// compareRequest checks one HWP_REQ or HWP_REQ_PKG line: fields min, max,
// des, epp, window (hex), mantissa, exponent, use_pkg ("" for the package).
func compareRequest(t *testing.T, line string, raw uint64, reg uint32, m []string, field func(uint64, uint32, string) uint64) {
	t.Helper()
	num := func(s string, base int) uint64 {
		v, err := strconv.ParseUint(s, base, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return v
	}
	mant, exp := num(m[5], 10), num(m[6], 10)
	us := mant
	for ; exp > 0; exp-- {
		us *= 10
	}
	got := []uint64{num(m[0], 10), num(m[1], 10), num(m[2], 10), num(m[3], 10), num(m[4], 16), us}
	want := []uint64{field(raw, reg, "min"), field(raw, reg, "max"), field(raw, reg, "desired"), field(raw, reg, "epp"),
		field(raw, reg, "activity_window"), field(raw, reg, "activity_window_us")}
	if m[7] != "" {
		got = append(got, num(m[7], 10))
		want = append(want, field(raw, reg, "package_control"))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%#x: tool %q = %v, we decode %v (min max des epp window window_us [pkg])", raw, line, got, want)
	}
}
