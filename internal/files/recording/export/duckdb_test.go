// SPDX-License-Identifier: Apache-2.0

package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The independent Parquet reader of the tests is DuckDB, through the npm
// registry's @duckdb/node-api (which carries DuckDB's binary), pinned by
// testdata/duckdb/package-lock.json and run by testdata/duckdb/read.mjs.
const duckdbSrc = "testdata/duckdb"

var (
	duckdbOnce sync.Once
	duckdbDir  string
	duckdbErr  error
)

// duckdb returns the directory where read.mjs runs with its packages
// installed: a directory of the user's cache named after the hash of
// package.json, package-lock.json and read.mjs, installed by `npm ci` on
// first use (a few seconds; about 20 MB from registry.npmjs.org) and
// reused after. Without node, npm or the registry the test fails, saying
// so: CI installs node and npm (scripts/install-deps.sh) and reaches the
// registry.
func duckdb(t testing.TB) string {
	t.Helper()
	duckdbOnce.Do(func() { duckdbDir, duckdbErr = installDuckDB() })
	if duckdbErr != nil {
		t.Fatalf("the DuckDB reader: %v", duckdbErr)
	}
	return duckdbDir
}

func installDuckDB() (string, error) {
	files := []string{"package.json", "package-lock.json", "read.mjs"}
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(duckdbSrc, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "hwpprobe", "duckdb-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err == nil {
		return dir, nil
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%s is not installed (scripts/install-deps.sh installs it): %w", tool, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".duckdb-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(duckdbSrc, f))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := groupCommand(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci of %s failed (the test needs registry.npmjs.org): %w\n%s", duckdbSrc, err, out)
	}
	// Another test process may have installed it meanwhile: either copy
	// is whole, so losing the race is fine.
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return "", err
		}
	}
	return dir, nil
}

// groupCommand is exec.CommandContext in a process group of its own,
// all of which is killed when ctx ends, and whose output is waited for
// 10 s more at most (a child left behind cannot hold the test).
func groupCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// duckdbTable is what read.mjs prints about a Parquet file.
type duckdbTable struct {
	Schema  []duckdbSchema `json:"schema"`
	Columns []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
	Rows [][]*string `json:"rows"`
}

// duckdbSchema is a leaf of parquet_schema().
type duckdbSchema struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	LogicalType string `json:"logical_type"`
	Repetition  string `json:"repetition_type"`
}

// readDuckDB reads the Parquet file at path with DuckDB.
func readDuckDB(t testing.TB, path string) duckdbTable {
	t.Helper()
	dir := duckdb(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := groupCommand(ctx, "node", "read.mjs", path)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB reading %s: %v\n%s", path, err, stderr.Bytes())
	}
	var tab duckdbTable
	if err := json.Unmarshal(out, &tab); err != nil {
		t.Fatalf("DuckDB's output: %v", err)
	}
	return tab
}
