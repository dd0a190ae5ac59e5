// SPDX-License-Identifier: Apache-2.0

// Package tooltable reads the tables turbostat and `hwpprobe watch` print,
// one per sample, into rows of fields named by their columns, for tests
// that compare the tools' figures.
package tooltable

import (
	"strconv"
	"strings"
)

// Row is one printed row: its fields by column name. A row has no entry
// for a column it left blank.
type Row map[string]string

// Float returns the row's field in column col as a number ("0x..." read
// as hex), and whether the row has a number there.
func (r Row) Float(col string) (float64, bool) {
	f, ok := r[col]
	if !ok {
		return 0, false
	}
	if strings.HasPrefix(f, "0x") {
		v, err := strconv.ParseUint(f, 0, 64)
		return float64(v), err == nil
	}
	v, err := strconv.ParseFloat(f, 64)
	return v, err == nil
}

// Table is one sample: its rows in printed order.
type Table []Row

// CPU returns the row of CPU n (its CPU column reads n), or nil.
func (t Table) CPU(n int) Row {
	s := strconv.Itoa(n)
	for _, r := range t {
		if r["CPU"] == s {
			return r
		}
	}
	return nil
}

// Find returns the first row whose fields include every entry of match,
// or nil (for example {"CPU": "-"}: turbostat's summary row).
func (t Table) Find(match map[string]string) Row {
next:
	for _, r := range t {
		for k, v := range match {
			if r[k] != v {
				continue next
			}
		}
		return r
	}
	return nil
}

// Turbostat reads turbostat's output: tab-separated, a header line (one
// naming Bzy_MHz or PkgWatt) before each sample's rows; a row leaves out
// the trailing columns it has no value for (the package's columns on all
// but the package's first CPU).
func Turbostat(out string) []Table {
	return parse(out, TabFields)
}

// Watch reads `hwpprobe watch` output: a header line before each
// sample's rows, columns right-aligned under their names, blanks where a
// row has no value; lines starting with # are notes.
func Watch(out string) []Table {
	return parse(out, AlignedFields)
}

func parse(out string, fields func(header, line string) Row) []Table {
	var tbs []Table
	var header string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "":
		case strings.Contains(l, "Bzy_MHz") || strings.Contains(l, "PkgWatt"):
			header = l
			tbs = append(tbs, nil)
		case header != "":
			tbs[len(tbs)-1] = append(tbs[len(tbs)-1], fields(header, l))
		}
	}
	return tbs
}

// TabFields names a tab-separated line's fields by the header's.
func TabFields(header, line string) Row {
	names, vals := strings.Split(header, "\t"), strings.Split(line, "\t")
	r := Row{}
	for i, v := range vals {
		if v = strings.TrimSpace(v); i < len(names) && v != "" {
			r[strings.TrimSpace(names[i])] = v
		}
	}
	return r
}

// AlignedFields names the fields of a line of right-aligned columns: a
// field belongs to the column whose name ends where it ends.
func AlignedFields(header, line string) Row {
	names := words(header)
	r := Row{}
	for end, v := range words(line) {
		if name, ok := names[end]; ok {
			r[name] = v
		}
	}
	return r
}

// words returns s's space-separated words by the offset where each ends.
func words(s string) map[int]string {
	m := map[int]string{}
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		m[j] = s[i:j]
		i = j
	}
	return m
}
