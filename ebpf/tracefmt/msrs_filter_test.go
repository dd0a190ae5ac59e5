// SPDX-License-Identifier: Apache-2.0

package tracefmt

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/ebpf"
)

func TestParseMSRFilter(t *testing.T) {
	// The default list survives FormatMSRs and ParseMSRFilter unchanged
	// (record's --trace-msrs default is written that way).
	got, err := ParseMSRFilter(FormatMSRs(DefaultMSRs))
	if err != nil || !cmp.Equal(got, DefaultMSRs) {
		t.Errorf("round trip of DefaultMSRs = %#x, %v", got, err)
	}
	var items []string
	for i := 1; i <= ebpf.MaxMSRs; i++ {
		items = append(items, FormatMSRs([]uint32{uint32(i)}))
	}
	if got, err := ParseMSRFilter(strings.Join(items, ",")); err != nil || len(got) != ebpf.MaxMSRs {
		t.Errorf("%d MSRs: %d, %v", ebpf.MaxMSRs, len(got), err)
	}
	items = append(items, "0x6e0")
	if _, err := ParseMSRFilter(strings.Join(items, ",")); !errors.Is(err, ebpf.ErrTooManyMSRs) {
		t.Errorf("%d MSRs: err = %v, want ErrTooManyMSRs", len(items), err)
	}
	if _, err := ParseMSRFilter("HWP_REQUEST,zz"); !errors.Is(err, ErrBadMSR) {
		t.Errorf("bad name: err = %v, want ErrBadMSR", err)
	}
}
