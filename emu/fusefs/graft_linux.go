package fusefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/emu/vfs"
)

// graftPoints are the real paths an emulated machine replaces, relative to
// the system root. Each is replaced whole: the emulated machine's view is
// authoritative there (a real /sys/class/powercap is hidden when the
// emulated machine has none). Everything else stays the real system's.
var graftPoints = []string{
	"dev/cpu",
	"sys/devices/system/cpu",
	"sys/devices/cpu_core",
	"sys/devices/cpu_atom",
	"sys/class/powercap",
	"proc/cpuinfo",
	"proc/stat",
}

// GraftPoints returns the paths, relative to the system root, that Graft
// replaces with the emulated tree's.
func GraftPoints() []string { return slices.Clone(graftPoints) }

// ErrOutsideGraft is returned by Graft when the emulated tree holds a file
// that no graft point covers, so programs would not see it.
var ErrOutsideGraft = errors.New("emulated file outside every graft point")

// Graft places the emulated tree, mounted at mnt, over the real paths
// GraftPoints names below root ("/" to run unchanged programs), with bind
// mounts. It must run in a private mount namespace (unshare(CLONE_NEWNS)
// and / made rprivate): the mounts it makes are meant to vanish with that
// namespace. A graft point missing on the real system (/sys/class/powercap
// on a machine without RAPL, /sys/devices/cpu_core on a non-hybrid one) is
// created; where its parent is read-only (sysfs), the parent is first
// replaced by a tmpfs that mirrors it, each original entry bind-mounted
// back. A point present on the real system but not in the emulated tree is
// hidden under an empty read-only tmpfs (or /dev/null for a file). It
// returns the mount points it made, innermost last.
func Graft(mnt, root string, tree *vfs.Dir) ([]string, error) {
	if err := checkCovered(tree, ""); err != nil {
		return nil, err
	}
	g := &grafter{}
	// Create every missing point first, so that a parent mirrored on a
	// tmpfs (which copies what is below it) is mirrored before anything
	// is grafted under it.
	for _, p := range graftPoints {
		if n, ok := tree.Walk(p); ok {
			_, isDir := n.(*vfs.Dir)
			if err := g.ensure(filepath.Join(root, p), isDir); err != nil {
				return g.mounts, err
			}
		}
	}
	for _, p := range graftPoints {
		target := filepath.Join(root, p)
		if _, ok := tree.Walk(p); !ok {
			if err := g.hide(target); err != nil {
				return g.mounts, err
			}
			continue
		}
		if err := g.mount(filepath.Join(mnt, p), target, "", unix.MS_BIND, ""); err != nil {
			return g.mounts, err
		}
	}
	return g.mounts, nil
}

// checkCovered reports tree entries below dir that no graft point covers.
func checkCovered(d *vfs.Dir, dir string) error {
	for _, name := range d.Names() {
		p := strings.TrimPrefix(dir+"/"+name, "/")
		if slices.Contains(graftPoints, p) {
			continue
		}
		n, _ := d.Lookup(name)
		sub, isDir := n.(*vfs.Dir)
		if !isDir || !slices.ContainsFunc(graftPoints, func(g string) bool { return strings.HasPrefix(g, p+"/") }) {
			return fmt.Errorf("fusefs: %s: %w", p, ErrOutsideGraft)
		}
		if err := checkCovered(sub, p); err != nil {
			return err
		}
	}
	return nil
}

type grafter struct{ mounts []string }

func (g *grafter) mount(src, target, fstype string, flags uintptr, data string) error {
	if err := unix.Mount(src, target, fstype, flags, data); err != nil {
		return fmt.Errorf("fusefs: mount %s on %s: %w", src, target, err)
	}
	g.mounts = append(g.mounts, target)
	return nil
}

// hide covers a real path the emulated machine does not have.
func (g *grafter) hide(target string) error {
	fi, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("fusefs: %w", err)
	case fi.IsDir():
		return g.mount("hwpemu", target, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=755,size=4k")
	default:
		return g.mount("/dev/null", target, "", unix.MS_BIND, "")
	}
}

// ensure makes target exist as a directory or a file.
func (g *grafter) ensure(target string, isDir bool) error {
	fi, err := os.Stat(target)
	if err == nil {
		if fi.IsDir() != isDir {
			return fmt.Errorf("fusefs: %s: real and emulated file types differ", target)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("fusefs: %w", err)
	}
	parent := filepath.Dir(target)
	if err := g.ensure(parent, true); err != nil {
		return err
	}
	if err := create(target, isDir); err == nil {
		return nil
	}
	// The parent cannot hold new entries (sysfs, procfs): mirror it on a
	// tmpfs, then create.
	if err := g.mirror(parent); err != nil {
		return err
	}
	if err := create(target, isDir); err != nil {
		return fmt.Errorf("fusefs: create %s on the mirror: %w", target, err)
	}
	return nil
}

func create(p string, isDir bool) error {
	if isDir {
		return os.Mkdir(p, 0o755)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
	if err != nil {
		return err
	}
	return f.Close()
}

// mirror replaces dir by a tmpfs holding the same entries: directories and
// files bind-mounted from the original, symbolic links copied.
func (g *grafter) mirror(dir string) (err error) {
	stage, err := os.MkdirTemp("", "hwpemu-mirror-")
	if err != nil {
		return fmt.Errorf("fusefs: %w", err)
	}
	defer func() {
		if uerr := unix.Unmount(stage, unix.MNT_DETACH); uerr != nil && err == nil {
			err = fmt.Errorf("fusefs: unmount %s: %w", stage, uerr)
		}
		os.Remove(stage)
	}()
	if err := unix.Mount(dir, stage, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("fusefs: bind %s for mirroring: %w", dir, err)
	}
	entries, err := os.ReadDir(stage)
	if err != nil {
		return fmt.Errorf("fusefs: %w", err)
	}
	if err := g.mount("hwpemu", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=755"); err != nil {
		return err
	}
	for _, e := range entries {
		src, dst := filepath.Join(stage, e.Name()), filepath.Join(dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(src)
			if err != nil {
				return fmt.Errorf("fusefs: %w", err)
			}
			if err := os.Symlink(t, dst); err != nil {
				return fmt.Errorf("fusefs: %w", err)
			}
			continue
		case e.IsDir():
			err = os.Mkdir(dst, 0o755)
		default:
			err = create(dst, false)
		}
		if err != nil {
			return fmt.Errorf("fusefs: mirror %s: %w", dst, err)
		}
		if err := g.mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
	}
	return nil
}
