package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

// The config files are edited in place through hujson's syntax tree rather
// than decoded and re-encoded: every byte outside Reins' own entry (other
// servers, key order, indentation, and in VS Code's JSONC the comments and
// trailing commas) stays as the person or their client wrote it.

// errNotObject means the file parses but its top level is not an object.
var errNotObject = errors.New("the top level is not a JSON object")

// parseDoc parses a config file. An empty file is an empty object: some
// clients create the file empty. jsonc allows comments and trailing
// commas; strict files must be standard JSON, as their client reads them.
func parseDoc(data []byte, jsonc bool) (hujson.Value, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	}
	if !jsonc && !json.Valid(data) {
		// json.Unmarshal's message names the offset of the problem.
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("not valid JSON")
		}
		return hujson.Value{}, err
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return hujson.Value{}, err
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return hujson.Value{}, errNotObject
	}
	return v, nil
}

// member finds name among obj's members.
func member(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// lookup returns the object at path (keys from the top), or nil when a key
// is missing. A key present with another type is an error: Reins does not
// replace what it does not understand.
func lookup(root *hujson.Value, path []string) (*hujson.Object, error) {
	obj := root.Value.(*hujson.Object)
	for i, k := range path {
		j := member(obj, k)
		if j < 0 {
			return nil, nil
		}
		next, ok := obj.Members[j].Value.Value.(*hujson.Object)
		if !ok {
			return nil, fmt.Errorf("%q is not a JSON object", strings.Join(path[:i+1], "."))
		}
		obj = next
	}
	return obj, nil
}

// indentUnit guesses the file's indentation step from its first indented
// line; two spaces when nothing is indented yet.
func indentUnit(data []byte) string {
	for _, line := range bytes.Split(data, []byte("\n")) {
		ws := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if len(ws) > 0 && len(ws) < len(line) {
			return string(ws)
		}
	}
	return "  "
}

// lastLineIndent is the whitespace after the last newline of extra, or ""
// when extra holds no newline.
func lastLineIndent(extra hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	rest := extra[i+1:]
	if len(bytes.TrimLeft(rest, " \t")) != 0 {
		return "", false
	}
	return string(rest), true
}

// setMember makes path.name hold value, creating the objects on path that
// are missing, and leaves every other member as it was.
func setMember(doc *hujson.Value, data []byte, path []string, name string, value any) error {
	unit := indentUnit(data)
	obj := doc.Value.(*hujson.Object)
	depth := 0
	for _, k := range path {
		j := member(obj, k)
		if j < 0 {
			// Create the rest of the path in one nested value.
			var v any = map[string]any{name: value}
			rest := path[depth+1:]
			for i := len(rest) - 1; i >= 0; i-- {
				v = map[string]any{rest[i]: v}
			}
			return putMember(obj, k, v, depth, unit)
		}
		next, ok := obj.Members[j].Value.Value.(*hujson.Object)
		if !ok {
			return fmt.Errorf("%q is not a JSON object", strings.Join(path[:depth+1], "."))
		}
		obj = next
		depth++
	}
	return putMember(obj, name, value, depth, unit)
}

// putMember replaces or appends one member of obj, which sits at depth
// (the top-level object is depth 0), indenting the new text like its
// siblings.
func putMember(obj *hujson.Object, name string, value any, depth int, unit string) error {
	indent := strings.Repeat(unit, depth+1)
	if len(obj.Members) > 0 {
		if in, ok := lastLineIndent(obj.Members[0].Name.BeforeExtra); ok {
			indent = in
		}
	}
	raw, err := json.MarshalIndent(value, indent, unit)
	if err != nil {
		return err
	}
	parsed, err := hujson.Parse(raw)
	if err != nil {
		return err
	}
	if i := member(obj, name); i >= 0 {
		obj.Members[i].Value.Value = parsed.Value
		return nil
	}
	key, _ := json.Marshal(name)
	closing := strings.Repeat(unit, depth)
	nm := hujson.ObjectMember{
		Name:  hujson.Value{Value: hujson.Literal(key)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: parsed.Value},
	}
	n := len(obj.Members)
	trailingComma := n > 0 && obj.Members[n-1].Value.AfterExtra != nil
	if trailingComma {
		// What follows the old trailing comma (a comment on that line)
		// stays with the line; the new member starts on the next one and
		// keeps the file's trailing-comma style.
		nm.Name.BeforeExtra = append(hujson.Extra(strings.TrimRight(string(obj.AfterExtra), " \t\n")), "\n"+indent...)
		nm.Value.AfterExtra = hujson.Extra{}
		obj.AfterExtra = hujson.Extra("\n" + closing)
	} else {
		nm.Name.BeforeExtra = hujson.Extra("\n" + indent)
		if !bytes.Contains(obj.AfterExtra, []byte("\n")) {
			obj.AfterExtra = append(obj.AfterExtra, "\n"+closing...)
		}
	}
	obj.Members = append(obj.Members, nm)
	return nil
}

// removeMember deletes path.name and reports whether it was there.
func removeMember(doc *hujson.Value, path []string, name string) (bool, error) {
	obj, err := lookup(doc, path)
	if err != nil || obj == nil {
		return false, err
	}
	i := member(obj, name)
	if i < 0 {
		return false, nil
	}
	last := i == len(obj.Members)-1
	if last && i > 0 {
		// The new last member carries the trailing comma, or its absence,
		// of the one removed: a strict JSON file must not gain one.
		obj.Members[i-1].Value.AfterExtra = obj.Members[i].Value.AfterExtra
	}
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	return true, nil
}

// getMember decodes path.name into a generic value; ok is false when it is
// missing.
func getMember(doc *hujson.Value, path []string, name string) (v any, ok bool, err error) {
	obj, err := lookup(doc, path)
	if err != nil || obj == nil {
		return nil, false, err
	}
	i := member(obj, name)
	if i < 0 {
		return nil, false, nil
	}
	val := obj.Members[i].Value.Clone()
	val.BeforeExtra, val.AfterExtra = nil, nil
	std, err := hujson.Standardize(val.Pack())
	if err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(std, &v); err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// decodeAll is the document as plain data, for the check that an edit
// changed nothing but Reins' entry.
func decodeAll(data []byte) (map[string]any, error) {
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(std, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// onlyEntryChanged checks an edit: after removing path.name from both
// documents, they must hold the same data. It is the last guard before a
// person's file is replaced.
func onlyEntryChanged(before, after []byte, path []string, name string) error {
	a, err := decodeAll(before)
	if err != nil {
		return err
	}
	b, err := decodeAll(after)
	if err != nil {
		return fmt.Errorf("the edited file does not parse: %w", err)
	}
	strip := func(m map[string]any) {
		cur := m
		for _, k := range path {
			next, ok := cur[k].(map[string]any)
			if !ok {
				return
			}
			cur = next
		}
		delete(cur, name)
	}
	strip(a)
	strip(b)
	// A parent object that the edit created holds nothing else.
	prune := func(m map[string]any) {
		if len(path) == 0 {
			return
		}
		if p, ok := m[path[0]].(map[string]any); ok && len(p) == 0 {
			delete(m, path[0])
		}
	}
	prune(a)
	prune(b)
	if !reflect.DeepEqual(a, b) {
		return errors.New("the edit would change more than the Reins entry")
	}
	return nil
}
