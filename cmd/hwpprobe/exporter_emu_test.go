// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
)

// snapJSON is the part of `snapshot --json` the exporter tests compare.
type snapJSON struct {
	Groups []struct {
		CPUs []struct {
			CPU   int `json:"cpu"`
			Sysfs struct {
				EPP *string `json:"energy_performance_preference"`
			} `json:"sysfs"`
			Registers struct {
				HWPRequest *struct {
					EPP uint8 `json:"epp"`
				} `json:"hwp_request"`
			} `json:"registers"`
		} `json:"cpus"`
	} `json:"groups"`
}

// Under `hwpemu run --busy 0` mtl-165u's package draws its power.idle_w
// (emu/machines/mtl-165u.yaml), and its 32-bit energy counter (units of
// 2^-14 J) wraps at 2^18 J; started at emuEnergyStart it wraps about 15 s
// into the session, while Prometheus scrapes the exporter.
const (
	emuIdleWatts   = 0.8
	emuWrapJoules  = 1 << 18
	emuEnergyStart = emuWrapJoules - 15*emuIdleWatts
)

// emuSession runs the exporter on addr under `hwpemu run --busy 0
// --energy-start emuEnergyStart mtl-165u` after a `snapshot --json`. In
// the session, dir/wrapped gets the time (Unix seconds) at which the
// package energy counter wrapped; touching dir/switch makes it switch cpu4
// to the performance governor, then dir/switched gets the time the switch
// was done and dir/writes the register writes it caused ("msr count"
// lines); touching dir/stop ends it (at the latest after the test). Every
// wait in the script is bounded, and the session is killed after 3
// minutes.
func emuSession(t *testing.T, dir, addr string) {
	t.Helper()
	script := `D=$1; H=$2; A=$3
"$H" snapshot --json > $D/snap.json || exit 1
"$H" exporter --listen $A --min-interval 100ms 2> $D/log & P=$!
trap 'kill $P 2>/dev/null' EXIT
E=/sys/class/powercap/intel-rapl:0/energy_uj
(last=$(cat $E); i=0; while [ $i -lt 1200 ]; do
	v=$(cat $E); [ "$v" -lt "$last" ] && { date +%s.%N > $D/wrapped.tmp; mv $D/wrapped.tmp $D/wrapped; break; }
	last=$v; sleep 0.1; i=$((i+1)); done) &
i=0; while [ ! -e $D/switch ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done
echo performance > /sys/devices/system/cpu/cpu4/cpufreq/scaling_governor
date +%s.%N > $D/switched.tmp
awk '$8 == "sh" { n[$4]++ } END { for (m in n) print m, n[m] }' /sys/devices/system/cpu/hwpemu_msr_writes > $D/writes
mv $D/switched.tmp $D/switched
i=0; while [ ! -e $D/stop ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done`
	energy := strconv.FormatFloat(emuEnergyStart, 'f', -1, 64)
	hwpemuSession(t, dir, "run", "--busy", "0", "--energy-start", energy, "mtl-165u", "--",
		"sh", "-c", script, "sh", dir, hwpprobeBin, addr)
}

// hwpemuSession starts `hwpemu ARGS`, a session whose script ends when
// dir/stop exists, with its output in dir/hwpemu.out; it is killed after
// 3 minutes. When the test ends it touches dir/stop, and the test fails
// if the session has not ended within 30 seconds or ended with an error.
func hwpemuSession(t *testing.T, dir string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, hwpemuBin(t), args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := os.Create(filepath.Join(dir, "hwpemu.out"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); out.Close() }()
	t.Cleanup(func() {
		defer cancel()
		os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
		select {
		case err := <-done:
			if err != nil {
				b, _ := os.ReadFile(filepath.Join(dir, "hwpemu.out"))
				t.Errorf("hwpemu run: %v\n%s", err, b)
			}
		case <-time.After(30 * time.Second):
			t.Error("hwpemu session did not end within 30s of dir/stop")
		}
	})
}

// sessionTime waits for the session to write a time into dir/name and
// returns it.
func sessionTime(t *testing.T, ctx context.Context, dir, name string) time.Time {
	t.Helper()
	var at time.Time
	err := poll(ctx, func() error {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		sec, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		at = time.Unix(0, int64(sec*1e9))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs Debian's prometheus on 127.0.0.1, scraping target
// every second, with its storage and log (prometheus.log) in dir.
func startPrometheus(t *testing.T, dir, target string) string {
	t.Helper()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n" +
		"  - job_name: hwpprobe\n    static_configs:\n      - targets: ['" + target + "']\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	for addr == target {
		addr = freePort(t)
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("prometheus (Debian package prometheus, scripts/install-deps.sh): %v", err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(waited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			t.Error("prometheus did not exit within 10s of SIGKILL")
		}
	})
	return addr
}

// promGet runs the instant query q on the Prometheus at addr and decodes
// the API's answer into r; the caller checks its status.
func promGet(ctx context.Context, addr, q string, r any) error {
	u := "http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q)
	return httpGet(ctx, http.DefaultClient, u, func(resp *http.Response) error {
		if err := json.NewDecoder(resp.Body).Decode(r); err != nil {
			return fmt.Errorf("query %s: %w", q, err)
		}
		return nil
	})
}

// promSample is one series of a Prometheus instant query's result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// promQuery runs an instant query and returns the series' values by
// their label key.
func promQuery(ctx context.Context, addr, q, key string) (map[string]float64, error) {
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := promGet(ctx, addr, q, &r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: status %q", q, r.Status)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v", q, s.Value)
		}
		out[s.Metric[key]] = v
	}
	return out, nil
}

// promPoint is one raw sample of a series.
type promPoint struct {
	at time.Time
	v  float64
}

// promRange runs an instant query for a range vector (`metric{...}[1m]`)
// of one series and returns its raw samples, oldest first.
func promRange(ctx context.Context, addr, q string) ([]promPoint, error) {
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := promGet(ctx, addr, q, &r); err != nil {
		return nil, err
	}
	if r.Status != "success" || len(r.Data.Result) != 1 {
		return nil, fmt.Errorf("query %s: status %q, %d series; want one", q, r.Status, len(r.Data.Result))
	}
	var out []promPoint
	for _, p := range r.Data.Result[0].Values {
		at, _ := p[0].(float64)
		str, _ := p[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: sample %v", q, p)
		}
		out = append(out, promPoint{time.UnixMilli(int64(at * 1e3)), v})
	}
	return out, nil
}

// after returns the samples taken after t.
func after(ps []promPoint, t time.Time) []promPoint {
	for i, p := range ps {
		if p.at.After(t) {
			return ps[i:]
		}
	}
	return nil
}

// readSnapshot reads the session's `snapshot --json`: the EPP register
// field and the sysfs EPP string per CPU.
func readSnapshot(t *testing.T, path string) (map[string]float64, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s snapJSON
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	epp, str := map[string]float64{}, map[string]string{}
	for _, g := range s.Groups {
		for _, c := range g.CPUs {
			if c.Registers.HWPRequest == nil || c.Sysfs.EPP == nil {
				t.Fatalf("snapshot: cpu%d has no HWP request or EPP", c.CPU)
			}
			epp[strconv.Itoa(c.CPU)] = float64(c.Registers.HWPRequest.EPP)
			str[strconv.Itoa(c.CPU)] = *c.Sysfs.EPP
		}
	}
	if len(epp) != 14 {
		t.Fatalf("snapshot: %d CPUs, want mtl-165u's 14", len(epp))
	}
	return epp, str
}

// TestExporterEmulated runs the exporter under `hwpemu run --busy 0
// mtl-165u` with a real Prometheus server scraping it every second from
// before it starts. Through Prometheus's query API: the EPP per CPU
// matches `snapshot --json` (register field and cpufreq string); the
// package energy counter never goes down across the emulated counter's
// 32-bit wrap, which Prometheus saw happen, and its rate is the model's
// idle power within 5% (from the first to the last sample); after the session switches cpu4 to the
// performance governor (a scrape then shows min == max and EPP 0,
// intel_pstate's rule), the second of Prometheus's scrapes after the
// switch and every later one show EPP 0, and the register-write counters
// of the switching shell match the emulated machine's write log.
func TestExporterEmulated(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := freePort(t)
	prom := startPrometheus(t, dir, addr)
	emuSession(t, dir, addr)
	if _, err := exporterAddr(ctx, filepath.Join(dir, "log")); err != nil {
		t.Fatal(err)
	}
	wantEPP, wantStr := readSnapshot(t, filepath.Join(dir, "snap.json"))
	m, err := scrape(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	for cpu, want := range wantEPP {
		if got, ok := m.value("hwpprobe_hwp_request_epp", map[string]string{"cpu": cpu}); !ok || got != want {
			t.Errorf("cpu%s: hwp_request_epp %v (present %v), snapshot says %v", cpu, got, ok, want)
		}
		if _, ok := m.value("hwpprobe_cpufreq_info", map[string]string{"cpu": cpu, "epp": wantStr[cpu]}); !ok {
			t.Errorf("cpu%s: no cpufreq_info with epp=%q", cpu, wantStr[cpu])
		}
	}
	promWait(t, ctx, dir, prom, "cpu", "hwpprobe_hwp_request_epp", wantEPP)
	energyWrap(t, ctx, dir, prom)
	governorSwitch(t, ctx, dir, addr)
	switchWithin(t, ctx, dir, prom, 2)
	wantEPP["4"] = 0
	promWait(t, ctx, dir, prom, "cpu", "hwpprobe_hwp_request_epp", wantEPP)
	promWait(t, ctx, dir, prom, "msr", `hwpprobe_msr_writes_total{origin="emulated",comm="sh"}`, sessionWrites(t, dir))
}

// energyWrap waits for the emulated energy counter's wrap and two of
// Prometheus's scrapes after it, and checks the package energy series:
// scraped before the wrap too, never lower than before, rising at the
// model's idle power.
func energyWrap(t *testing.T, ctx context.Context, dir, prom string) {
	t.Helper()
	wrapped := sessionTime(t, ctx, dir, "wrapped")
	const series = `hwpprobe_energy_joules_total{domain="package"}`
	var ps []promPoint
	err := poll(ctx, func() error {
		var err error
		if ps, err = promRange(ctx, prom, series+"[10m]"); err != nil {
			return err
		}
		if n := len(after(ps, wrapped)); n < 2 {
			return fmt.Errorf("%d samples after the wrap", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(after(ps, wrapped)) == len(ps) {
		t.Fatalf("the energy counter wrapped at %v, before Prometheus's first sample at %v (the exporter took over 15 s to start)", wrapped, ps[0].at)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].v < ps[i-1].v {
			t.Errorf("package energy went down from %v J to %v J (%v -> %v; counter wrapped at %v)", ps[i-1].v, ps[i].v, ps[i-1].at, ps[i].at, wrapped)
		}
	}
	first, last := ps[0], ps[len(ps)-1]
	if w := (last.v - first.v) / last.at.Sub(first.at).Seconds(); w < emuIdleWatts*0.95 || w > emuIdleWatts*1.05 {
		t.Errorf("package power %v W from %d samples over %v, want the model's %v W within 5%%", w, len(ps), last.at.Sub(first.at), emuIdleWatts)
	}
	r, err := promQuery(ctx, prom, "resets("+series+"[10m])", "domain")
	if err != nil {
		t.Fatal(err)
	}
	if n := r["package"]; n != 0 {
		t.Errorf("Prometheus counts %v resets of the package energy counter", n)
	}
}

// switchWithin checks that the scrape interval-th of Prometheus's scrapes
// after the governor switch and every later one show cpu4's new EPP 0.
func switchWithin(t *testing.T, ctx context.Context, dir, prom string, intervals int) {
	t.Helper()
	switched := sessionTime(t, ctx, dir, "switched")
	var ps []promPoint
	err := poll(ctx, func() error {
		var err error
		if ps, err = promRange(ctx, prom, `hwpprobe_hwp_request_epp{cpu="4"}[1m]`); err != nil {
			return err
		}
		if ps = after(ps, switched); len(ps) < intervals+1 {
			return fmt.Errorf("%d scrapes after the switch", len(ps))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps[intervals-1:] {
		if p.v != 0 {
			t.Errorf("scrape %d after the switch at %v (%v): cpu4 EPP %v, want 0 from scrape %d on", intervals+i, switched, p.at, p.v, intervals)
		}
	}
}

// sessionWrites reads the register writes the session's switch made, as
// the emulated write log has them, for the registers the exporter counts.
func sessionWrites(t *testing.T, dir string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "writes"))
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]bool{}
	for _, m := range tracefmt.DefaultMSRs {
		counted[fmt.Sprintf("0x%x", m)] = true
	}
	want := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var msr string
		var n float64
		if _, err := fmt.Sscan(l, &msr, &n); err != nil {
			t.Fatalf("writes %q: %v", l, err)
		}
		if counted[strings.ToLower(msr)] {
			want[strings.ToLower(msr)] = n
		}
	}
	if want["0x774"] == 0 {
		t.Fatalf("the switch wrote no IA32_HWP_REQUEST: %q", b)
	}
	return want
}

// promWait polls Prometheus until query gives want, by the key label.
func promWait(t *testing.T, ctx context.Context, dir, prom, key, query string, want map[string]float64) {
	t.Helper()
	err := poll(ctx, func() error {
		r, err := promQuery(ctx, prom, query, key)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, r); diff != "" {
			return fmt.Errorf("%s by %s (-want +got):\n%s", query, key, diff)
		}
		return nil
	})
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
		t.Fatalf("%v\n%s", err, b)
	}
}

// governorSwitch has the session switch cpu4 to performance and waits for
// a scrape that shows it: governor performance, min == max, EPP 0.
func governorSwitch(t *testing.T, ctx context.Context, dir, addr string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "switch"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := poll(ctx, func() error {
		_, err := os.Stat(filepath.Join(dir, "switched"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cpu4 := map[string]string{"cpu": "4"}
	err = poll(ctx, func() error {
		m, err := scrape(ctx, addr)
		if err != nil {
			return err
		}
		lo, _ := m.value("hwpprobe_hwp_request_min_perf", cpu4)
		hi, _ := m.value("hwpprobe_hwp_request_max_perf", cpu4)
		epp, _ := m.value("hwpprobe_hwp_request_epp", cpu4)
		_, gov := m.value("hwpprobe_cpufreq_info", map[string]string{"cpu": "4", "governor": "performance"})
		if lo != hi || epp != 0 || !gov {
			return fmt.Errorf("cpu4 after the switch: min %v max %v epp %v, governor performance %v", lo, hi, epp, gov)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
