// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"slices"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// RequestFields are the fields of the request register (regs.Request:
// IA32_HWP_REQUEST or AMD's CPPC request) and the EPB that a Verification
// shows, in the
// order ChangedFields names them.
var RequestFields = []string{"min", "max", "desired", "epp", "epb"}

// fieldValues are one CPU's RequestFields (nil: not read).
type fieldValues [5]*int

// perCPU maps each CPU of a verification to its fields; ok is false when
// the profile was refused or the registers could not be read.
func perCPU(v *Verification) (map[int]fieldValues, bool) {
	if v == nil || v.Refused != "" || v.Unreadable != "" {
		return nil, false
	}
	out := map[int]fieldValues{}
	for _, r := range v.Rows {
		l, err := cpus.Parse(r.CPUs)
		if err != nil {
			return nil, false
		}
		for _, c := range l {
			out[c] = fieldValues{r.Min, r.Max, r.Desired, r.RegEPP, r.EPB}
		}
	}
	return out, len(out) > 0
}

// ChangedFields names the RequestFields that differ on some CPU between
// two verifications (the same CPUs read after two profiles); ok is false
// when either was refused or has no registers, so that nothing can be
// said.
func ChangedFields(a, b *Verification) (changed []string, ok bool) {
	pa, oka := perCPU(a)
	pb, okb := perCPU(b)
	if !oka || !okb {
		return nil, false
	}
	for i, name := range RequestFields {
		for c, fa := range pa {
			if !sameInt(fa[i], pb[c][i]) {
				changed = append(changed, name)
				break
			}
		}
	}
	return changed, true
}

// Twins reports whether two profiles left the same request registers and
// EPB on every CPU: register twins, which this machine's hardware cannot
// tell apart.
func Twins(a, b *Verification) bool {
	changed, ok := ChangedFields(a, b)
	return ok && len(changed) == 0
}

// FieldValue returns field (one of RequestFields) on every CPU of v when
// all CPUs hold the same value.
func FieldValue(v *Verification, field string) (int, bool) {
	pc, ok := perCPU(v)
	if !ok {
		return 0, false
	}
	i := slices.Index(RequestFields, field)
	val, have := 0, false
	for _, f := range pc {
		if i < 0 || f[i] == nil || (have && *f[i] != val) {
			return 0, false
		}
		val, have = *f[i], true
	}
	return val, have
}

func sameInt(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// FieldsEqual reports whether fields a and b (of RequestFields) hold the
// same value on every CPU of v: min = max under the performance policy.
func FieldsEqual(v *Verification, a, b string) bool {
	pc, ok := perCPU(v)
	ia, ib := slices.Index(RequestFields, a), slices.Index(RequestFields, b)
	if !ok || ia < 0 || ib < 0 {
		return false
	}
	for _, f := range pc {
		if f[ia] == nil || !sameInt(f[ia], f[ib]) {
			return false
		}
	}
	return true
}
