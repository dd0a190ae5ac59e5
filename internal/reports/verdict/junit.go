// SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"encoding/xml"
	"io"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
}

// CasePath is the name JUnit gives a leaf: its parents' names and its own,
// joined by "." (as KTAP's nesting gives them).
func CasePath(path []string) string { return strings.Join(path, ".") }

// WriteJUnit writes the cases as JUnit XML: one <testsuite> per top-level
// case, holding its leaves as <testcase> elements, each named by the path
// below the suite (CasePath) with the suite as classname; a failed leaf
// has <failure message="reason">, a skipped one <skipped message="reason">,
// the diagnostic lines go to <system-out>. A top-level case without
// cases is a suite of itself.
func WriteJUnit(w io.Writer, name string, cases []*Case) error {
	if err := checkNames(cases); err != nil {
		return err
	}
	out := junitSuites{Name: name}
	for _, c := range cases {
		s := junitSuite{Name: c.Name}
		if len(c.Cases) == 0 {
			s.Cases = append(s.Cases, junitLeaf(c.Name, c, nil))
		}
		for _, sub := range c.Cases {
			walkLeaves(sub, nil, func(path []string, leaf *Case) {
				s.Cases = append(s.Cases, junitLeaf(c.Name, leaf, path))
			})
		}
		for _, jc := range s.Cases {
			s.Tests++
			if jc.Failure != nil {
				s.Failures++
			}
			if jc.Skipped != nil {
				s.Skipped++
			}
		}
		out.Tests, out.Failures, out.Skipped = out.Tests+s.Tests, out.Failures+s.Failures, out.Skipped+s.Skipped
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// walkLeaves calls fn with every leaf below c and its path from c.
func walkLeaves(c *Case, path []string, fn func([]string, *Case)) {
	path = append(path[:len(path):len(path)], c.Name)
	if len(c.Cases) == 0 {
		fn(path, c)
		return
	}
	for _, s := range c.Cases {
		walkLeaves(s, path, fn)
	}
}

func junitLeaf(suite string, c *Case, path []string) junitCase {
	name := c.Name
	if path != nil {
		name = CasePath(path)
	}
	jc := junitCase{Name: name, ClassName: suite}
	switch c.Result {
	case Fail:
		jc.Failure = &junitMessage{Message: oneLine(c.Reason)}
	case Skip:
		jc.Skipped = &junitMessage{Message: oneLine(c.Reason)}
	}
	if len(c.Diag) > 0 {
		jc.SystemOut = strings.Join(c.Diag, "\n")
	}
	return jc
}
