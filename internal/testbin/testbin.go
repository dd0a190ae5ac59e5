// SPDX-License-Identifier: Apache-2.0

// Package testbin builds the project's commands for end-to-end tests, the
// way the Makefile builds them: pure Go (CGO_ENABLED=0). A cgo hwpemu
// deadlocks inside its own mount namespace (see cmd/hwpemu/cgo_guard.go),
// so every test that runs a built binary must go through here.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles the package at pkg (a path such as "../hwpemu" or
// "github.com/hwpprobe/hwpprobe/cmd/hwpemu") into dir and returns the
// binary's path, named after the package directory.
func Build(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	if pkg == "." {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		bin = filepath.Join(dir, filepath.Base(wd))
	}
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}
