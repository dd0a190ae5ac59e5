// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hwpprobe/hwpprobe/internal/hostvariant"
)

// metrics is one scrape: metric families by name.
type metrics map[string]*dto.MetricFamily

// httpGet GETs url over client, within 10 seconds, and hands the
// response to read.
func httpGet(ctx context.Context, client *http.Client, url string, read func(*http.Response) error) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return read(resp)
}

// scrape fetches addr's /metrics in the text format and parses it.
func scrape(ctx context.Context, addr string) (metrics, error) {
	var m metrics
	err := httpGet(ctx, http.DefaultClient, "http://"+addr+"/metrics", func(resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /metrics: %s", resp.Status)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		var err error
		m, err = p.TextToMetricFamilies(resp.Body)
		return err
	})
	return m, err
}

// value returns the value of the series of name whose labels include
// want.
func (m metrics) value(name string, want map[string]string) (float64, bool) {
	mf := m[name]
	if mf == nil {
		return 0, false
	}
	for _, s := range mf.GetMetric() {
		match := true
		for k, v := range want {
			found := false
			for _, l := range s.GetLabel() {
				found = found || (l.GetName() == k && l.GetValue() == v)
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case s.Gauge != nil:
			return s.GetGauge().GetValue(), true
		case s.Counter != nil:
			return s.GetCounter().GetValue(), true
		case s.Untyped != nil:
			return s.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// poll calls f every 50ms until it returns nil or ctx ends; it returns
// f's last error then.
func poll(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after %v)", err, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var servingRE = regexp.MustCompile(`serving https?://([0-9.:]+)/metrics`)

// exporterAddr waits for the exporter's start-up log to say where it
// serves.
func exporterAddr(ctx context.Context, log string) (string, error) {
	var addr string
	err := poll(ctx, func() error {
		b, _ := os.ReadFile(log)
		m := servingRE.FindSubmatch(b)
		if m == nil {
			return fmt.Errorf("exporter did not start serving; its log: %q", b)
		}
		addr = string(m[1])
		return nil
	})
	return addr, err
}

// startExporter runs `hwpprobe exporter` on this machine with args and
// returns its process, address and log; it is stopped when the test ends.
func startExporter(t *testing.T, ctx context.Context, args ...string) (*exec.Cmd, string, string) {
	t.Helper()
	argv := append([]string{hwpprobeBin, "exporter", "--listen", "127.0.0.1:0"}, args...)
	return startServing(t, ctx, "exporter", 10*time.Second, argv...)
}

// startServing runs argv, a command line that starts an exporter, with
// its output in a log, waits for the exporter to log where it serves, and
// returns the process, that address and the log's path. When the test
// ends the process gets SIGTERM; the test fails if it has not stopped
// within stopWithin (then it is killed), naming it what.
func startServing(t *testing.T, ctx context.Context, what string, stopWithin time.Duration, argv ...string) (*exec.Cmd, string, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "exporter.log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(stopWithin):
			cmd.Process.Kill()
			<-done
			t.Errorf("%s did not stop within %v of SIGTERM", what, stopWithin)
		}
	})
	addr, err := exporterAddr(ctx, log)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, addr, log
}

// TestExporterHere runs the exporter on this machine (on the CI VMs: no
// msr driver, no cpufreq), under every host variant (Intel VM with an
// energy-psys that reads 0 J, counting RAPL, AMD EPYC, bare): it serves
// the kernel's TSC-deadline writes counted by eBPF; each figure is served
// or named once, on one line, as missing, as the host's facilities say
// (hostEnergy, hostTSC); and it runs as nobody.
func TestExporterHere(t *testing.T) {
	hostvariant.Each(t, exporterHere)
}

// hostEnergy is, per domain label of hwpprobe_energy_joules_total, how
// the perf power PMU of the (masked) host offers it: true where it counts,
// false where it reads 0; nil without a power PMU. Outside a masked
// variant whether a host's event counts is not known: it is left out.
func hostEnergy(t *testing.T, v hostvariant.Variant) (map[string]bool, bool) {
	t.Helper()
	domain := map[string]string{"energy-pkg": "package", "energy-cores": "core", "energy-gpu": "gpu", "energy-ram": "dram", "energy-psys": "psys"}
	if v.Mask.Power != nil {
		m := map[string]bool{}
		for _, e := range v.Mask.Power {
			m[domain[e.Name]] = e.Counts
		}
		return m, true
	}
	ents, err := os.ReadDir("/sys/bus/event_source/devices/power/events")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		return nil, false
	}
	return nil, true
}

// hostTSC is whether the (masked) host offers a TSC count: the perf msr
// PMU's tsc event or the msr device.
func hostTSC() bool {
	for _, p := range []string{"/sys/bus/event_source/devices/msr/events/tsc", "/dev/cpu/0/msr"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func exporterHere(t *testing.T, v hostvariant.Variant) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd, addr, log := startExporter(t, ctx, "--msr", "0x6e0", "--min-interval", "100ms")
	var m metrics
	err := poll(ctx, func() error {
		var err error
		if m, err = scrape(ctx, addr); err != nil {
			return err
		}
		if _, ok := m.value("hwpprobe_msr_writes_total", map[string]string{"msr": "0x6e0", "origin": "kernel"}); !ok {
			return fmt.Errorf("no hwpprobe_msr_writes_total for 0x6e0 yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Uid:\s+65534\s+65534\s+65534\s+65534$`).Match(st) {
		t.Errorf("exporter does not run as nobody:\n%s", st)
	}
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	seen := map[string]bool{}
	missing := map[string]int{}
	for _, l := range lines {
		if seen[l] {
			t.Errorf("log line repeated: %q", l)
		}
		seen[l] = true
		if !strings.HasPrefix(l, "hwpprobe exporter: ") {
			t.Errorf("log line %q does not start with %q: a message of several lines", l, "hwpprobe exporter: ")
		}
		if f, ok := strings.CutPrefix(l, "hwpprobe exporter: missing "); ok {
			f, _, _ = strings.Cut(f, ":")
			missing[f]++
		}
	}
	for f, n := range missing {
		if n > 1 {
			t.Errorf("%d lines say %s is missing, want one\nlog:\n%s", n, f, b)
		}
	}
	// Each per-CPU figure is served for cpu 0 or named in a "missing"
	// line (a figure may be both: a TSC from the clock, an assumed TjMax).
	figures := map[string]string{
		"hwpprobe_cpu_tsc_frequency_hertz":       "TSC",
		"hwpprobe_cpu_delivered_frequency_hertz": "Avg_MHz",
		"hwpprobe_hwp_request_epp":               "HWP_REQUEST",
		"hwpprobe_cpu_temperature_celsius":       "CoreTmp",
	}
	for name, figure := range figures {
		_, served := m.value(name, map[string]string{"cpu": "0"})
		missing := regexp.MustCompile(`(?m)^hwpprobe exporter: missing .*` + figure).Match(b)
		if !served && !missing {
			t.Errorf("%s is neither served nor said missing (%s)\nlog:\n%s", name, figure, b)
		}
	}
	// The TSC is served wherever perf's msr PMU or the msr device has it,
	// else named: Avg_MHz's line says TSC_MHz is not available either.
	_, served := m.value("hwpprobe_cpu_tsc_frequency_hertz", map[string]string{"cpu": "0"})
	if want := hostTSC(); served != want {
		t.Errorf("hwpprobe_cpu_tsc_frequency_hertz for cpu 0 served %v, want %v (msr PMU tsc or msr device)", served, want)
	}
	if !served && !regexp.MustCompile(`(?m)^hwpprobe exporter: missing Avg_MHz: no APERF/MPERF/TSC: .*TSC_MHz are not available$`).Match(b) {
		t.Errorf("no TSC, and no line says why\nlog:\n%s", b)
	}
	// Energy: each domain of the power PMU served where its counter
	// counts, named as not advancing where it reads 0; without counters,
	// one line says so.
	energy, known := hostEnergy(t, v)
	if !known {
		t.Logf("host power PMU: whether its events count is not known; energy checked under the masked variants")
		return
	}
	served = m["hwpprobe_energy_joules_total"] != nil
	noCounters := regexp.MustCompile(`(?m)^hwpprobe exporter: missing PkgWatt: no energy counters: perf: perf power PMU \(.*\): PMU not present; `).Match(b)
	if energy == nil {
		if served || !noCounters {
			t.Errorf("no power PMU: energy served %v, 'missing PkgWatt: no energy counters' line %v; want false, true\nlog:\n%s", served, noCounters, b)
		}
		return
	}
	for dom, counts := range energy {
		_, served := m.value("hwpprobe_energy_joules_total", map[string]string{"package": "0", "domain": dom})
		stuck := regexp.MustCompile(`(?m)^hwpprobe exporter: missing energy ` + dom + ` of package 0: the counter did not advance`).Match(b)
		if served != counts || stuck == counts {
			t.Errorf("energy %s (counts: %v): served %v, 'did not advance' line %v\nlog:\n%s", dom, counts, served, stuck, b)
		}
	}
}

// TestExporterNotRoot: as an unprivileged user the exporter refuses with
// one line.
func TestExporterNotRoot(t *testing.T) {
	cmd, _ := nobodyCmd(t, "exporter", "--listen", "127.0.0.1:0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exporter as nobody: %v, want exit status 1", err)
	}
	out := stderr.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "must start as root") {
		t.Errorf("stderr = %q, want one line saying it must start as root", out)
	}
}

// slowScraper opens a connection that sends requests for /metrics
// without end and reads the answers a byte every readEvery (never when
// 0), with a tiny receive buffer, until the test ends. Once the server
// holds more answers than the sockets buffer, it blocks writing and stops
// reading requests; then a write of the scraper makes no progress for a
// second and the returned channel is closed.
func slowScraper(t *testing.T, addr string, readEvery time.Duration) <-chan struct{} {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.(*net.TCPConn).SetReadBuffer(1024)
	blocked := make(chan struct{})
	go func() {
		req := []byte("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		for {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			_, err := c.Write(req)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				close(blocked)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	if readEvery > 0 {
		go func() {
			var b [1]byte
			for {
				if _, err := c.Read(b[:]); err != nil {
					return
				}
				time.Sleep(readEvery)
			}
		}()
	}
	return blocked
}

// TestExporterSlowScrapers: while scrapers hang (half a request; requests
// whose answers are never read; answers read a byte a second) until the
// server is blocked writing to them, another scraper gets every one of
// 50 answers, each within its 10 s timeout. The server's write timeout
// is 30 s, so one that let a hung connection hold up others fails here.
func TestExporterSlowScrapers(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	_, addr, _ := startExporter(t, ctx, "--msr", "0x6e0", "--min-interval", "10ms")
	half, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	fmt.Fprintf(half, "GET /metrics HTTP/1.1\r\nHost: x\r\n")
	var blocked []<-chan struct{}
	for _, every := range []time.Duration{0, 0, time.Second, time.Second} {
		blocked = append(blocked, slowScraper(t, addr, every))
	}
	for i, b := range blocked {
		select {
		case <-b:
		case <-ctx.Done():
			t.Fatalf("slow scraper %d: the server never stopped reading its requests", i)
		}
	}
	for i := 1; i <= 50; i++ {
		if _, err := scrape(ctx, addr); err != nil {
			t.Fatalf("scrape %d beside the hung scrapers: %v", i, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestExporterMethods: only GET and HEAD of /metrics are served.
func TestExporterMethods(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, addr, _ := startExporter(t, ctx, "--msr", "0x6e0")
	tests := []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/metrics", http.StatusOK},
		{http.MethodHead, "/metrics", http.StatusOK},
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
		{http.MethodPut, "/metrics", http.StatusMethodNotAllowed},
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/debug/pprof/", http.StatusNotFound},
	}
	for _, tt := range tests {
		req, _ := http.NewRequestWithContext(ctx, tt.method, "http://"+addr+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("OpenMetrics asked for, Content-Type %q", ct)
	}
}

// TestExporterTextfile: --textfile writes the metrics as nobody into a
// directory nobody may write, every 100 ms, replacing the file whole:
// each of many reads parses completely, and the file is a new one (a new
// inode, as a rename makes; a rewrite in place keeps the inode) at least
// five times, with the refresh counter rising.
func TestExporterTextfile(t *testing.T) {
	dir, err := os.MkdirTemp("", "hwpprobe-textfile")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hwpprobeBin, "exporter", "--textfile", dir, "--textfile-interval", "100ms", "--msr", "0x6e0")
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	path := filepath.Join(dir, "hwpprobe.prom")
	if err := poll(ctx, func() error { _, err := os.Stat(path); return err }); err != nil {
		t.Fatal(err)
	}
	var ino uint64
	var reads, replaced int
	var refreshes float64
	for replaced < 5 {
		if ctx.Err() != nil {
			t.Fatalf("%s replaced %d times in %d reads; want 5 (a rename each time)", path, replaced, reads)
		}
		n, v, err := readTextfile(path)
		if err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		if reads++; n != ino {
			if v < refreshes {
				t.Fatalf("%s: refreshes_total went from %v to %v", path, refreshes, v)
			}
			ino, refreshes, replaced = n, v, replaced+1
		}
		time.Sleep(10 * time.Millisecond)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%s holds %d entries, want only hwpprobe.prom", dir, len(ents))
	}
}

// readTextfile reads and parses a textfile and returns its inode and
// hwpprobe_refreshes_total; a file that does not parse, or lacks the
// counter, is an error.
func readTextfile(path string) (uint64, float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	m, err := p.TextToMetricFamilies(f)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	v, ok := metrics(m).value("hwpprobe_refreshes_total", nil)
	if !ok {
		return 0, 0, fmt.Errorf("%s: no hwpprobe_refreshes_total", path)
	}
	return st.Sys().(*syscall.Stat_t).Ino, v, nil
}

// TestExporterUsage: bad input is one line and exit status 2, before
// anything is served.
func TestExporterUsage(t *testing.T) {
	tests := [][]string{
		{"--user", "no-such-user-hwpprobe"},
		{"-C", "4096"},
		{"--msr", "NO_SUCH_REGISTER"},
		{"--textfile", "/nonexistent-hwpprobe-dir"},
		{"--listen", "127.0.0.1:0", "extra-argument"},
	}
	for _, args := range tests {
		_, stderr, code := runBin(t, append([]string{"exporter"}, args...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("exporter %q: exit %d, stderr %q; want exit 2 and one line", args, code, stderr)
		}
	}
}
