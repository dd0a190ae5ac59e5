// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/sysdump"
)

// dumpEnv makes the test binary, run inside an emulated machine's mount
// namespace, write sysdump.Dump("/") as JSON to the file it names and
// exit: the tests compare the machine before and after.
const dumpEnv = "HWPPROBE_TEST_DUMP"

func dumpState(out string) int {
	d, err := sysdump.Dump("/")
	if err == nil {
		var b []byte
		if b, err = json.Marshal(d); err == nil {
			err = os.WriteFile(out, b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// emuScript runs a shell script under `hwpemu run machine` with $H the
// hwpprobe binary, $D the dump command (D name writes $T/name.json), $T a
// temporary directory and a journal directory of the test's own; it
// returns the combined output. The bound is for a hang.
func emuScript(t *testing.T, machine, script string) (string, string) {
	t.Helper()
	return emuScriptArgs(t, []string{machine}, script)
}

// emuScriptArgs is emuScript with hwpemu run's arguments before "--"
// (options such as --variant, then the machine).
func emuScriptArgs(t *testing.T, args []string, script string) (string, string) {
	t.Helper()
	machine := args[len(args)-1]
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pre := fmt.Sprintf("H=%s; T=%s; D() { %s=$T/$1.json %s; }\n", hwpprobeBin, dir, dumpEnv, self)
	out, code := emuRun(t, 4*time.Minute, "", []string{profile.JournalDirEnv + "=" + filepath.Join(dir, "journal")},
		append(append([]string{"run"}, args...), "--", "sh", "-c", pre+script)...)
	if code != 0 {
		t.Fatalf("hwpemu run %s: exit status %d\n%s", machine, code, out)
	}
	return string(out), dir
}

func readDump(t *testing.T, dir, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]string
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// codes reads the "name status" lines the scripts append to $T/codes.
func codes(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "codes"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(l, " ")
		m[k] = v
	}
	return m
}

// waitStarted waits (bounded) until the command under apply wrote its pid
// to $T/started.
const waitStarted = `i=0; while [ ! -s $T/started ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; `

// TestApplyRestoresEveryWayOut: under the emulated machines, every file
// under /sys/devices/system/cpu and the HWP_REQUEST / CPPC_REQ / EPB
// registers are back byte for byte after apply with a command that
// succeeds, fails, or is killed by SIGKILL; after hwpprobe itself gets
// SIGINT, SIGTERM, SIGHUP or SIGQUIT (forwarded to the command); and after hwpprobe is killed by SIGKILL and
// `hwpprobe restore` runs (twice). apply exits with the command's status.
func TestApplyRestoresEveryWayOut(t *testing.T) {
	for machine, profiles := range map[string][2]string{
		"mtl-165u":        {"governor=performance,epb=0,no_turbo=1,min_perf_pct=50", "powersave:epp=power,epb=15,scaling_max_freq=2GHz@0-3"},
		"zen4-amd-pstate": {"governor=performance,boost=0,scaling_min_freq=2GHz", "powersave:epp=power@0-7,scaling_max_freq=3GHz"},
	} {
		t.Run(machine, func(t *testing.T) {
			p, q := profiles[0], profiles[1]
			script := fmt.Sprintf(`D before
$H apply --ignore-daemons %[1]q -- true >/dev/null; echo "ok $?" >> $T/codes; D ok
$H apply --ignore-daemons %[2]q -- sh -c 'exit 3' >/dev/null; echo "fail $?" >> $T/codes; D fail
$H apply --ignore-daemons %[1]q -- sh -c 'kill -9 $$' >/dev/null; echo "cmdkill $?" >> $T/codes; D cmdkill
ulimit -c 0
for sig in INT TERM HUP QUIT; do
	rm -f $T/started
	$H apply --ignore-daemons %[2]q -- sh -c "echo \$\$ > $T/started; exec sleep 60" >/dev/null & pid=$!
	`+waitStarted+`
	D during$sig
	kill -$sig $pid; wait $pid; echo "$sig $?" >> $T/codes; D $sig
done
rm -f $T/started
$H apply --ignore-daemons %[1]q -- sh -c "echo \$\$ > $T/started; exec sleep 60" >/dev/null & pid=$!
`+waitStarted+`
kill -KILL $pid; wait $pid; echo "KILL $?" >> $T/codes; kill -KILL $(cat $T/started)
D killed
$H restore; echo "restore1 $?" >> $T/codes
$H restore; echo "restore2 $?" >> $T/codes
D restored
`, p, q)
			out, dir := emuScript(t, machine, script)
			want := map[string]string{"ok": "0", "fail": "3", "cmdkill": "137", "INT": "130", "TERM": "143", "HUP": "129", "QUIT": "131",
				"KILL": "137", "restore1": "0", "restore2": "0"}
			if d := cmp.Diff(want, codes(t, dir)); d != "" {
				t.Errorf("exit statuses (-want +got):\n%s\n%s", d, out)
			}
			before := readDump(t, dir, "before")
			for _, name := range []string{"ok", "fail", "cmdkill", "INT", "TERM", "HUP", "QUIT", "restored"} {
				if d := cmp.Diff(before, readDump(t, dir, name)); d != "" {
					t.Errorf("%s: not back (-before +after):\n%s", name, d)
				}
			}
			// The comparison can fail: while the profile is applied, and
			// after SIGKILL before restore, the machine differs.
			for _, name := range []string{"duringINT", "killed"} {
				if cmp.Equal(before, readDump(t, dir, name)) {
					t.Errorf("%s: the profile changed nothing", name)
				}
			}
			if !strings.Contains(out, "restore: every setting is back") || !strings.Contains(out, "restore: no journal, nothing to restore") {
				t.Errorf("restore output:\n%s", out)
			}
		})
	}
}

// TestApplyBadInput: each bad input is a one-line error, exit status 2,
// and nothing changed on the (emulated) machine.
func TestApplyBadInput(t *testing.T) {
	cases := []struct{ name, args, part string }{
		{"governor", "schedutil", "offers performance, powersave"},
		{"epp", "powersave:epp=fast", "unknown EPP"},
		{"key", "frobnicate=1", `unknown key "frobnicate"`},
		{"range", "scaling_max_freq=9GHz", "takes 400000-4900000 kHz"},
		{"pct", "min_perf_pct=101", "want an integer 0-100"},
		{"busy", "performance:epp=balance_power", "refuses any EPP but 0 under the performance policy"},
		{"tuned", "tuned:balanced", "tuned"},
		{"ppd", "ppd:balanced", "power-profiles-daemon"},
		{"file", "@$T/bad.toml", "bad.toml"},
	}
	var script strings.Builder
	script.WriteString("printf 'governor = \\n' > $T/bad.toml\n")
	for _, c := range cases {
		fmt.Fprintf(&script, "D before_%[1]s; $H apply %[2]s >/dev/null 2>$T/%[1]s.err; echo \"%[1]s $?\" >> $T/codes; D after_%[1]s\n", c.name, c.args)
	}
	// A journal left by apply without a command refuses the next change.
	script.WriteString(`D before_all_journal
$H apply --ignore-daemons powersave:epp=power >/dev/null; D before_journal
$H apply --ignore-daemons performance >/dev/null 2>$T/journal.err; echo "journal $?" >> $T/codes; D after_journal
$H restore >/dev/null; D after_all_journal
`)
	_, dir := emuScript(t, "mtl-165u", script.String())
	got := codes(t, dir)
	cases = append(cases, struct{ name, args, part string }{"journal", "performance", "a journal of settings to restore exists: pid"})
	for _, c := range cases {
		b, _ := os.ReadFile(filepath.Join(dir, c.name+".err"))
		msg := string(b)
		if got[c.name] != "2" || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "hwpprobe: ") || !strings.Contains(msg, c.part) {
			t.Errorf("apply %s: exit %s, stderr %q; want 2 and one line with %q", c.args, got[c.name], msg, c.part)
		}
		if d := cmp.Diff(readDump(t, dir, "before_"+c.name), readDump(t, dir, "after_"+c.name)); d != "" {
			t.Errorf("apply %s changed the machine (-before +after):\n%s", c.args, d)
		}
	}
	if d := cmp.Diff(readDump(t, dir, "before_all_journal"), readDump(t, dir, "after_all_journal")); d != "" {
		t.Errorf("not back after restore (-before +after):\n%s", d)
	}
}

// TestApplyNoCPUFreq: on a machine without cpufreq (the emulated bare VM,
// like the CI VMs) apply says what is missing, exit 2.
func TestApplyNoCPUFreq(t *testing.T) {
	_, dir := emuScript(t, "vm-bare", `$H apply performance 2>$T/err; echo "nocpufreq $?" >> $T/codes`)
	b, _ := os.ReadFile(filepath.Join(dir, "err"))
	if c := codes(t, dir)["nocpufreq"]; c != "2" || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), "no cpufreq scaling driver is loaded") {
		t.Errorf("exit %s, stderr %q", c, b)
	}
}

// TestApplyNotRoot: apply as an unprivileged user is a one-line usage
// error before anything is read or written; --dry-run works.
func TestApplyNotRoot(t *testing.T) {
	cmd, _ := nobodyCmd(t, "apply", "performance")
	cmd.Env = append(os.Environ(), profile.JournalDirEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || strings.Count(string(out), "\n") != 1 || !strings.Contains(string(out), "not root") {
		t.Errorf("apply as nobody: %v, %q; want exit 2 and one line saying not root", err, out)
	}
}

// TestApplyDaemons: a running daemon that writes the same settings (here
// a process named thermald) makes apply refuse, one line naming it and
// the flag; --ignore-daemons applies anyway.
func TestApplyDaemons(t *testing.T) {
	script := `cp /bin/sleep $T/thermald; $T/thermald 60 & d=$!
D before; $H apply powersave:epp=power -- true >/dev/null 2>$T/err; echo "refused $?" >> $T/codes; D after
$H apply --ignore-daemons powersave:epp=power -- true >/dev/null; echo "ignored $?" >> $T/codes
kill $d`
	_, dir := emuScript(t, "mtl-165u", script)
	b, _ := os.ReadFile(filepath.Join(dir, "err"))
	got := codes(t, dir)
	if got["refused"] != "2" || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), "thermald (pid ") || !strings.Contains(string(b), "--ignore-daemons") {
		t.Errorf("with thermald running: exit %s, stderr %q", got["refused"], b)
	}
	if got["ignored"] != "0" {
		t.Errorf("--ignore-daemons: exit %s", got["ignored"])
	}
	if d := cmp.Diff(readDump(t, dir, "before"), readDump(t, dir, "after")); d != "" {
		t.Errorf("refused apply changed the machine:\n%s", d)
	}
}
