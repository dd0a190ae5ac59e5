// SPDX-License-Identifier: Apache-2.0

package sigquit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoDirectNotify: no code of the module outside this package asks
// os/signal for signals itself (signal.Notify, signal.NotifyContext):
// those that do must go through Notify or NotifyContext, which hold
// SIGQUIT for as long as their handler is there. A direct call would let
// a SIGQUIT end the process with 131 while settings are changed (the
// handler never seeing it).
func TestNoDirectNotify(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == filepath.Join(root, "internal", "sigquit") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "signal" && (sel.Sel.Name == "Notify" || sel.Sel.Name == "NotifyContext") {
				t.Errorf("%s: signal.%s: use sigquit.%s", fset.Position(sel.Pos()), sel.Sel.Name, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
