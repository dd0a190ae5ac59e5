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

// emuSession runs the exporter under `hwpemu run mtl-165u` after a
// `snapshot --json`; touching dir/switch makes the session switch cpu4 to
// the performance governor (then dir/switched appears), touching dir/stop
// ends it (at the latest after the test). Every wait in the script is
// bounded, and the session is killed after 3 minutes.
func emuSession(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	hwpemu := hwpemuBin(t)
	script := `D=$1; H=$2
"$H" snapshot --json > $D/snap.json || exit 1
"$H" exporter --listen 127.0.0.1:0 --min-interval 100ms 2> $D/log & P=$!
trap 'kill $P 2>/dev/null' EXIT
i=0; while [ ! -e $D/switch ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done
echo performance > /sys/devices/system/cpu/cpu4/cpufreq/scaling_governor
touch $D/switched
i=0; while [ ! -e $D/stop ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done`
	cmd := exec.CommandContext(ctx, hwpemu, "run", "mtl-165u", "--", "sh", "-c", script, "sh", dir, hwpprobeBin)
	cmd.WaitDelay = 5 * time.Second
	out, err := os.Create(filepath.Join(dir, "hwpemu.out"))
	if err != nil {
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
// every second, with its storage in a temporary directory.
func startPrometheus(t *testing.T, dir, target string) string {
	t.Helper()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n" +
		"  - job_name: hwpprobe\n    static_configs:\n      - targets: ['" + target + "']\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
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

// promSample is one series of a Prometheus instant query's result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// promQuery runs an instant query and returns the series with their values.
func promQuery(ctx context.Context, addr, q string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
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
		out[s.Metric["cpu"]] = v
	}
	return out, nil
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

// TestExporterEmulated runs the exporter under `hwpemu run mtl-165u` and
// a real Prometheus server scraping it every second. The EPP per CPU
// matches `snapshot --json` (register field and cpufreq string), the
// package energy counter increases and Prometheus's rate of it is
// positive; after the session switches cpu4 to the performance governor,
// a scrape shows min == max and EPP 0 (intel_pstate's rule), Prometheus
// shows EPP 0 for cpu4, and the emulated HWP_REQUEST writes are counted.
func TestExporterEmulated(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	emuSession(t, dir)
	addr, err := exporterAddr(ctx, filepath.Join(dir, "log"))
	if err != nil {
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
	pkg := map[string]string{"package": "0", "domain": "package"}
	first, ok := m.value("hwpprobe_energy_joules_total", pkg)
	if !ok {
		t.Fatal("no hwpprobe_energy_joules_total{domain=\"package\"}")
	}
	err = poll(ctx, func() error {
		m, err := scrape(ctx, addr)
		if err != nil {
			return err
		}
		if v, _ := m.value("hwpprobe_energy_joules_total", pkg); v <= first {
			return fmt.Errorf("package energy %v J, not above the first scrape's %v J", v, first)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, dir, addr)
	promWait(t, ctx, prom, "hwpprobe_hwp_request_epp", wantEPP)
	err = poll(ctx, func() error {
		r, err := promQuery(ctx, prom, `rate(hwpprobe_energy_joules_total{domain="package"}[5s])`)
		if err != nil || r[""] <= 0 {
			return fmt.Errorf("package power rate %v, %v; want > 0", r, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	governorSwitch(t, ctx, dir, addr)
	wantEPP["4"] = 0
	promWait(t, ctx, prom, "hwpprobe_hwp_request_epp", wantEPP)
	promWait(t, ctx, prom, `sum by (cpu) (hwpprobe_msr_writes_total{msr="0x774",origin="emulated",comm="sh"}) > 0`, map[string]float64{"": 1})
}

// promWait polls Prometheus until query gives want (per cpu label;
// values above 0 match a want of 1 for the "> 0" filters).
func promWait(t *testing.T, ctx context.Context, prom, query string, want map[string]float64) {
	t.Helper()
	err := poll(ctx, func() error {
		r, err := promQuery(ctx, prom, query)
		if err != nil {
			return err
		}
		if len(r) != len(want) {
			return fmt.Errorf("%s: %d series %v, want %d", query, len(r), r, len(want))
		}
		for k, v := range r {
			if w, ok := want[k]; !ok || (v != w && !(w == 1 && v > 0 && strings.Contains(query, "> 0"))) {
				return fmt.Errorf("%s: %v, want %v", query, r, want)
			}
		}
		return nil
	})
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(prom), "prometheus.log"))
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
