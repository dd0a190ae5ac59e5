// SPDX-License-Identifier: Apache-2.0

// Package schema derives a JSON Schema (draft 2020-12) from the Go type a
// command encodes with encoding/json, following encoding/json's rules
// exactly, so that the schema files under docs/schemas/ are what the
// program prints, and checks a document against such a schema.
//
// The rules, those of encoding/json's Marshal:
//   - a struct is an object of its exported fields, named by their json
//     tags; a field tagged "-" is left out; an embedded struct without a
//     name in its tag has its fields inlined; a field with omitempty or
//     omitzero may be absent, every other one is required; no other
//     property is allowed;
//   - a pointer, a slice or a map may be null (nil); []byte is a base64
//     string; a map is an object whose values follow the element type;
//   - bool is boolean, integers are integers (unsigned ones at least 0),
//     floats are numbers, strings and encoding.TextMarshaler values are
//     strings, time.Time a date-time string, an interface or
//     json.RawMessage anything;
//   - a type with its own MarshalJSON must describe itself (Describer):
//     Generate refuses one that does not, so that no custom encoding
//     goes undescribed.
package schema

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	jsonschema "github.com/santhosh-tekuri/jsonschema/v6"
)

// Describer is a type with a custom JSON encoding that states its own
// schema, as a JSON Schema object.
type Describer interface {
	JSONSchema() map[string]any
}

// AnyOf describes a document that is any one of the types of its
// values, such as a JSON-lines stream whose lines have several forms.
type AnyOf []any

// ErrUndescribed is wrapped by Generate's error for a type with its own
// MarshalJSON and no JSONSchema method.
var ErrUndescribed = errors.New("custom JSON encoding without a schema")

var (
	describerType = reflect.TypeFor[Describer]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
)

// Generate returns the schema of v's type, indented, with id as its $id
// and title as its title; every named struct type is a definition under
// $defs, referred to by its package and name.
func Generate(id, title string, v any) ([]byte, error) {
	g := &gen{defs: map[string]any{}, names: map[reflect.Type]string{}}
	var root map[string]any
	if alts, ok := v.(AnyOf); ok {
		var alt []any
		for _, a := range alts {
			s, err := g.schema(reflect.TypeOf(a))
			if err != nil {
				return nil, err
			}
			alt = append(alt, s)
		}
		root = map[string]any{"anyOf": alt}
	} else {
		s, err := g.schema(reflect.TypeOf(v))
		if err != nil {
			return nil, err
		}
		root = s
	}
	doc := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     id,
		"title":   title,
	}
	for k, v := range root {
		doc[k] = v
	}
	if len(g.defs) > 0 {
		doc["$defs"] = g.defs
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", id, err)
	}
	return b.Bytes(), nil
}

type gen struct {
	defs  map[string]any
	names map[reflect.Type]string
}

func nullable(s map[string]any) map[string]any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// notNull undoes nullable.
func notNull(s map[string]any) map[string]any {
	if alt, ok := s["anyOf"].([]any); ok && len(alt) == 2 {
		if n, ok := alt[1].(map[string]any); ok && n["type"] == "null" {
			return alt[0].(map[string]any)
		}
	}
	return s
}

func (g *gen) schema(t reflect.Type) (map[string]any, error) {
	if t.Kind() == reflect.Pointer {
		s, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return nullable(s), nil
	}
	switch {
	case t.Implements(describerType):
		return reflect.Zero(t).Interface().(Describer).JSONSchema(), nil
	case reflect.PointerTo(t).Implements(describerType):
		return reflect.New(t).Interface().(Describer).JSONSchema(), nil
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t == rawType:
		return map[string]any{}, nil
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return nil, fmt.Errorf("%v: %w", t, ErrUndescribed)
	case t.Implements(textType) || reflect.PointerTo(t).Implements(textType):
		return map[string]any{"type": "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return nullable(map[string]any{"type": "string", "contentEncoding": "base64"}), nil
		}
		items, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		s := map[string]any{"type": "array", "items": items}
		if t.Kind() == reflect.Array {
			s["minItems"], s["maxItems"] = t.Len(), t.Len()
			return s, nil
		}
		return nullable(s), nil
	case reflect.Map:
		vals, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		s := map[string]any{"type": "object", "additionalProperties": vals}
		if k := t.Key().Kind(); k != reflect.String && !t.Key().Implements(textType) {
			s["propertyNames"] = map[string]any{"pattern": "^-?[0-9]+$"}
		}
		return nullable(s), nil
	case reflect.Struct:
		return g.structRef(t)
	}
	return nil, fmt.Errorf("%v: no JSON encoding", t)
}

// structRef puts a named struct under $defs (once) and refers to it; an
// unnamed struct is described in place.
func (g *gen) structRef(t reflect.Type) (map[string]any, error) {
	if t.Name() == "" {
		return g.object(t)
	}
	name, ok := g.names[t]
	if !ok {
		name = t.PkgPath()[strings.LastIndexByte(t.PkgPath(), '/')+1:] + "." + t.Name()
		for taken := true; taken; {
			taken = false
			for other, n := range g.names {
				if n == name && other != t {
					name += "_"
					taken = true
				}
			}
		}
		g.names[t] = name
		g.defs[name] = map[string]any{} // a placeholder while recursing
		s, err := g.object(t)
		if err != nil {
			return nil, err
		}
		g.defs[name] = s
	}
	return map[string]any{"$ref": "#/$defs/" + name}, nil
}

// field is a struct field as encoding/json sees it.
type field struct {
	name      string
	optional  bool // omitempty or omitzero: may be absent
	omitEmpty bool // omitempty: a nil pointer, slice or map is absent, never null
	asString  bool
	typ       reflect.Type
}

func (g *gen) object(t reflect.Type) (map[string]any, error) {
	props := map[string]any{}
	required := []string{}
	fields, err := jsonFields(t)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		s, err := g.schema(f.typ)
		if err != nil {
			return nil, fmt.Errorf("%v.%s: %w", t, f.name, err)
		}
		if f.asString {
			s = map[string]any{"type": "string"}
		}
		if k := f.typ.Kind(); f.omitEmpty && (k == reflect.Pointer || k == reflect.Slice || k == reflect.Map) {
			s = notNull(s) // present only when not nil
		}
		props[f.name] = s
		if !f.optional {
			required = append(required, f.name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}, nil
}

// jsonFields lists t's fields in encoding/json's order, embedded structs
// inlined. A name given twice at the same depth is an error here (json
// drops both silently): the types this package describes have none.
func jsonFields(t reflect.Type) ([]field, error) {
	var out []field
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				inner, err := jsonFields(et)
				if err != nil {
					return nil, err
				}
				for _, f := range inner {
					if !seen[f.name] {
						seen[f.name] = true
						out = append(out, f)
					}
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if seen[name] {
			return nil, fmt.Errorf("%v: field name %q twice", t, name)
		}
		seen[name] = true
		f := field{name: name, typ: ft}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				// A struct is never empty: encoding/json writes it.
				f.optional = ft.Kind() != reflect.Struct
				f.omitEmpty = true
			case "omitzero":
				f.optional = true
			case "string":
				switch ft.Kind() {
				case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64, reflect.String:
					f.asString = true
				}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// Validator checks documents against one compiled schema.
type Validator struct {
	s *jsonschema.Schema
}

// Compile compiles a schema made by Generate (or any draft 2020-12
// schema); name is where it came from, for errors.
func Compile(name string, schema []byte) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(name)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return &Validator{s: s}, nil
}

// Validate checks one JSON document.
func (v *Validator) Validate(doc []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return v.s.Validate(inst)
}
