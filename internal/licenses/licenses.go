// SPDX-License-Identifier: Apache-2.0

// Package licenses checks the licences of the modules hwpprobe is built
// from and the SPDX-License-Identifier lines of its own source files
// (docs/packaging.md, "Licences").
//
// A module's licence is what github.com/google/licensecheck recognises in
// the licence files at the root of its directory in the module cache
// (LICENSE, LICENCE, COPYING, with any suffix). A module whose files name
// no licence, or whose text is mostly not a licence licensecheck knows,
// is unknown; so is one whose licence is not on the caller's allow-list.
package licenses

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/licensecheck"
)

// Allowed is the project's allow-list: the licences (SPDX IDs, as
// licensecheck names them) a dependency may have.
var Allowed = []string{
	"Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "MIT", "MPL-2.0",
	"OFL-1.1",   // the Liberation fonts gonum/plot embeds
	"CC-BY-4.0", // github.com/ajstarks/svgo (gonum/plot's SVG backend): attribution only
	"FTL",       // github.com/golang/freetype, chosen of its FTL or GPL-2.0-or-later
}

// Reviewed names, for the modules whose root licence files are not all
// licence text, the files that hold their licence, read instead (each
// was read by hand; the reason is with it).
var Reviewed = map[string][]string{
	// LICENSE is CC-BY-4.0's text; LICENSE-link.txt a three-line notice
	// pointing to it.
	"github.com/ajstarks/svgo": {"LICENSE"},
	// LICENSE offers "exactly one of" the FreeType License or the GPL,
	// with their texts in licenses/; hwpprobe takes the FreeType License.
	"github.com/golang/freetype": {"licenses/ftl.txt"},
}

// MinCoverage is the percentage of a licence file's text that licensecheck
// must recognise as licences: below it, the file holds text nobody
// checked (an added clause, an unknown licence).
const MinCoverage = 75

// Module is one module of the build.
type Module struct {
	Path    string
	Version string // empty for the main module
	Dir     string // its files (the module cache, or the main module's root)
}

// Licence is what a module's licence files say.
type Licence struct {
	Module Module
	IDs    []string // licensecheck's IDs, sorted, each once
	Files  []string // the licence files read, relative to Module.Dir
}

// BuildModules returns the modules that provide a package to the build
// of patterns (with their tests) in the main module at dir, from
// `go list -deps -test`; the go command has them in the module cache.
// (`go list -m all` also lists modules of which only the go.mod file is
// read, which the module cache does not hold.)
func BuildModules(goCmd, dir string, patterns ...string) ([]Module, error) {
	args := append([]string{"list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}}\t{{.Version}}\t{{.Dir}}{{end}}"}, patterns...)
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	seen := map[string]bool{}
	var mods []Module
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 || seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		if f[2] == "" {
			return nil, fmt.Errorf("module %s %s: not in the module cache", f[0], f[1])
		}
		mods = append(mods, Module{Path: f[0], Version: f[1], Dir: f[2]})
	}
	slices.SortFunc(mods, func(a, b Module) int { return strings.Compare(a.Path, b.Path) })
	return mods, sc.Err()
}

// isLicenceFile reports whether name is a licence file's name: LICENSE,
// LICENCE, COPYING or UNLICENSE, alone or followed by '.', '-' or '_' and
// more (LICENSE.txt, LICENSE-APACHE), but not Go source (license.go).
func isLicenceFile(name string) bool {
	u := strings.ToUpper(name)
	if strings.HasSuffix(u, ".GO") {
		return false
	}
	for _, p := range []string{"LICENSE", "LICENCE", "COPYING", "UNLICENSE"} {
		if rest, ok := strings.CutPrefix(u, p); ok && (rest == "" || strings.ContainsRune(".-_", rune(rest[0]))) {
			return true
		}
	}
	return false
}

// licenceFiles returns the names of m's licence files, relative to m.Dir:
// Reviewed's list for m, else the licence files at its root.
func licenceFiles(m Module) ([]string, error) {
	if files, ok := Reviewed[m.Path]; ok {
		return files, nil
	}
	ents, err := os.ReadDir(m.Dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if !e.IsDir() && isLicenceFile(e.Name()) {
			files = append(files, e.Name())
		}
	}
	return files, nil
}

// ErrUnknown is the error of a module whose licence is not known: no
// licence file, a text licensecheck does not recognise, or a licence not
// allowed.
var ErrUnknown = errors.New("unknown licence")

// Classify reads m's licence files and names their licences. It fails
// with ErrUnknown when there is no licence file, a file names none, or
// less than MinCoverage percent of a file is licence text.
func Classify(m Module) (Licence, error) {
	l := Licence{Module: m}
	files, err := licenceFiles(m)
	if err != nil {
		return l, fmt.Errorf("module %s: %w", m.Path, err)
	}
	for _, name := range files {
		text, err := os.ReadFile(filepath.Join(m.Dir, name))
		if err != nil {
			return l, fmt.Errorf("module %s: %w", m.Path, err)
		}
		cov := licensecheck.Scan(text)
		if len(cov.Match) == 0 || cov.Percent < MinCoverage {
			return l, fmt.Errorf("module %s: %s: %.0f%% recognised as licence text (%s): %w", m.Path, name, cov.Percent, ids(cov), ErrUnknown)
		}
		l.Files = append(l.Files, name)
		for _, mt := range cov.Match {
			if !slices.Contains(l.IDs, mt.ID) {
				l.IDs = append(l.IDs, mt.ID)
			}
		}
	}
	if len(l.Files) == 0 {
		return l, fmt.Errorf("module %s: no licence file (LICENSE, LICENCE, COPYING) at its root: %w", m.Path, ErrUnknown)
	}
	slices.Sort(l.IDs)
	return l, nil
}

// ids lists cov's licence IDs for a message.
func ids(cov licensecheck.Coverage) string {
	var s []string
	for _, m := range cov.Match {
		s = append(s, m.ID)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// Check classifies every module and returns their licences, and an
// error (wrapping ErrUnknown where that is the cause) naming each module
// whose licence is unknown or not in allowed.
func Check(mods []Module, allowed []string) ([]Licence, error) {
	var ls []Licence
	var errs []error
	for _, m := range mods {
		l, err := Classify(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, id := range l.IDs {
			if !slices.Contains(allowed, id) {
				errs = append(errs, fmt.Errorf("module %s: %s is not on the allow-list: %w", m.Path, id, ErrUnknown))
			}
		}
		ls = append(ls, l)
	}
	return ls, errors.Join(errs...)
}

// spdxTag starts the line every source file has near its top.
const spdxTag = "SPDX-License-Identifier:"

// Vendored are the tracked files that are someone else's, unchanged, with
// their licence beside them; they carry no SPDX line of ours.
var Vendored = map[string]string{
	"internal/reports/report/htmlreport/assets/uPlot.iife.min.js": "internal/reports/report/htmlreport/assets/uPlot.LICENSE",
	"internal/reports/report/htmlreport/assets/uPlot.min.css":     "internal/reports/report/htmlreport/assets/uPlot.LICENSE",
}

// IsSource reports whether the file at path (slash-separated, relative to
// the repository) is source code that must carry an SPDX line: Go, C,
// shell, Python, JavaScript, CSS, Go templates, Makefiles and .ci/run.
func IsSource(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".c", ".h", ".sh", ".py", ".js", ".mjs", ".css", ".tmpl":
		return true
	}
	return filepath.Base(path) == "Makefile" || path == ".ci/run"
}

// MissingSPDX returns the source files among paths (relative to root)
// whose first 5 lines have no SPDX-License-Identifier line, leaving out
// Vendored files and generated Go files ("// Code generated ... DO NOT
// EDIT."), which are what their generator's input says.
func MissingSPDX(root string, paths []string) ([]string, error) {
	var missing []string
	for _, p := range paths {
		if !IsSource(p) || Vendored[p] != "" {
			continue
		}
		text, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return nil, fmt.Errorf("spdx: %w", err)
		}
		head := text
		for i, n := 0, 0; i < len(text); i++ {
			if text[i] == '\n' {
				if n++; n == 5 {
					head = text[:i]
					break
				}
			}
		}
		if bytes.HasPrefix(text, []byte("// Code generated ")) && bytes.Contains(head, []byte("DO NOT EDIT.")) {
			continue
		}
		if !bytes.Contains(head, []byte(spdxTag)) {
			missing = append(missing, p)
		}
	}
	return missing, nil
}
