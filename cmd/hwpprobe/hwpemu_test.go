package main

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

var hwpemuBuild struct {
	sync.Mutex
	path string
}

// hwpemuBin builds hwpemu once for every test of this package that runs
// hwpprobe under an emulated machine, beside the hwpprobe binary TestMain
// built.
func hwpemuBin(t *testing.T) string {
	t.Helper()
	hwpemuBuild.Lock()
	defer hwpemuBuild.Unlock()
	if hwpemuBuild.path == "" {
		b, err := testbin.Build(filepath.Dir(hwpprobeBin), "../hwpemu")
		if err != nil {
			t.Fatal(err)
		}
		hwpemuBuild.path = b
	}
	return hwpemuBuild.path
}
