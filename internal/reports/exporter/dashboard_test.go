// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const dashboardFile = "../../../docs/grafana/hwpprobe.json"

var metricNameRE = regexp.MustCompile(`\bhwpprobe_[a-zA-Z0-9_]+`)

// queries collects every string under a key that Grafana evaluates
// against Prometheus ("expr" of a target, "query" or "definition" of a
// template variable).
func queries(v any, key string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			queries(x, k, out)
		}
	case []any:
		for _, x := range v {
			queries(x, key, out)
		}
	case string:
		if key == "expr" || key == "query" || key == "definition" {
			*out = append(*out, v)
		}
	}
}

// TestDashboardMetrics: every metric name in the Grafana dashboard's
// PromQL is one the exporter serves, so the dashboard cannot drift from
// the exporter; every panel has a query.
func TestDashboardMetrics(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 || p.Targets[0].Expr == "" {
			t.Errorf("panel %q has no PromQL", p.Title)
		}
	}
	var all any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var qs []string
	queries(all, "", &qs)
	known := MetricNames()
	used := map[string]bool{}
	for _, q := range qs {
		for _, name := range metricNameRE.FindAllString(q, -1) {
			used[name] = true
			if !slices.Contains(known, name) {
				t.Errorf("dashboard query %q uses %s, which the exporter does not serve", q, name)
			}
		}
	}
	if len(d.Panels) < 5 || len(used) < 5 {
		t.Errorf("%d panels using %d metrics; the dashboard lost its panels", len(d.Panels), len(used))
	}
}

// TestMetricNames: MetricNames lists every descriptor the package's
// files define, each a hwpprobe_ name, once.
func TestMetricNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	defined := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		defined += strings.Count(string(src), "prometheus.NewDesc(")
	}
	names := MetricNames()
	if len(names) != defined {
		t.Errorf("MetricNames has %d names, metrics.go defines %d descriptors", len(names), defined)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if !strings.HasPrefix(n, ns) || seen[n] {
			t.Errorf("metric name %q: not %s-prefixed or repeated", n, ns)
		}
		seen[n] = true
	}
}
