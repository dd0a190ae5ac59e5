// SPDX-License-Identifier: Apache-2.0

// Command gen writes a synthetic recording (package internal/synth) or
// decompresses a recording's zstd payloads alone, or decodes every record
// of it doing nothing with them (the reader's raw decode), for
// bench/recording/run.sh and bench/diff/run.sh:
//
//	gen -cpus 512 -seconds 600 -o x.rec
//	gen -inflate x.rec
//	gen -scan x.rec
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/synth"
)

func main() {
	c := synth.Config{Hz: 10, TracePerSecond: 20}
	flag.IntVar(&c.CPUs, "cpus", 14, "CPUs")
	flag.Float64Var(&c.Hz, "hz", 10, "samples a second")
	flag.IntVar(&c.Seconds, "seconds", 60, "length of the run")
	flag.Uint64Var(&c.Seed, "seed", 1, "random seed")
	flag.BoolVar(&c.Unrounded, "unrounded", false, "keep every digit of the figures (as format 1.0 stored them)")
	out := flag.String("o", "", "write the recording here")
	inflate := flag.String("inflate", "", "decompress this recording's zstd payloads, decoding nothing")
	scan := flag.String("scan", "", "decode every record of this recording (recording.ScanFile), keeping nothing")
	flag.Parse()
	var err error
	if *scan != "" {
		_, err = recording.ScanFile(*scan, func(recording.Record) error { return nil })
	} else {
		err = run(c, *out, *inflate)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(c synth.Config, out, inflate string) error {
	if inflate != "" {
		return synth.Inflate(inflate)
	}
	if out == "" || c.CPUs < 1 || c.Hz < 1 || c.Seconds < 0 {
		return fmt.Errorf("usage: gen -cpus N -seconds S -o FILE | gen -inflate FILE | gen -scan FILE")
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := synth.Write(w, c); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
