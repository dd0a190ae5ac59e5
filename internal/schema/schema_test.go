// SPDX-License-Identifier: Apache-2.0

package schema

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

type level int

// nnum is a number that is null when not finite, as report's numbers are.
type nnum float64

func (v nnum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(v)) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(v), 'g', -1, 64), nil
}

func (nnum) JSONSchema() map[string]any {
	return map[string]any{"type": []any{"number", "null"}}
}

type undescribed struct{}

func (undescribed) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

type Base struct {
	Kind string `json:"kind"`
}

type node struct {
	Base
	Name     string           `json:"name"`
	Hidden   string           `json:"-"`
	private  int              // left out by encoding/json
	Count    uint8            `json:"count"`
	Level    level            `json:"level"`
	Ratio    float64          `json:"ratio"`
	Maybe    *int             `json:"maybe"`
	Opt      *int             `json:"opt,omitempty"`
	List     []string         `json:"list"`
	OptList  []string         `json:"opt_list,omitempty"`
	Labels   map[string]int   `json:"labels,omitempty"`
	ByCPU    map[int]string   `json:"by_cpu"`
	Pair     [2]int           `json:"pair"`
	Blob     []byte           `json:"blob"`
	At       time.Time        `json:"at"`
	Any      any              `json:"any"`
	Raw      json.RawMessage  `json:"raw,omitempty"`
	N        nnum             `json:"n"`
	Quoted   int              `json:"quoted,string"`
	Child    *node            `json:"child,omitempty"`
	Inline   struct{ A bool } `json:"inline"`
	Always   struct{ B int }  `json:"always,omitempty"`
	Untagged bool
}

func validator(t *testing.T) *Validator {
	t.Helper()
	b, err := Generate("test/node/1", "a node", node{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Compile("test/node/1", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return v
}

// TestMarshalledValidates: whatever encoding/json writes for the type
// validates against the schema made from it.
func TestMarshalledValidates(t *testing.T) {
	v := validator(t)
	three := 3
	values := []node{
		{private: 1},
		{Base: Base{Kind: "k"}, Name: "a", Count: 255, Level: -2, Ratio: 0.5, Maybe: &three, Opt: &three,
			List: []string{"x"}, OptList: []string{"y"}, Labels: map[string]int{"l": 1}, ByCPU: map[int]string{-1: "a", 3: "b"},
			Blob: []byte{1, 2}, At: time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC), Any: []any{1, "x"}, Raw: json.RawMessage(`{"q":1}`),
			N: nnum(math.NaN()), Quoted: 7, Child: &node{Name: "c"}},
	}
	for i, n := range values {
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(b); err != nil {
			t.Errorf("value %d: %s: %v", i, b, err)
		}
	}
}

// TestRefuses: documents encoding/json would never write for the type
// are refused, each for the one thing wrong with it.
func TestRefuses(t *testing.T) {
	v := validator(t)
	good, err := json.Marshal(node{})
	if err != nil {
		t.Fatal(err)
	}
	var base map[string]any
	if err := json.Unmarshal(good, &base); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"unknown property", func(m map[string]any) { m["extra"] = 1 }},
		{"required missing", func(m map[string]any) { delete(m, "name") }},
		{"embedded field missing", func(m map[string]any) { delete(m, "kind") }},
		{"struct with omitempty missing", func(m map[string]any) { delete(m, "always") }},
		{"negative unsigned", func(m map[string]any) { m["count"] = -1 }},
		{"fraction for an integer", func(m map[string]any) { m["level"] = 1.5 }},
		{"null for an omitempty pointer", func(m map[string]any) { m["opt"] = nil }},
		{"null for an omitempty slice", func(m map[string]any) { m["opt_list"] = nil }},
		{"number for ,string", func(m map[string]any) { m["quoted"] = 7 }},
		{"not a date-time", func(m map[string]any) { m["at"] = "yesterday" }},
		{"non-integer key", func(m map[string]any) { m["by_cpu"] = map[string]any{"x": "a"} }},
		{"short array", func(m map[string]any) { m["pair"] = []any{1} }},
		{"hidden field", func(m map[string]any) { m["Hidden"] = "h" }},
		{"string for a custom number", func(m map[string]any) { m["n"] = "1" }},
		{"bad child", func(m map[string]any) { m["child"] = map[string]any{"name": 1} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]any{}
			for k, x := range base {
				m[k] = x
			}
			tt.edit(m)
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Validate(b); err == nil {
				t.Errorf("%s validates", b)
			}
		})
	}
	if err := v.Validate([]byte("{")); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("truncated document: %v", err)
	}
}

func TestUndescribed(t *testing.T) {
	type wrapper struct {
		U undescribed `json:"u"`
	}
	if _, err := Generate("x", "x", wrapper{}); !errors.Is(err, ErrUndescribed) {
		t.Errorf("Generate: %v, want ErrUndescribed", err)
	}
}

// TestDeterministic: the same type gives the same bytes, so the committed
// files can be compared with what the code generates.
func TestDeterministic(t *testing.T) {
	a, err := Generate("test/node/1", "a node", node{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, _ := Generate("test/node/1", "a node", node{})
		if string(a) != string(b) {
			t.Fatal("two generations differ")
		}
	}
}
