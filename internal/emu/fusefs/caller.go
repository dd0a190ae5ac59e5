// SPDX-License-Identifier: Apache-2.0

package fusefs

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// callerOf returns the process behind a FUSE request: the header's pid is
// the writing thread's id (fs/fuse/dev.c: pid_nr_ns(task_pid(current),
// fc->pid_ns)); its thread group id comes from the Tgid line of
// proc/TID/status and its command name from proc/TID/comm, the name
// bpf_get_current_comm gives for the same thread. A thread that is gone
// gives its thread id and no name; a request without a header gives the
// zero Caller.
func callerOf(ctx context.Context, proc string) vfs.Caller {
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Pid == 0 {
		return vfs.Caller{}
	}
	return resolveCaller(proc, int(c.Pid))
}

// resolveCaller reads thread tid's thread group id and command name below
// the procfs mount proc.
func resolveCaller(proc string, tid int) vfs.Caller {
	dir := proc + "/" + strconv.Itoa(tid) + "/"
	out := vfs.Caller{PID: tid}
	if b, err := os.ReadFile(dir + "comm"); err == nil {
		out.Comm = strings.TrimSuffix(string(b), "\n")
	}
	b, err := os.ReadFile(dir + "status")
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Tgid:"); ok {
			if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && pid > 0 {
				out.PID = pid
			}
			break
		}
	}
	return out
}
