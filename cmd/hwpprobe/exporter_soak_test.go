// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// emuExporter runs `hwpemu run MACHINE -- hwpprobe exporter` with args and
// returns the exporter's process ID (as this machine sees it: hwpemu runs
// it in its own PID namespace) and address. It is stopped when the test
// ends.
func emuExporter(t *testing.T, ctx context.Context, machine string, args ...string) (int, string) {
	t.Helper()
	argv := append([]string{hwpemuBin(t), "run", machine, "--", hwpprobeBin, "exporter", "--listen", "127.0.0.1:0"}, args...)
	cmd, addr, _ := startServing(t, ctx, "hwpemu run", 30*time.Second, argv...)
	pid, err := descendant(cmd.Process.Pid, hwpprobeBin, "exporter")
	if err != nil {
		t.Fatal(err)
	}
	return pid, addr
}

// descendant finds the process below ancestor whose command line starts
// with exe and arg.
func descendant(ancestor int, exe, arg string) (int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.HasPrefix(string(b), exe+"\x00"+arg+"\x00") {
			continue
		}
		for p := pid; p > 1; p = parent(p) {
			if p == ancestor {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no process %s %s below pid %d", exe, arg, ancestor)
}

// parent returns a process's parent ID (0 when it cannot be read).
func parent(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// memKB returns a process's VmRSS and VmHWM (peak RSS) in kB.
func memKB(pid int) (rss, hwm int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, f := range []struct {
		re *regexp.Regexp
		v  *int
	}{{vmRSSRE, &rss}, {vmHWMRE, &hwm}} {
		m := f.re.FindSubmatch(b)
		if m == nil {
			return 0, 0, fmt.Errorf("/proc/%d/status: no %s", pid, f.re)
		}
		*f.v, _ = strconv.Atoi(string(m[1]))
	}
	return rss, hwm, nil
}

var (
	vmRSSRE = regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`)
	vmHWMRE = regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`)
)

// scrapeRaw fetches addr's /metrics over client and discards the body; it
// returns the body's length.
func scrapeRaw(ctx context.Context, client *http.Client, addr string) (int64, error) {
	var n int64
	err := httpGet(ctx, client, "http://"+addr+"/metrics", func(resp *http.Response) error {
		var err error
		n, err = io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET /metrics: %s", resp.Status)
		}
		return err
	})
	return n, err
}

// Soak test parameters: soakScrapes scrapes, every soakRefreshEvery-th
// one after a pause of the exporter's minimum interval so that it
// re-samples every source (the others get the cached figures, as
// scrapers within --min-interval do), memory read every soakCheckEvery
// scrapes.
const (
	soakScrapes      = 10000
	soakRefreshEvery = 40
	soakCheckEvery   = 250
	soakMinInterval  = 50 * time.Millisecond
	// soakWarmup scrapes are not compared: the heap and the HTTP
	// connections settle.
	soakWarmup = 1000
	// soakSlackKB is how far the last quarter's highest RSS (and the
	// final VmHWM) may be above the first quarter's after the warm-up.
	soakSlackKB = 4 << 10
)

// memPoint is the exporter's memory after a number of scrapes.
type memPoint struct{ scrapes, rss, hwm int }

// TestExporterSoak scrapes an exporter under `hwpemu run mtl-165u`
// 10,000 times as fast as it answers, with a real re-sample of every
// register and file every 25 scrapes, and reads its VmRSS and VmHWM every
// 250: the highest RSS of the last quarter, and the peak RSS at the end,
// are within 4 MiB of the first quarter's (after a 1,000-scrape warm-up).
// Injected leaks fail it: 1 kB kept per scrape (the last quarter 15 MiB
// above the first), each refresh's metrics kept (93 MiB).
func TestExporterSoak(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	pid, addr := emuExporter(t, ctx, "mtl-165u", "--min-interval", soakMinInterval.String())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	before, err := scrape(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var points []memPoint
	for i := 1; i <= soakScrapes; i++ {
		if i%soakRefreshEvery == 0 {
			time.Sleep(soakMinInterval)
		}
		if _, err := scrapeRaw(ctx, client, addr); err != nil {
			t.Fatalf("scrape %d: %v", i, err)
		}
		if i%soakCheckEvery == 0 {
			rss, hwm, err := memKB(pid)
			if err != nil {
				t.Fatal(err)
			}
			points = append(points, memPoint{i, rss, hwm})
		}
	}
	elapsed := time.Since(start)
	after, err := scrape(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	r0, _ := before.value("hwpprobe_refreshes_total", nil)
	r1, _ := after.value("hwpprobe_refreshes_total", nil)
	t.Logf("%d scrapes in %v (%.2f ms each), %v refreshes", soakScrapes, elapsed.Round(time.Millisecond),
		float64(elapsed.Microseconds())/1e3/soakScrapes, r1-r0)
	if r1-r0 < soakScrapes/soakRefreshEvery {
		t.Errorf("%v refreshes during %d scrapes, want at least %d (one after each pause)", r1-r0, soakScrapes, soakScrapes/soakRefreshEvery)
	}
	if err := checkFlat(points); err != nil {
		t.Fatal(err)
	}
	t.Log(formatPoints(points))
}

// checkFlat applies the soak test's rule to the memory checkpoints.
func checkFlat(points []memPoint) error {
	var first, last memPoint
	for _, p := range points {
		switch {
		case p.scrapes > soakWarmup && p.scrapes <= soakScrapes/4:
			first.rss, first.hwm = max(first.rss, p.rss), max(first.hwm, p.hwm)
		case p.scrapes > soakScrapes*3/4:
			last.rss, last.hwm = max(last.rss, p.rss), max(last.hwm, p.hwm)
		}
	}
	if first.rss == 0 || last.rss == 0 {
		return fmt.Errorf("no memory checkpoints in the first or last quarter: %v", points)
	}
	if last.rss > first.rss+soakSlackKB || last.hwm > first.hwm+soakSlackKB {
		return fmt.Errorf("RSS grew: highest %d kB (peak %d kB) in the last quarter, %d kB (peak %d kB) in the first after %d scrapes; allowed %d kB more\n%s",
			last.rss, last.hwm, first.rss, first.hwm, soakWarmup, soakSlackKB, formatPoints(points))
	}
	return nil
}

// formatPoints lists the checkpoints as scrapes:RSS/HWM in kB.
func formatPoints(points []memPoint) string {
	var b strings.Builder
	b.WriteString("scrapes:VmRSS/VmHWM kB")
	for _, p := range points {
		fmt.Fprintf(&b, " %d:%d/%d", p.scrapes, p.rss, p.hwm)
	}
	return b.String()
}

// TestCheckFlat: the soak test's rule passes flat memory with noise and a
// warm-up rise, and fails growth of RSS or of the peak.
func TestCheckFlat(t *testing.T) {
	series := func(f func(i int) (rss, hwm int)) []memPoint {
		var ps []memPoint
		for i := soakCheckEvery; i <= soakScrapes; i += soakCheckEvery {
			r, h := f(i)
			ps = append(ps, memPoint{i, r, h})
		}
		return ps
	}
	tests := []struct {
		name   string
		points []memPoint
		ok     bool
	}{
		{"flat with noise", series(func(i int) (int, int) { return 30000 + i%1000, 31000 }), true},
		{"warm-up rise", series(func(i int) (int, int) { return 20000 + min(i, 1000)*10, 31000 }), true},
		{"1 kB per scrape", series(func(i int) (int, int) { return 30000 + i, 31000 + i }), false},
		{"peak grows", series(func(i int) (int, int) { return 30000, 31000 + i }), false},
		{"no checkpoints", nil, false},
	}
	for _, tt := range tests {
		if err := checkFlat(tt.points); (err == nil) != tt.ok {
			t.Errorf("%s: checkFlat = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
