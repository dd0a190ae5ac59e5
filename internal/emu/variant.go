// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// Model variants. Each is a hypothesis about the hardware that changes one
// thing in the frequency and power model (docs/emulator.md, "Model
// variants"); the base model, VariantNone, is the default.
const (
	// VariantNone is the base model: the request's minimum and maximum
	// bound the selection, a limit lowers every CPU toward its minimum
	// before any below it, and the hardware treats a pinned request (min
	// = max), EPP 0 and the power limits like any other.
	VariantNone = "none"
	// VariantMinPins: a CPU whose request pins a level (min = max) keeps
	// that level's voltage under a power limit and runs below it only by
	// gating cycles, each costing what it costs at the pinned level.
	VariantMinPins = "min-pins"
	// VariantEPPVoltage: EPP 0 runs a higher voltage for the same
	// frequency: active power x eppVoltage(EPP).
	VariantEPPVoltage = "epp-voltage"
	// VariantPlatformPL1: a platform controller lowers PL1 through the
	// powercap zone while the package stays hot, and restores it once it
	// has cooled (platform.go).
	VariantPlatformPL1 = "platform-pl1"
	// VariantBrokenMax is a deliberately broken model, for testing
	// `hwpprobe conform`: the hardware ignores the request's Maximum and
	// runs up to Highest, so scaling_max_freq is not honoured. No real
	// part is thought to do this.
	VariantBrokenMax = "broken-max"
)

// VariantPath is where the tree names the model variant in force (one
// line), beside the emulated marker, so that a recording can store it.
const VariantPath = sysfs.EmulatedVariant

// ErrVariant is wrapped when a model variant is unknown or does not apply
// to the machine.
var ErrVariant = errors.New("model variant")

// variantInfo is a variant and the one thing it changes, for hwpemu's
// banner.
type variantInfo struct{ name, change string }

var variantList = []variantInfo{
	{VariantNone, "the base model: a pinned request (min = max), EPP 0 and PL1 act only through the request and the limits"},
	{VariantMinPins, "a CPU whose request has min = max keeps that level's voltage under a power limit: below it, it gates cycles that each cost what they cost at the pinned level"},
	{VariantEPPVoltage, fmt.Sprintf("EPP 0 costs %gx the active power for the same frequency, falling linearly to 1x at EPP %d", eppVoltageAt0, eppVoltageEnd)},
	{VariantPlatformPL1, fmt.Sprintf("a platform controller writes PL1 (powercap constraint_0_power_limit_uw) down to %.3g of itself after the package is above %g C for %g s, and back after it is below %g C for %g s",
		platformPL1Factor, platformTripC, platformHoldS, platformClearC, platformHoldS)},
	{VariantBrokenMax, "DELIBERATELY BROKEN (for testing hwpprobe conform): the hardware ignores the request's Maximum and runs up to Highest"},
}

// Variants returns the model variant names, the default (VariantNone)
// first.
func Variants() []string {
	names := make([]string, len(variantList))
	for i, v := range variantList {
		names[i] = v.name
	}
	return names
}

// WithVariant selects a model variant (default VariantNone; "" means the
// default). New fails with an error wrapping ErrVariant for an unknown
// name or a variant the machine has nothing for.
func WithVariant(name string) Option { return func(m *Machine) { m.variant = name } }

// Variant returns the name of the model variant in force.
func (m *Machine) Variant() string { return m.variant }

// VariantSummary is one line naming the variant in force and the one thing
// it changes, for hwpemu's banner.
func (m *Machine) VariantSummary() string {
	for _, v := range variantList {
		if v.name == m.variant {
			s := v.name + ": " + v.change
			if v.name == VariantNone {
				s += " (the default)"
			}
			return s + "; assumed, docs/emulator.md"
		}
	}
	return m.variant
}

// checkVariant sets the default variant and refuses an unknown one, or one
// that changes nothing on this machine: every variant but none and
// broken-max (which needs only HWP or CPPC requests) acts on a package
// power limit, which needs a pkg_power_limit register and a
// driver whose requests it shares the budget among; platform-pl1 also
// needs the thermal model it watches.
func (m *Machine) checkVariant() error {
	if m.variant == "" {
		m.variant = VariantNone
	}
	if !slices.Contains(Variants(), m.variant) {
		return fmt.Errorf("unknown %w %q (variants: %s)", ErrVariant, m.variant, strings.Join(Variants(), ", "))
	}
	if m.variant == VariantNone {
		return nil
	}
	var missing string
	switch {
	case len(m.desc.Files) > 0 || (m.desc.Driver.Name != "intel_pstate" && m.desc.Driver.Name != "amd-pstate-epp"):
		missing = "no HWP or CPPC requests (no intel_pstate or amd-pstate-epp driver)"
	case m.variant == VariantBrokenMax:
	case !m.pkgs[0].limits.has:
		missing = "no package power limit (no pkg_power_limit register)"
	case m.variant == VariantPlatformPL1 && m.desc.Thermal == nil:
		missing = "no thermal model (no thermal section) for a platform controller to watch"
	case m.variant == VariantPlatformPL1 && m.timeScale > platformMaxTimeScale:
		return fmt.Errorf("%w %s polls every %g s divided by the time scale: at most time scale %g, not %g",
			ErrVariant, m.variant, platformPollS, platformMaxTimeScale, m.timeScale)
	}
	if missing != "" {
		return fmt.Errorf("%w %s does not apply to %s: it has %s, and %s changes only how a package power limit is met",
			ErrVariant, m.variant, m.desc.Name, missing, m.variant)
	}
	return nil
}

// Constants of the epp-voltage variant (assumed; docs/emulator.md): the
// factor on active power at EPP 0, and the EPP from which it is 1.
const (
	eppVoltageAt0 = 1.25
	eppVoltageEnd = 16
)

// eppVoltage is the epp-voltage variant's factor on a CPU's active power
// at this EPP: eppVoltageAt0 at EPP 0, falling linearly to 1 at
// eppVoltageEnd and staying 1 above it.
func eppVoltage(epp uint8) float64 {
	return 1 + (eppVoltageAt0-1)*max(0, 1-float64(epp)/eppVoltageEnd)
}
