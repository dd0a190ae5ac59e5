// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/emu/emutest"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// rootMark stands for the fixture's system root in the seed journals, so
// that a seed belongs to the machine the fuzzer restores on.
const rootMark = "@ROOT@"

// FuzzRestoreJournal writes any bytes as the journal and restores from it
// on a Meteor Lake sysfs tree (`hwpprobe restore` after a crash, with a
// journal that is truncated, foreign or hostile): Restore never panics,
// its error is one line, every write it makes is a relative path inside
// the tree, and a journal it reports restored is gone.
func FuzzRestoreJournal(f *testing.F) {
	root, _ := emutest.Root(f, "mtl-165u")
	fs := sysfs.NewFS(root)
	st, err := ReadState(fs, cpus.List{0, 1, 4})
	if err != nil {
		f.Fatal(err)
	}
	j := Journal{Version: 1, PID: 1, User: "root", Profile: "performance", Root: rootMark, Original: st}
	b, err := json.Marshal(j)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte(strings.Replace(string(b), `"version":1`, `"version":99`, 1)))
	f.Add([]byte(strings.Replace(string(b), rootMark, "/elsewhere", 1)))
	f.Add([]byte(strings.Replace(string(b), `"cpu":4`, `"cpu":-4`, 1)))
	f.Add([]byte(`{"version":1,"root":"@ROOT@","original":{"cpus":[{"cpu":1000000000}]}}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		dir := t.TempDir()
		in = []byte(strings.ReplaceAll(string(in), rootMark, root))
		if err := os.WriteFile(filepath.Join(dir, journalFile), in, 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := Restore(Options{FS: fs, JournalDir: dir})
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of several lines: %q", err)
		}
		if res == nil {
			return
		}
		for _, w := range res.Writes {
			if filepath.IsAbs(w.Path) || !filepath.IsLocal(w.Path) {
				t.Fatalf("write outside the root: %v", w)
			}
		}
		if err == nil && res.Journal != nil {
			if _, serr := os.Stat(filepath.Join(dir, journalFile)); !os.IsNotExist(serr) {
				t.Fatalf("restored, but the journal is still there: %v", serr)
			}
		}
	})
}
