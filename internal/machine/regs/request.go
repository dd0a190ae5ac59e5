// SPDX-License-Identifier: Apache-2.0

package regs

import "github.com/hwpprobe/hwpprobe/hwp"

// Request is a performance request in vendor-neutral form: Intel's
// IA32_HWP_REQUEST or IA32_HWP_REQUEST_PKG, or AMD's CPPC request, whose
// minimum and maximum fields sit the other way round (docs/kernel-facts.md
// section 2). RequestFrom is the one place that tells them apart.
type Request struct {
	Register *Register // the register the value came from
	Raw      uint64
	Min      uint8
	Max      uint8
	Desired  uint8 // 0: the hardware chooses
	EPP      uint8
	// HasWindow is set for registers with an activity window (Intel);
	// ActivityWindow is then the raw 10-bit field.
	HasWindow      bool
	ActivityWindow uint16
	// HasPackageControl is set for registers with a Package_Control bit
	// (IA32_HWP_REQUEST), which PackageControl holds.
	HasPackageControl bool
	PackageControl    bool
}

// RequestFrom decodes raw as the request register at addr. It reports
// false when addr is not a request register (RoleRequest or
// RolePackageRequest).
func RequestFrom(addr uint32, raw uint64) (Request, bool) {
	r, ok := ByAddress(addr)
	if !ok || r.request == nil {
		return Request{}, false
	}
	q := r.request(raw)
	q.Register, q.Raw = r, raw
	return q, true
}

// ActivityWindowMicros returns the activity window in microseconds; 0
// means the hardware chooses (and is all a register without one gives).
func (q Request) ActivityWindowMicros() uint64 {
	return hwp.Request{ActivityWindow: q.ActivityWindow}.ActivityWindowMicros()
}

// requestHWP is IA32_HWP_REQUEST's (thread) or IA32_HWP_REQUEST_PKG's
// request.
func requestHWP(thread bool) func(uint64) Request {
	return func(v uint64) Request {
		d := hwp.DecodeRequest(v)
		return Request{Min: d.Min, Max: d.Max, Desired: d.Desired, EPP: d.EPP,
			HasWindow: true, ActivityWindow: d.ActivityWindow,
			HasPackageControl: thread, PackageControl: thread && d.PackageControl}
	}
}

// requestCPPC is AMD's CPPC request.
func requestCPPC(v uint64) Request {
	d := hwp.DecodeCPPCReq(v)
	return Request{Min: d.Min, Max: d.Max, Desired: d.Desired, EPP: d.EPP}
}
