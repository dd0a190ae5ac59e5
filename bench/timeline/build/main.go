// SPDX-License-Identifier: Apache-2.0

// Command build builds the timeline of recordings (package
// analysis/timeline) and writes its JSON to stdout, its size and the
// series' point count to stderr, and with -png its charts (package
// report/png) into a directory, for bench/timeline/run.sh:
//
//	build [-per-cpu] [-max-points N] [-png DIR] FILE...
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/png"
)

func main() {
	var o timeline.Options
	flag.BoolVar(&o.PerCPU, "per-cpu", false, "series per CPU too")
	flag.IntVar(&o.MaxPoints, "max-points", 0, "buckets per series (0: the default)")
	pngDir := flag.String("png", "", "write the charts as PNG files into this directory")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: build [-per-cpu] [-max-points N] [-png DIR] FILE...")
		os.Exit(2)
	}
	tl, err := timeline.Build(flag.Args(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	c := &counter{w: w}
	if err := json.NewEncoder(c).Encode(tl); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	if *pngDir != "" {
		if _, err := png.Write(*pngDir, tl, png.Options{}); err != nil {
			fmt.Fprintln(os.Stderr, "build:", err)
			os.Exit(1)
		}
	}
	series, points := 0, 0
	for _, r := range tl.Runs {
		series += len(r.Series)
		for _, s := range r.Series {
			points += len(s.T)
		}
	}
	fmt.Fprintf(os.Stderr, "%d runs, %d series, %d points, %d bytes of JSON\n", len(tl.Runs), series, points, c.n)
}

type counter struct {
	w *bufio.Writer
	n int64
}

func (c *counter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.w.Write(b)
}
