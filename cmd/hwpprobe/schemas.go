// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
	"github.com/hwpprobe/hwpprobe/internal/schema"
)

// jsonOutput is one JSON document hwpprobe prints, its schema's name and
// file under docs/schemas/ (made from typ by internal/schema; the tests
// check the committed file and validate the commands' real output).
type jsonOutput struct {
	name, file, title string
	typ               any
}

// jsonOutputs are every JSON document hwpprobe prints.
var jsonOutputs = []jsonOutput{
	{"hwpprobe-snapshot/1", "snapshot.schema.json", "hwpprobe snapshot --format json", snapshot.Snapshot{}},
	{"hwpprobe-decode/1", "decode.schema.json", "hwpprobe decode --format json", []regs.Decoded{}},
	{"hwpprobe-trace/1", "trace.schema.json", "one line of hwpprobe trace --format json (JSON lines: writes, tracepoint events, then the summary)", schema.AnyOf(tracefmt.JSONLines)},
	{"hwpprobe-matrix/1", "matrix.schema.json", "hwpprobe matrix --format json", []*profile.Verification{}},
	{"hwpprobe-profiles/1", "profiles.schema.json", "hwpprobe profiles --format json", profile.Catalog{}},
	{report.StatSchema, "stat.schema.json", "hwpprobe stat --format json", report.StatJSON{}},
	{verdict.Schema, "conform.schema.json", "hwpprobe conform -o json=FILE", verdict.Document{}},
	{report.SchemaN, "diff.schema.json", "hwpprobe diff/explain -o json=FILE (hwpprobe-diff/1 for two sides, hwpprobe-diff/2 for more)", report.DiffJSON{}},
}
