// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"
)

// maxFileSize bounds a profile file; a profile is a few lines.
const maxFileSize = 64 << 10

func readFile(name string) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if st.Size() > maxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxFileSize)
	}
	return os.ReadFile(name)
}

// parseFile reads a "@FILE" profile: TOML (.toml) or YAML (.yaml, .yml)
// holding the keys of a spec at the top level, and per-CPU subsets in a
// table "cpus" keyed by CPU list:
//
//	governor = "powersave"
//	epp = "performance"
//	epb = 0
//	[cpus."4-11"]
//	epp = "power"
func parseFile(s string, readFile func(string) ([]byte, error)) (*Profile, error) {
	name := s[1:]
	ext := strings.ToLower(filepath.Ext(name))
	if ext != ".toml" && ext != ".yaml" && ext != ".yml" {
		return nil, fmt.Errorf("%s: want a .toml, .yaml or .yml file", name)
	}
	data, err := readFile(name)
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxFileSize)
	}
	var doc map[string]any
	if ext == ".toml" {
		_, err = toml.NewDecoder(bytes.NewReader(data)).Decode(&doc)
	} else {
		err = yaml.Unmarshal(data, &doc)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw, err := fileSettings(doc, "", true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s: sets nothing", name)
	}
	settings, err := build(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Profile{Text: s, Kind: Sysfs, Settings: settings}, nil
}

// fileSettings turns a decoded document into raw settings, in key order
// so that errors are reproducible.
func fileSettings(doc map[string]any, list string, top bool) ([]rawSetting, error) {
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var raw []rawSetting
	for _, k := range keys {
		v := doc[k]
		if k == "cpus" && top {
			sub, ok := v.(map[string]any)
			if !ok {
				return nil, errors.New(`"cpus" must be a table of CPU lists`)
			}
			subs := make([]string, 0, len(sub))
			for l := range sub {
				subs = append(subs, l)
			}
			slices.Sort(subs)
			for _, l := range subs {
				m, ok := sub[l].(map[string]any)
				if !ok {
					return nil, fmt.Errorf("cpus.%q must be a table of settings", l)
				}
				r, err := fileSettings(m, l, false)
				if err != nil {
					return nil, err
				}
				raw = append(raw, r...)
			}
			continue
		}
		s, err := scalar(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		raw = append(raw, rawSetting{key: k, value: s, cpus: list, hasCPUs: !top})
	}
	return raw, nil
}

// scalar formats a file value as the spec would write it.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case bool:
		if x {
			return "1", nil
		}
		return "0", nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("want a string or a number, not %T", v)
}
