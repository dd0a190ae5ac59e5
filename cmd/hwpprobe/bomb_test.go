// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// noteBomb writes a recording of one run followed by count note records
// of a few hundred bytes each, every one a zstd frame inflating to about
// size bytes, and returns its path.
func noteBomb(t *testing.T, count, size int) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := recording.NewWriter(&buf, recording.Meta{Tool: "hwpprobe", Kind: "record"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(recording.RunStart{Run: 1, Command: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	note := `{"time_ns":1,"text":"` + strings.Repeat("a", size-64) + `"}`
	rec := recordFrame(recording.TypeNote, 1, enc.EncodeAll([]byte(note), nil)) // 1: zstd JSON
	path := filepath.Join(t.TempDir(), fmt.Sprintf("bomb-%dx%d.rec", count, size))
	if err := os.WriteFile(path, append(buf.Bytes(), bytes.Repeat(rec, count)...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordFrame is a record of a format 2 or 3 file (docs/recording-format.md):
// type, encoding, reserved, length, the CRC-32C of the header's first 8
// bytes and the payload, then the payload.
func recordFrame(typ recording.RecordType, enc byte, payload []byte) []byte {
	hdr := binary.LittleEndian.AppendUint32([]byte{byte(typ), enc, 0, 0}, uint32(len(payload)))
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	crc := crc32.Update(crc32.Checksum(hdr, castagnoli), castagnoli, payload)
	return append(binary.LittleEndian.AppendUint32(hdr, crc), payload...)
}

// rssEnv makes the test binary run the command line it is given and
// print the command's peak resident set size (printMaxRSS).
const rssEnv = "HWPPROBE_TEST_RSS"

// printMaxRSS runs args, its standard input and error this process's and
// its output discarded, and prints its peak resident set size in KiB
// (getrusage's ru_maxrss after Wait). A process's ru_maxrss keeps the
// largest resident set of whatever process image it ran before exec,
// which for a child of the test process is the test process's (os/exec
// forks with the parent's memory): run from this small, fresh process,
// it is the command's own.
func printMaxRSS(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	return 0
}

// maxRSS runs the binary with args, standard input read from the file
// stdin when not "", and returns its peak resident set size in bytes and
// its stderr.
func maxRSS(t *testing.T, stdin string, args ...string) (int64, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{hwpprobeBin}, args...)...)
	cmd.Env = append(os.Environ(), rssEnv+"=1")
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v, stderr %q", args, err, stderr.String())
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("%v: peak RSS %q: %v", args, out, err)
	}
	return kib << 10, stderr.String()
}

// TestBombRSS: show, export (from the file and from a pipe), convert,
// diff and report of a recording of 30 or 200 small records that each
// inflate to the payload limit, or 200 that each inflate to 1 MiB, stay
// under 64 MiB of resident memory and say the file is a zip bomb: a
// reader's budget covers the whole file (docs/recording-format.md,
// "Bounds on reading"), not each record alone.
func TestBombRSS(t *testing.T) {
	const limit = 64 << 20
	for _, bomb := range []struct{ count, size int }{
		{30, recording.MaxPayload}, {200, recording.MaxPayload}, {200, 1 << 20},
	} {
		path := noteBomb(t, bomb.count, bomb.size)
		out := filepath.Join(t.TempDir(), "out")
		for _, run := range []struct {
			stdin string
			args  []string
		}{
			{"", []string{"show", path}},
			{"", []string{"export", "-o", out + ".csv", path}},
			{"", []string{"export", "--format", "parquet", "-o", out + ".parquet", path}},
			{path, []string{"export", "-o", out + ".csv", "/dev/stdin"}},
			{"", []string{"convert", path, out + ".rec"}},
			{"", []string{"diff", path, path}},
			{"", []string{"report", "-o", out + ".html", path}},
		} {
			rss, stderr := maxRSS(t, run.stdin, run.args...)
			t.Logf("%d records of %d MiB: %s: %d MiB", bomb.count, bomb.size>>20, run.args[0], rss>>20)
			if rss > limit || !strings.Contains(stderr, "zip bomb") {
				t.Errorf("%d records of %d MiB: %v: peak RSS %d MiB (limit %d MiB), stderr %q; want under the limit, saying zip bomb",
					bomb.count, bomb.size>>20, run.args, rss>>20, limit>>20, stderr)
			}
		}
	}
}
