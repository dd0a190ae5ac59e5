// SPDX-License-Identifier: Apache-2.0

// Package fusefs serves an emulated machine's file tree (package emu/vfs)
// through FUSE, so that unchanged programs (hwpprobe, turbostat,
// x86_energy_perf_policy, cat) read it with ordinary system calls.
//
// Semantics follow the kernel files being imitated:
//   - Devices (/dev/cpu/N/msr, /dev/cpu/N/cpuid) are opened with direct I/O,
//     so every pread reaches the emulator with its own offset and length
//     (the msr driver's contract: 8 bytes at offset = MSR number). Errors
//     such as EIO for a register the machine lacks reach the reader
//     unchanged. They are presented as regular files: a FUSE character
//     device would be opened through the real driver its rdev names.
//   - Files behave like sysfs attributes: the content is produced when a
//     read starts at offset 0 and kept for the rest of that open file, the
//     reported size is 4096 as sysfs reports, each write(2) is one store,
//     and truncation (O_TRUNC, as a shell's `>` does) is accepted and
//     ignored. Opening a file that has no Write function for writing fails
//     with EACCES, as kernfs does.
//   - A write is handed to the tree with the writing process (vfs.Caller):
//     the FUSE request header's pid (the writing thread, in the server's
//     pid namespace) resolved through /proc to its thread group id and
//     command name.
//   - Errors from the tree that are syscall.Errno values (EBUSY, EINVAL,
//     EIO) are returned to the caller's read(2) or write(2) unchanged; any
//     other error becomes EIO.
//   - Nothing is cached by the kernel: entry and attribute timeouts are
//     zero and every file is opened with direct I/O, so counters advance
//     between reads.
package fusefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// attrSize is the size stat(2) reports for a sysfs attribute (one page).
const attrSize = 4096

// Options configure a mount.
type Options struct {
	// Name is the mount's source as /proc/self/mountinfo shows it
	// ("hwpemu" when empty); the filesystem type is fuse.hwpemu.
	Name string
	// Debug logs every FUSE request to stderr.
	Debug bool
	// SelfReader is for tests whose own process reads the mount it
	// serves. Mount then does what go-fuse's fs.Mount does: it opens,
	// polls and closes a file of the new mount once, so that the kernel
	// learns the server has no poll operation before the caller's Go code
	// opens a file there (the runtime's epoll_ctl on such a file waits
	// for the server's answer while holding its P, and a garbage
	// collection waits for that P: the process deadlocks). A process that
	// serves and reads its own mount can hang for ever if it is killed
	// while closing one of its files; programs must never do it (see New).
	SelfReader bool
}

// Server serves a tree through one FUSE connection.
type Server struct {
	srv *fuse.Server
	mnt *os.File // the detached mount New made; nil once attached
	dir string   // where Mount attached it; "" for New
}

// New makes a FUSE file system serving root and serves it, without
// attaching it anywhere: MountFD is its mount, detached (fsmount(2)), for
// another process to attach with move_mount(2) (Graft does). The caller
// needs CAP_SYS_ADMIN. The file system uses allow_other (other users in
// the mount namespace, such as a workload run as SUDO_UID, can read) and
// default_permissions (the kernel checks the mode bits: the msr devices are
// 0600 root); its type is fuse.hwpemu.
//
// A server must never look up, open or close a file of its own mount: a
// close(2) on FUSE waits for the server's answer to FLUSH without any
// timeout, so a server that is being killed while it closes one of its own
// files waits for itself for ever, in uninterruptible sleep, holding the
// connection (go-fuse's fs.Mount does exactly that once, in WaitMount's
// poll hack). New touches no path of the tree; programs that read it must
// be other processes. Its /dev/fuse descriptor is close-on-exec, so no
// program the caller starts holds the connection: when the server dies,
// the connection ends and every reader gets ENOTCONN.
func New(root *vfs.Dir, opt Options) (*Server, error) {
	if root == nil {
		return nil, errors.New("fusefs: nil tree")
	}
	name := opt.Name
	if name == "" {
		name = "hwpemu"
	}
	dev, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("fusefs: open /dev/fuse: %w", err)
	}
	mnt, err := newMount(dev, name)
	if err != nil {
		unix.Close(dev)
		return nil, err
	}
	zero := time.Duration(0)
	t := &tree{inos: map[vfs.Node]uint64{}, next: 2}
	opts := &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName:       name,
			Name:         "hwpemu",
			Debug:        opt.Debug,
			MaxReadAhead: 0,
		},
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		RootStableAttr:  &fs.StableAttr{Ino: 1},
	}
	// "/dev/fd/N" tells go-fuse the connection is already mounted: it
	// serves descriptor N and, unlike fs.Mount, never opens the mount.
	srv, err := fuse.NewServer(fs.NewNodeFS(&dirNode{t: t, d: root}, opts), "/dev/fd/"+strconv.Itoa(dev), &opts.MountOptions)
	if err != nil { // NewServer has closed dev
		mnt.Close()
		return nil, fmt.Errorf("fusefs: serve: %w", err)
	}
	go srv.Serve()
	return &Server{srv: srv, mnt: mnt}, nil
}

// newMount creates the FUSE file system on the connection dev and returns
// its mount, attached nowhere.
func newMount(dev int, source string) (*os.File, error) {
	fsfd, err := unix.Fsopen("fuse", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("fusefs: fsopen fuse: %w", err)
	}
	defer unix.Close(fsfd)
	for _, kv := range [][2]string{
		{"source", source}, {"subtype", "hwpemu"}, {"fd", strconv.Itoa(dev)},
		{"rootmode", "40000"}, {"user_id", strconv.Itoa(os.Geteuid())}, {"group_id", strconv.Itoa(os.Getegid())},
	} {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("fusefs: fuse option %s=%s: %w", kv[0], kv[1], err)
		}
	}
	for _, f := range []string{"allow_other", "default_permissions"} {
		if err := unix.FsconfigSetFlag(fsfd, f); err != nil {
			return nil, fmt.Errorf("fusefs: fuse option %s: %w", f, err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return nil, fmt.Errorf("fusefs: create the fuse file system: %w", err)
	}
	m, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return nil, fmt.Errorf("fusefs: fsmount: %w", err)
	}
	return os.NewFile(uintptr(m), "fusefs mount"), nil
}

// Mount serves root at the existing directory dir until Unmount: New,
// then the mount attached at dir. The calling process must not read the
// tree itself (see New).
func Mount(dir string, root *vfs.Dir, opt Options) (*Server, error) {
	s, err := New(root, opt)
	if err != nil {
		return nil, err
	}
	err = unix.MoveMount(int(s.mnt.Fd()), "", unix.AT_FDCWD, dir, unix.MOVE_MOUNT_F_EMPTY_PATH)
	s.mnt.Close()
	s.mnt = nil
	if err != nil {
		// The detached mount is gone with its descriptor: the file
		// system ends and the server with it.
		return nil, fmt.Errorf("fusefs: mount at %s: %w", dir, err)
	}
	s.dir = dir
	if opt.SelfReader {
		if err := learnNoPoll(dir); err != nil {
			s.Unmount()
			return nil, err
		}
	}
	return s, nil
}

// learnNoPoll makes the server answer one POLL (ENOSYS: go-fuse answers it
// for its special file), after which the kernel sends none. It uses the
// syscall package, which bypasses the Go poller.
func learnNoPoll(dir string) error {
	fd, err := syscall.Open(filepath.Join(dir, ".go-fuse-epoll-hack"), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("fusefs: poll once: %w", err)
	}
	unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
	return syscall.Close(fd)
}

// MountFD returns the detached mount New made (nil for Mount's server).
// The caller passes it to the process that attaches it, then closes it.
func (s *Server) MountFD() *os.File { return s.mnt }

// Dir returns the mount point ("" for a server made by New).
func (s *Server) Dir() string { return s.dir }

// Unmount unmounts the tree Mount attached. If the file system is busy it
// detaches it lazily (the mount disappears from the namespace now and the
// file system ends when the last open file is closed). The server stops
// when the file system ends.
func (s *Server) Unmount() error {
	if s.dir == "" {
		return nil
	}
	if err := unix.Unmount(s.dir, 0); err != nil {
		if derr := unix.Unmount(s.dir, unix.MNT_DETACH); derr != nil {
			return fmt.Errorf("fusefs: unmount %s: %w (lazy unmount: %v)", s.dir, err, derr)
		}
	}
	s.dir = ""
	return nil
}

// Wait blocks until the server stops: when its file system ends (every
// mount of it gone, by Unmount or from outside).
func (s *Server) Wait() { s.srv.Wait() }

// tree holds per-mount state: stable inode numbers for the tree's nodes,
// so a node looked up twice is the same inode.
type tree struct {
	mu   sync.Mutex
	inos map[vfs.Node]uint64
	next uint64
}

func (t *tree) ino(n vfs.Node) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.inos[n]; ok {
		return i
	}
	i := t.next
	t.next++
	t.inos[n] = i
	return i
}

// errno maps an error from the tree to the errno the caller sees.
func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

func setAttr(out *fuse.Attr, ino uint64, mode uint32, size uint64) {
	out.Ino = ino
	out.Mode = mode
	out.Size = size
	out.Nlink = 1
	out.Blksize = 4096
}

// dirNode is a vfs.Dir.
type dirNode struct {
	fs.Inode
	t *tree
	d *vfs.Dir
}

var (
	_ fs.NodeLookuper  = (*dirNode)(nil)
	_ fs.NodeReaddirer = (*dirNode)(nil)
	_ fs.NodeGetattrer = (*dirNode)(nil)
)

func (n *dirNode) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setAttr(&out.Attr, n.StableAttr().Ino, syscall.S_IFDIR|0o755, 0)
	out.Nlink = 2
	return 0
}

func (n *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, ok := n.d.Lookup(name)
	if !ok {
		return nil, syscall.ENOENT
	}
	ino := n.t.ino(c)
	var (
		op   fs.InodeEmbedder
		mode uint32
	)
	switch c := c.(type) {
	case *vfs.Dir:
		op, mode = &dirNode{t: n.t, d: c}, syscall.S_IFDIR
		setAttr(&out.Attr, ino, syscall.S_IFDIR|0o755, 0)
	case *vfs.File:
		op, mode = &fileNode{f: c}, syscall.S_IFREG
		setAttr(&out.Attr, ino, syscall.S_IFREG|uint32(c.Mode.Perm()), attrSize)
	case *vfs.Device:
		op, mode = &deviceNode{d: c}, syscall.S_IFREG
		setAttr(&out.Attr, ino, syscall.S_IFREG|uint32(c.Mode.Perm()), 0)
	case *vfs.Symlink:
		op, mode = &symlinkNode{s: c}, syscall.S_IFLNK
		setAttr(&out.Attr, ino, syscall.S_IFLNK|0o777, uint64(len(c.Target)))
	default:
		return nil, syscall.EIO
	}
	return n.NewInode(ctx, op, fs.StableAttr{Mode: mode, Ino: ino}), 0
}

func (n *dirNode) Readdir(context.Context) (fs.DirStream, syscall.Errno) {
	names := n.d.Names()
	entries := make([]fuse.DirEntry, 0, len(names))
	for _, name := range names {
		c, ok := n.d.Lookup(name)
		if !ok {
			continue // removed meanwhile
		}
		var mode uint32
		switch c.(type) {
		case *vfs.Dir:
			mode = syscall.S_IFDIR
		case *vfs.Symlink:
			mode = syscall.S_IFLNK
		default:
			mode = syscall.S_IFREG
		}
		entries = append(entries, fuse.DirEntry{Name: name, Mode: mode, Ino: n.t.ino(c)})
	}
	return fs.NewListDirStream(entries), 0
}

// fileNode is a vfs.File with sysfs attribute semantics.
type fileNode struct {
	fs.Inode
	f *vfs.File
}

var (
	_ fs.NodeOpener    = (*fileNode)(nil)
	_ fs.NodeGetattrer = (*fileNode)(nil)
	_ fs.NodeSetattrer = (*fileNode)(nil)
	_ fs.NodeReader    = (*fileNode)(nil)
	_ fs.NodeWriter    = (*fileNode)(nil)
)

func (n *fileNode) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setAttr(&out.Attr, n.StableAttr().Ino, syscall.S_IFREG|uint32(n.f.Mode.Perm()), attrSize)
	return 0
}

// Setattr accepts truncation (a shell's `>` opens with O_TRUNC) and
// ignores it, as sysfs does; other changes are refused.
func (n *fileNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if in.Valid&^(fuse.FATTR_SIZE|fuse.FATTR_FH|fuse.FATTR_LOCKOWNER|fuse.FATTR_ATIME|fuse.FATTR_MTIME|fuse.FATTR_ATIME_NOW|fuse.FATTR_MTIME_NOW|fuse.FATTR_CTIME) != 0 {
		return syscall.EPERM
	}
	return n.Getattr(ctx, fh, out)
}

// openFlags are every open file's: direct I/O (each read reaches the
// tree) and no FLUSH on close. A close(2) waits for the answer to FLUSH
// with no timeout and cannot be interrupted, so a reader closing a file
// while the server is stopped (SIGSTOP, a debugger) would be stuck until
// it resumes; the tree has nothing to flush (each write is stored at once),
// so closes never wait for the server (FOPEN_NOFLUSH, Linux 5.16).
const openFlags = fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH

// fileHandle keeps the content produced by the read at offset 0, so a
// reader that reads in several pieces sees one consistent value.
type fileHandle struct {
	mu      sync.Mutex
	content []byte
	valid   bool
}

func (n *fileNode) Open(_ context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	acc := flags & syscall.O_ACCMODE
	if (acc == syscall.O_WRONLY || acc == syscall.O_RDWR) && !n.f.Writable() {
		return nil, 0, syscall.EACCES
	}
	if (acc == syscall.O_RDONLY || acc == syscall.O_RDWR) && n.f.Read == nil {
		return nil, 0, syscall.EACCES
	}
	return &fileHandle{}, openFlags, 0
}

func (n *fileNode) Read(_ context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h, ok := f.(*fileHandle)
	if !ok {
		return nil, syscall.EBADF
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if off == 0 || !h.valid {
		b, err := n.f.Read()
		if err != nil {
			return nil, errno(err)
		}
		h.content, h.valid = b, true
	}
	if off >= int64(len(h.content)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(h.content)))
	return fuse.ReadResultData(h.content[off:end]), 0
}

// Write applies one write(2) as one store, whatever the offset, as sysfs
// does for attributes, telling the tree which process writes (callerOf).
func (n *fileNode) Write(ctx context.Context, _ fs.FileHandle, data []byte, _ int64) (uint32, syscall.Errno) {
	if !n.f.Writable() {
		return 0, syscall.EACCES
	}
	if err := n.f.Store(callerOf(ctx, "/proc"), append([]byte(nil), data...)); err != nil {
		return 0, errno(err)
	}
	return uint32(len(data)), 0
}

// deviceNode is a vfs.Device: each read is answered on its own.
type deviceNode struct {
	fs.Inode
	d *vfs.Device
}

var (
	_ fs.NodeOpener    = (*deviceNode)(nil)
	_ fs.NodeGetattrer = (*deviceNode)(nil)
	_ fs.NodeReader    = (*deviceNode)(nil)
)

func (n *deviceNode) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setAttr(&out.Attr, n.StableAttr().Ino, syscall.S_IFREG|uint32(n.d.Mode.Perm()), 0)
	return 0
}

// Open refuses writing: the emulated devices are read-only (hwpprobe never
// writes an MSR).
func (n *deviceNode) Open(_ context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if acc := flags & syscall.O_ACCMODE; acc != syscall.O_RDONLY {
		return nil, 0, syscall.EPERM
	}
	return nil, openFlags, 0
}

func (n *deviceNode) Read(_ context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	k, err := n.d.ReadAt(dest, off)
	if err != nil && k == 0 {
		return nil, errno(err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// symlinkNode is a vfs.Symlink.
type symlinkNode struct {
	fs.Inode
	s *vfs.Symlink
}

var (
	_ fs.NodeReadlinker = (*symlinkNode)(nil)
	_ fs.NodeGetattrer  = (*symlinkNode)(nil)
)

func (n *symlinkNode) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setAttr(&out.Attr, n.StableAttr().Ino, syscall.S_IFLNK|0o777, uint64(len(n.s.Target)))
	return 0
}

func (n *symlinkNode) Readlink(context.Context) ([]byte, syscall.Errno) {
	return []byte(n.s.Target), 0
}
