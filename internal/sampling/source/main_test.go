// SPDX-License-Identifier: Apache-2.0

package source

import (
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/hostvariant"
)

// TestMain lets hostvariant.Each run this package's real-kernel tests as
// on every CI host kind.
func TestMain(m *testing.M) { hostvariant.Main(m) }
