// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/runctx"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
	"github.com/hwpprobe/hwpprobe/perfcount"
)

// ErrExists is wrapped by CreateOutput's error for a file that exists
// when it may not be replaced.
var ErrExists = atomicfile.ErrExists

// existsError says how to replace a file that exists.
type existsError struct{ path string }

func (e existsError) Error() string { return e.path + " exists (use --force to overwrite it)" }
func (e existsError) Unwrap() error { return ErrExists }

// Output is a recording file being written: it appears under its name
// once its header is written, and is removed by Abort unless Close ended
// it.
type Output struct {
	file *atomicfile.File
	W    *recording.Writer
}

// CreateOutput starts a recording file at path with meta as its header:
// an existing file is refused (ErrExists) unless replace; the file
// belongs to cred's user when there is one (the invoking user under
// sudo). Record and diff both start their files here, before anything
// runs, so that an unwritable path or a full disk fails with nothing
// started and no file left.
func CreateOutput(path string, replace bool, cred *workload.Credential, meta recording.Meta) (*Output, error) {
	f, err := atomicfile.Create(path, atomicfile.Options{Replace: replace})
	if errors.Is(err, atomicfile.ErrExists) {
		return nil, existsError{path}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", path, err)
	}
	if cred != nil {
		if err := f.Chown(int(cred.UID), int(cred.GID)); err != nil {
			f.Abort()
			return nil, fmt.Errorf("give %s to uid %d: %w", path, cred.UID, err)
		}
	}
	w, err := recording.NewWriter(f.File, meta) // the *os.File: the writer truncates partial records and syncs it
	if err != nil {
		f.Abort()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Publish(); err != nil {
		f.Abort()
		return nil, err
	}
	return &Output{file: f, W: w}, nil
}

// Abort removes the file unless it was published; a published file stays
// as far as it was written (it is readable at every record boundary).
func (o *Output) Abort() { o.file.Abort() }

// SessionConfig is one `hwpprobe record`.
type SessionConfig struct {
	Out      string // the recording file
	Force    bool   // replace Out if it exists
	Root     string
	CPUs     cpus.List
	Interval time.Duration
	MSRs     []uint32 // registers whose kernel writes are traced; none: no trace
	Argv     []string // the command
	// Version and CommandLine go into the file's header.
	Version     string
	CommandLine []string
	Cred        *workload.Credential // the invoking user under sudo; nil: none
	Stdin       *os.File
	Stdout      *os.File
	Stderr      io.Writer // the command's standard error and record's messages
}

// Record runs `hwpprobe record`: it catches the stop signals (forwarded to
// the command's process group once it runs), starts the file, runs and
// samples the command, ends the file with its status, prints the
// summary read back from the file, and returns the status hwpprobe exits
// with as a cli.ExitCodeError (128+N when a signal stopped it, the
// command's status otherwise, 1 when the command succeeded but the
// recording failed) or nil.
func Record(cfg SessionConfig) error {
	fs := sysfs.NewFS(cfg.Root)
	sigs := make(chan os.Signal, 4)
	defer sigquit.Notify(sigs, cli.StopSignals...)()

	rctx, _ := runctx.Read(fs, cfg.Version)
	meta := recording.Meta{Tool: "hwpprobe", ToolVersion: cfg.Version, Kind: "record", CommandLine: cfg.CommandLine,
		TimeNs: time.Now().UnixNano(), IntervalNs: int64(cfg.Interval), CPUs: cfg.CPUs.String(),
		Host: Host(fs), Emulated: fs.Emulated(), Context: &rctx}
	out, err := CreateOutput(cfg.Out, cfg.Force, cfg.Cred, meta)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	defer out.Abort()
	if meta.Emulated != "" {
		cli.Linef(cfg.Stderr, "hwpprobe", "recording emulated machine %q: figures are emulated, not measured", meta.Emulated)
	}

	rc := Config{
		W:        out.W,
		Run:      recording.RunStart{Run: 1, Observed: Observed(fs, cfg.CPUs), Command: cfg.Argv},
		Spec:     workload.Spec{Argv: cfg.Argv, Cred: cfg.Cred, Stdin: cfg.Stdin, Stdout: cfg.Stdout, Stderr: cfg.Stderr},
		Interval: cfg.Interval, Counters: perfcount.ProcessEvents(), Signals: sigs, Warn: cfg.Stderr,
	}
	if rc.Spec.Dir, err = os.Getwd(); err != nil {
		rc.Spec.Dir = ""
	}
	rc.Run.Dir = rc.Spec.Dir
	setup := OpenSetup(SetupOptions{Root: cfg.Root, FS: fs, CPUs: cfg.CPUs, MSRs: cfg.MSRs, Warn: cfg.Stderr}, out.W)
	defer setup.Close()
	res := Run(setup.Config(rc))

	status := recording.StatusComplete
	switch {
	case res.End.Interrupted:
		status = recording.StatusInterrupted
	case res.StartErr != nil || res.WriteErr != nil:
		status = recording.StatusFailed
	}
	if res.WriteErr == nil {
		if err := out.W.Close(recording.End{TimeNs: time.Now().UnixNano(), Status: status}); err != nil {
			res.WriteErr = err
			cli.Linef(cfg.Stderr, "hwpprobe", "%v", err)
		}
	}
	printSummary(cfg.Stderr, cfg.Out)
	return exitStatus(res)
}

// exitStatus chooses hwpprobe's status: 128+signal when interrupted, the
// command's status otherwise, 1 when the command succeeded but the
// recording failed.
func exitStatus(res Result) error {
	code := res.End.ExitCode
	var err error
	switch {
	case res.End.Interrupted && res.Forwarded != 0:
		code = 128 + int(res.Forwarded)
		err = fmt.Errorf("interrupted: %s forwarded to the command's process group; %s",
			unix.SignalName(res.Forwarded), exitWords(res.End))
	case res.StartErr != nil:
		err = res.StartErr
	case res.WriteErr != nil && code == 0:
		code = cli.ExitError
		err = fmt.Errorf("the recording is incomplete: %w", res.WriteErr)
	}
	if code == 0 {
		return nil
	}
	return cli.ExitCodeError{Code: code, Err: err}
}

func exitWords(e recording.RunEnd) string {
	if e.Signal != "" {
		return "the command was killed by signal: " + e.Signal
	}
	return fmt.Sprintf("the command exited with status %d", e.ExitCode)
}

// printSummary reads the file back and prints its summary, so that what
// is printed is what was stored: scanned batch by batch, as show reads
// it, so that memory does not grow with the recording.
func printSummary(w io.Writer, path string) {
	c := summary.NewCollector()
	rec, err := recording.ScanFileParts(path, summary.Parts, func(r recording.Record) error { c.Add(r); return nil })
	if err != nil {
		cli.Linef(w, "hwpprobe", "read back %s: %v", path, err)
		return
	}
	cli.Linef(w, "hwpprobe", "recorded %s", path)
	summary.WriteHeader(w, rec.Meta, rec.End, rec.Problem)
	for _, run := range rec.Runs {
		c.Summary(rec, run).WriteText(w)
	}
}
