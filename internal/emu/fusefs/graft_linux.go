// SPDX-License-Identifier: Apache-2.0

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

// stageDir is where, below root, Graft attaches the tree while it binds
// its parts: an existing directory, covered only while Graft runs.
const stageDir = "tmp"

// Graft places the emulated tree over the real paths GraftPoints names
// below root ("/" to run unchanged programs), with bind mounts. mnt is the
// tree's mount as New made it, attached nowhere; the caller must be a
// process other than the server (Graft looks up files of the tree), in a
// private mount namespace (unshare(CLONE_NEWNS) and / made rprivate): the
// mounts it makes are meant to vanish with that namespace. Graft creates
// nothing on any file system the namespace shares with others: while it
// runs, the tree is attached over root/tmp (in the private namespace only);
// a graft point missing on the real system (/sys/class/powercap on a
// machine without RAPL, /sys/devices/cpu_core on a non-hybrid one, /dev/cpu
// without the msr driver) is made on a tmpfs that replaces its parent and
// mirrors it, each original entry bind-mounted back. A point present on the
// real system but not in the emulated tree is hidden under an empty
// read-only tmpfs (or /dev/null for a file). It returns the mount points it
// made, innermost last.
func Graft(mnt *os.File, root string) (mounts []string, err error) {
	fd := int(mnt.Fd())
	if err := checkCovered(fd, ""); err != nil {
		return nil, err
	}
	kinds := map[string]bool{} // graft points the tree has: is a directory
	for _, p := range graftPoints {
		var st unix.Stat_t
		err := unix.Fstatat(fd, p, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("fusefs: emulated %s: %w", p, err)
		}
		kinds[p] = st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	g := &grafter{ours: map[string]bool{}}
	// Create every missing point first, so that a parent mirrored on a
	// tmpfs (which copies what is below it) is mirrored before anything
	// is grafted under it.
	for _, p := range graftPoints {
		if isDir, ok := kinds[p]; ok {
			if err := g.ensure(filepath.Join(root, p), isDir); err != nil {
				return g.mounts, err
			}
		}
	}
	stage := filepath.Join(root, stageDir)
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, stage, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return g.mounts, fmt.Errorf("fusefs: attach the tree at %s: %w", stage, err)
	}
	defer func() {
		if uerr := unix.Unmount(stage, unix.MNT_DETACH); uerr != nil && err == nil {
			err = fmt.Errorf("fusefs: detach the tree from %s: %w", stage, uerr)
		}
	}()
	for _, p := range graftPoints {
		target := filepath.Join(root, p)
		if _, ok := kinds[p]; !ok {
			if err := g.hide(target); err != nil {
				return g.mounts, err
			}
			continue
		}
		if err := g.mount(filepath.Join(stage, p), target, "", unix.MS_BIND, ""); err != nil {
			return g.mounts, err
		}
	}
	return g.mounts, nil
}

// checkCovered reports entries of the tree mounted at mnt, below dir, that
// no graft point covers.
func checkCovered(mnt int, dir string) error {
	ents, err := readDirAt(mnt, dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := strings.TrimPrefix(dir+"/"+e.Name(), "/")
		if slices.Contains(graftPoints, p) {
			continue
		}
		if !e.IsDir() || !slices.ContainsFunc(graftPoints, func(g string) bool { return strings.HasPrefix(g, p+"/") }) {
			return fmt.Errorf("fusefs: %s: %w", p, ErrOutsideGraft)
		}
		if err := checkCovered(mnt, p); err != nil {
			return err
		}
	}
	return nil
}

// readDirAt lists the directory dir below the directory descriptor at.
func readDirAt(at int, dir string) ([]fs.DirEntry, error) {
	if dir == "" {
		dir = "."
	}
	fd, err := unix.Openat(at, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("fusefs: open emulated %s: %w", dir, err)
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("fusefs: list emulated %s: %w", dir, err)
	}
	return ents, nil
}

// grafter makes the mounts of one Graft.
type grafter struct {
	mounts []string
	ours   map[string]bool // directories on a tmpfs Graft mounted
}

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

// ensure makes target exist as a directory or a file. A missing target is
// made only on a tmpfs Graft mounted: its parent is first replaced by a
// mirror, so nothing is ever created on a real file system (devtmpfs, for
// one, is shared by every mount namespace).
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
	if parent == target || parent == "/" {
		return fmt.Errorf("fusefs: %s is missing and its parent cannot be mirrored", target)
	}
	if err := g.ensure(parent, true); err != nil {
		return err
	}
	if !g.ours[parent] {
		if err := g.mirror(parent); err != nil {
			return err
		}
	}
	if err := create(target, isDir); err != nil {
		return fmt.Errorf("fusefs: create %s on the mirror: %w", target, err)
	}
	if isDir {
		g.ours[target] = true
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

// Mirror replaces dir, in the caller's mount namespace, by a tmpfs
// holding the same entries but except (none when ""): directories and
// files bind-mounted from the original with what is mounted below them,
// symbolic links copied. What is created in dir afterwards stays on the
// tmpfs. hwpemu run gives each session its own /run/hwpprobe so.
func Mirror(dir, except string) error {
	g := grafter{ours: map[string]bool{}}
	return g.mirrorExcept(dir, except)
}

// mirror replaces dir by a tmpfs holding the same entries (Mirror).
func (g *grafter) mirror(dir string) error { return g.mirrorExcept(dir, "") }

// mirrorExcept is Mirror. The original stays reachable, under the tmpfs,
// through a descriptor opened before (/proc/self/fd/N leads to it), so no
// staging directory is needed.
func (g *grafter) mirrorExcept(dir, except string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fusefs: %w", err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return fmt.Errorf("fusefs: %w", err)
	}
	if err := g.mount("hwpemu", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=755"); err != nil {
		return err
	}
	g.ours[dir] = true
	orig := fmt.Sprintf("/proc/self/fd/%d", d.Fd())
	for _, e := range entries {
		src, dst := filepath.Join(orig, e.Name()), filepath.Join(dir, e.Name())
		switch {
		case e.Name() == except:
			continue
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
