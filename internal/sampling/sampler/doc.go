// SPDX-License-Identifier: Apache-2.0

// Package sampler turns the counters and registers that package source
// reads into turbostat's per-interval figures: per CPU Avg_MHz, Busy%,
// Bzy_MHz, TSC_MHz, IPC, CoreTmp, HWP_REQUEST and EPB; per package
// PkgWatt, CorWatt, GFXWatt, RAMWatt, PkgTmp and the limit-reason
// registers; and summaries per hybrid core type (P, E, LP-E) and for the
// whole machine.
//
// Data flows one way: sources -> Sampler -> Sample -> recording/report.
// The types in this file set (Sample, CPU, Package, Summary, Value, Reg,
// Info) are the stable, JSON-serialisable interface that recordings
// store. Sampler.Sample fills a caller-owned Sample and does not allocate
// once the Sample's slices have grown to size.
package sampler
