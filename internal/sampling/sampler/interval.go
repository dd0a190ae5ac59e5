// SPDX-License-Identifier: Apache-2.0

package sampler

import "time"

// The sampling interval (-i of watch, record and diff): shorter than
// MinInterval measures the sampler; MaxInterval is a day.
const (
	MinInterval = 10 * time.Millisecond
	MaxInterval = 24 * time.Hour
)
