// SPDX-License-Identifier: GPL-3.0-or-later

// Package gpl is a fake dependency under a licence the allow-list lacks.
package gpl

// Answer is what the fake program prints.
const Answer = 42
