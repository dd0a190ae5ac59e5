// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"fmt"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// DefaultGovernors are the governors intel_pstate and amd-pstate offer in
// active mode, what completion offers when the machine's list cannot be
// read.
var DefaultGovernors = []string{"performance", "powersave"}

// Governors returns the governors cpu0 offers (scaling_available_governors
// under fs), or DefaultGovernors when it offers none or has no cpufreq.
func Governors(fs sysfs.FS) []string {
	gov, err := fs.ReadString(fmt.Sprintf("%s/cpu0/cpufreq/scaling_available_governors", cpuSysfs))
	if g := strings.Fields(gov); err == nil && len(g) > 0 {
		return g
	}
	return DefaultGovernors
}

// completeValues are the values completion offers for a key.
func completeValues(k Key, governors []string) []string {
	switch k {
	case Governor:
		return governors
	case EPP:
		return EPPNames
	case EPB:
		return EPBNames
	case NoTurbo, Boost:
		return []string{"0", "1"}
	}
	return nil
}

// Complete returns the profiles, or the profiles' beginnings, that
// continue prefix, for shell completion: a governor (from governors),
// "current", "ppd:NAME", a governor followed by ":" and settings, and
// after a ":" or "," a KEY= and its values (EPP and EPB names, governors,
// 0 and 1). partial is true when a candidate is not a whole profile yet
// (it ends in ":" or "="), so the shell should not add a space after it.
func Complete(prefix string, governors []string) (cands []string, partial bool) {
	add := func(c string) {
		if strings.HasPrefix(c, prefix) {
			cands = append(cands, c)
			partial = partial || strings.HasSuffix(c, ":") || strings.HasSuffix(c, "=")
		}
	}
	if strings.HasPrefix(prefix, "tuned:") || strings.HasPrefix(prefix, "@") {
		return nil, false // TuneD's profiles and files: not ours to list
	}
	cut := strings.LastIndexAny(prefix, ":,")
	if cut < 0 && !strings.Contains(prefix, "=") || strings.HasPrefix(prefix, "ppd:") {
		for _, p := range PPDProfiles {
			add("ppd:" + p)
		}
		if cut >= 0 {
			return cands, partial
		}
		add("current")
		for _, g := range governors {
			add(g)
			add(g + ":")
		}
		for _, k := range Keys {
			add(string(k) + "=")
		}
		return cands, partial
	}
	head, part := prefix[:cut+1], prefix[cut+1:]
	if k, _, ok := strings.Cut(part, "="); ok {
		for _, v := range completeValues(Key(k), governors) {
			add(head + k + "=" + v)
		}
		return cands, partial
	}
	for _, k := range Keys {
		if k == Governor && strings.HasSuffix(head, ":") && !strings.Contains(head[:len(head)-1], "=") {
			continue // GOV: already set the governor
		}
		add(head + string(k) + "=")
	}
	return cands, partial
}
