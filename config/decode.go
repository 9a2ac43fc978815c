package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// FileName is the configuration file's conventional name.
const FileName = "speedmatrix.yaml"

// maxNodes bounds the values one file may hold once aliases are followed, so that a few lines
// of nested aliases cannot make the reader walk billions of nodes.
const maxNodes = 100_000

// Error is one bad setting: where it is in the file (when known), its dotted path, and what is
// wrong with it.
type Error struct {
	File         string // the file's name as given to Load or Parse
	Line, Column int    // 1-based; 0 when unknown (e.g. a value set by a flag)
	Path         string // dotted path of the setting, e.g. engine.serve.port; "" for the file itself
	Msg          string
}

// Error formats the error as file:line:column: path: message, leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every bad setting found, in file order.
type Errors []*Error

// Error joins the errors one per line.
func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the errors, for errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// position is where a setting was given.
type position struct{ line, column int }

// Load reads the file at path over Default and validates the result: every problem is in the
// returned error (an Errors), each with the file, line, column and the setting's dotted path.
func Load(path string) (Config, error) {
	c := Default()
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read the configuration: %w", err)
	}
	if err := Parse(path, data, &c); err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// Parse decodes a YAML document onto c: keys given replace c's values, keys absent (or null)
// leave them. It checks keys and types, not values (Validate does). name labels the errors.
func Parse(name string, data []byte, c *Config) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file: the defaults
		}
		return Errors{{File: name, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Errors{{File: name, Line: extra.Line, Column: extra.Column, Msg: "more than one YAML document (---); the configuration is one"}}
	}
	d := &decoder{file: name, where: c.where}
	if d.where == nil {
		d.where = map[string]position{}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if resolve(root).Kind != yaml.MappingNode {
		return Errors{{File: name, Line: root.Line, Column: root.Column, Msg: "want a mapping of settings (key: value), got " + describe(root)}}
	}
	d.value(root, reflect.ValueOf(c).Elem(), "")
	c.where, c.file = d.where, name
	if len(d.errs) > 0 {
		return d.errs
	}
	return nil
}

// decoder walks the YAML nodes along the Go types, collecting every error with its position.
type decoder struct {
	file  string
	errs  Errors
	nodes int
	where map[string]position
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Column: n.Column, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// describe names what a node holds, for "got ...": a scalar's value, or the kind of node.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 60 {
			v = v[:57] + "..."
		}
		return strconv.Quote(v)
	}
	return "nothing"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	listType     = reflect.TypeFor[List]()
	buildType    = reflect.TypeFor[Build]()
)

// value decodes n into v, whose setting is at path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if d.nodes++; d.nodes > maxNodes {
		if d.nodes == maxNodes+1 {
			d.fail(n, path, "too many values (more than %d once aliases are followed)", maxNodes)
		}
		return
	}
	n = resolve(n)
	if n.Kind == yaml.AliasNode {
		d.fail(n, path, "an alias that names nothing")
		return
	}
	if isNull(n) {
		return // not given: keep the value already there
	}
	d.where[path] = position{n.Line, n.Column}
	t := v.Type()
	switch {
	case t == durationType:
		d.duration(n, v, path)
		return
	case t == listType:
		d.list(n, v, path)
		return
	case t == buildType:
		d.build(n, v, path)
		return
	case t == specDecodeType && n.Kind != yaml.MappingNode:
		d.specDecode(n, v, path)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		d.structure(n, v, path)
	case reflect.Pointer:
		if v.IsNil() {
			p := reflect.New(t.Elem())
			if t.Elem() == reflect.TypeFor[Serve]() {
				p.Elem().Set(reflect.ValueOf(DefaultServe()))
			}
			v.Set(p)
		}
		d.value(n, v.Elem(), path)
	case reflect.String:
		if s, ok := d.scalar(n, path, "a string"); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		if s, ok := d.scalar(n, path, "true or false"); ok {
			switch strings.ToLower(s) {
			case "true":
				v.SetBool(true)
			case "false":
				v.SetBool(false)
			default:
				d.fail(n, path, "want true or false, got %s", describe(n))
			}
		}
	case reflect.Int:
		if s, ok := d.scalar(n, path, "a whole number"); ok {
			i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 0)
			if err != nil {
				d.fail(n, path, "want a whole number, got %s", describe(n))
				return
			}
			v.SetInt(i)
		}
	case reflect.Uint64:
		if s, ok := d.scalar(n, path, "a whole number"); ok {
			u, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
			if err != nil {
				d.fail(n, path, "want a whole number from 0 to %d, got %s", uint64(math.MaxUint64), describe(n))
				return
			}
			v.SetUint(u)
		}
	case reflect.Float64:
		if s, ok := d.scalar(n, path, "a number"); ok {
			f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				d.fail(n, path, "want a number, got %s", describe(n))
				return
			}
			v.SetFloat(f)
		}
	case reflect.Slice: // []string: a program and its arguments
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "want a list of arguments like [vllm, serve, MODEL] (no shell splits a string), got %s", describe(n))
			return
		}
		out := make([]string, 0, len(n.Content))
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.where[p] = position{c.Line, c.Column}
			if s, ok := d.scalar(c, p, "a string"); ok {
				out = append(out, s)
			}
		}
		v.Set(reflect.ValueOf(out))
	case reflect.Map:
		d.mapping(n, v, path)
	default:
		panic("config: no decoder for " + t.String()) // a type added without one; tests walk every field
	}
}

// scalar returns n's value when n is a scalar, else records an error wanting what.
func (d *decoder) scalar(n *yaml.Node, path, what string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "want %s, got %s", what, describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a duration like 30s or 60m")
	if !ok {
		return
	}
	dur, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		d.fail(n, path, "want a duration like 30s, 60m or 1h30m, got %s", describe(n))
		return
	}
	v.SetInt(int64(dur))
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		v.Set(reflect.ValueOf(SplitList(n.Value)))
	case yaml.SequenceNode:
		out := List{}
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			s, ok := d.scalar(c, p, "a value like 8K")
			if !ok {
				continue
			}
			d.where[p] = position{c.Line, c.Column}
			if s = strings.TrimSpace(s); s == "" {
				d.fail(c, p, "an empty item")
				continue
			}
			out = append(out, s)
		}
		v.Set(reflect.ValueOf(out))
	default:
		d.fail(n, path, "want a list like [8K, 16K] or \"8K,16K\", got %s", describe(n))
	}
}

func (d *decoder) build(n *yaml.Node, v reflect.Value, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		v.Set(reflect.ValueOf(Build{Mode: strings.TrimSpace(n.Value)}))
	case yaml.MappingNode:
		var b struct {
			Command string `yaml:"command"`
		}
		d.structure(n, reflect.ValueOf(&b).Elem(), path)
		v.Set(reflect.ValueOf(Build{Mode: BuildCommand, Command: b.Command}))
	default:
		d.fail(n, path, "want %s or {command: \"...\"}, got %s", strings.Join(BuildModes, ", "), describe(n))
	}
}

// field is a settable key of a struct.
type field struct {
	key string
	v   reflect.Value
}

// fields lists the keys of a struct in declaration order, an inline struct's in place.
func fields(v reflect.Value) []field {
	var out []field
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			out = append(out, fields(v.Field(i))...)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		out = append(out, field{name, v.Field(i)})
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping (key: value), got %s", describe(n))
		return
	}
	fs := fields(v)
	d.pairs(n, path, "key", func(k, val *yaml.Node) {
		var target reflect.Value
		for _, f := range fs {
			if f.key == k.Value {
				target = f.v
				break
			}
		}
		if !target.IsValid() {
			known := make([]string, len(fs))
			for i, f := range fs {
				known[i] = f.key
			}
			d.fail(k, path, "unknown key %q (known: %s)", k.Value, strings.Join(known, ", "))
			return
		}
		d.value(val, target, join(path, k.Value))
	})
}

// pairs calls fn with each key of the mapping n and its (unresolved) value, in order, after
// reporting a key that is not a scalar (want names what a key should be) or one given twice.
func (d *decoder) pairs(n *yaml.Node, path, want string, fn func(k, val *yaml.Node)) {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			d.fail(k, path, "want a %s, got %s", want, describe(k))
			continue
		}
		if first, ok := seen[k.Value]; ok {
			d.fail(k, join(path, k.Value), "given twice (first at line %d)", first.Line)
			continue
		}
		seen[k.Value] = k
		fn(k, n.Content[i+1])
	}
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping (NAME: value), got %s", describe(n))
		return
	}
	t := v.Type()
	m := reflect.MakeMapWithSize(t, len(n.Content)/2)
	d.pairs(n, path, "name", func(k, raw *yaml.Node) {
		e := reflect.New(t.Elem()).Elem()
		val := resolve(raw)
		if isNull(val) && t.Elem().Kind() == reflect.String {
			m.SetMapIndex(reflect.ValueOf(k.Value), e) // NAME: (nothing) is the empty string
			return
		}
		before := len(d.errs)
		if isNull(val) {
			d.fail(val, join(path, k.Value), "want a value, got nothing")
		} else {
			d.value(val, e, join(path, k.Value))
		}
		if len(d.errs) == before {
			m.SetMapIndex(reflect.ValueOf(k.Value).Convert(t.Key()), e)
		}
	})
	v.Set(m)
}

// SplitList splits "a, b,c" into its non-empty, trimmed items; a list given empty is empty, not
// nil, so that "given empty" (an error for a matrix list) differs from "not given".
func SplitList(s string) List {
	out := List{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
