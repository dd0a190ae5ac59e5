// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// WriteTree copies the tree d (Machine.Tree) into the directory dir as
// plain directories, files and symbolic links, with each file's content
// as a read gives it now, so that readers taking a root path (sysfs.FS,
// hwpprobe --root) see the machine without FUSE. A file whose read fails
// (an EPP the AMD table does not name) is left out, as a reader of the
// real file would get nothing from it. For tests: the copy no longer
// follows the model.
func WriteTree(d *vfs.Dir, dir string) error {
	for _, name := range d.Names() {
		n, _ := d.Lookup(name)
		p := filepath.Join(dir, name)
		switch n := n.(type) {
		case *vfs.Dir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return fmt.Errorf("write tree: %w", err)
			}
			if err := WriteTree(n, p); err != nil {
				return err
			}
		case *vfs.File:
			b, err := n.Read()
			if err != nil {
				continue
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return fmt.Errorf("write tree: %w", err)
			}
		case *vfs.Symlink:
			if err := os.Symlink(n.Target, p); err != nil {
				return fmt.Errorf("write tree: %w", err)
			}
		}
	}
	return nil
}
