// SPDX-License-Identifier: Apache-2.0

// Package kernelsrc gives tests files of the kernel's source tree: the
// KTAP specification (Documentation/dev-tools/ktap.rst) and the kernel's
// KTAP parser (tools/testing/kunit/kunit.py), from Debian's linux-source
// package (scripts/install-deps.sh), extracted once into the user's
// cache.
package kernelsrc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Tarball is Debian 12's linux-source package's tree, and top the
// directory it holds.
const (
	Tarball = "/usr/src/linux-source-6.1.tar.xz"
	top     = "linux-source-6.1"
)

// Path returns where rel (a file or directory below the tree's top, such
// as "tools/testing/kunit") lies in the cache, extracting it from Tarball
// first when it is not there. It extracts into a temporary directory and
// renames, so that tests running at once never see half a file.
func Path(rel string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("kernel source: %w", err)
	}
	dir := filepath.Join(cache, "hwpprobe-linux-source")
	dst := filepath.Join(dir, top, rel)
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("kernel source: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "extract-")
	if err != nil {
		return "", fmt.Errorf("kernel source: %w", err)
	}
	defer os.RemoveAll(tmp)
	if out, err := exec.Command("tar", "-C", tmp, "-xJf", Tarball, filepath.Join(top, rel)).CombinedOutput(); err != nil {
		return "", fmt.Errorf("extract %s from %s (apt-get install linux-source): %w\n%s", rel, Tarball, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, top, rel), dst); err != nil {
		if _, serr := os.Stat(dst); serr != nil { // not another test's extraction
			return "", fmt.Errorf("kernel source: %w", err)
		}
	}
	return dst, nil
}
