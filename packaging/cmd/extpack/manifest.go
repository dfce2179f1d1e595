package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// object is a JSON object that keeps its keys in the order they were read,
// so a transformed manifest reads like the original and diffs stay small.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

func (o *object) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return errors.New("not a JSON object")
	}
	o.keys, o.vals = nil, map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k := t.(string) // inside an object a token in key position is always a string
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		if _, dup := o.vals[k]; dup {
			// Browsers take the last one; a package must not depend on that.
			return fmt.Errorf("duplicate key %q", k)
		}
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	_, err = dec.Token()
	return err
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// clone is shallow: values are raw JSON, so edits replace them, never mutate.
func (o *object) clone() *object {
	return &object{keys: slices.Clone(o.keys), vals: maps.Clone(o.vals)}
}

func (o *object) has(k string) bool { _, ok := o.vals[k]; return ok }

// set replaces k in place, or appends it when new.
func (o *object) set(k string, v any) error {
	raw, err := marshal(v)
	if err != nil {
		return err
	}
	if !o.has(k) {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = raw
	return nil
}

func (o *object) del(k string) {
	if !o.has(k) {
		return
	}
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(s string) bool { return s == k })
}

func (o *object) get(k string, into any) error {
	raw, ok := o.vals[k]
	if !ok {
		return fmt.Errorf("no %q", k)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%q: %w", k, err)
	}
	return nil
}

// child returns the object at k, creating an empty one when absent.
func (o *object) child(k string) (*object, error) {
	c := newObject()
	if o.has(k) {
		if err := o.get(k, c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (o *object) indent() ([]byte, error) {
	raw, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, so "<all_urls>" stays
// readable in the packaged manifest.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func parseManifest(b []byte) (*object, error) {
	m := newObject()
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("extension manifest: %w", err)
	}
	return m, nil
}

// Chrome and Firefox both accept one to four dot-separated integers of at
// most 65535 with no leading zeros; anything else is refused at upload, so
// it is refused here, at build time.
var versionRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,4})(\.(0|[1-9][0-9]{0,4})){0,3}$`)

func checkVersion(v string) error {
	if !versionRE.MatchString(v) {
		return fmt.Errorf("version %q is not 1-4 dot-separated integers, as extension stores require", v)
	}
	return nil
}

// manifestVersion is the manifest's "version".
func manifestVersion(m *object) (string, error) {
	var v string
	if err := m.get("version", &v); err != nil {
		return "", fmt.Errorf("extension manifest: %w", err)
	}
	return v, nil
}

// chromeManifest is the Web Store variant: the same manifest without "key".
// The store assigns the id from its own key and refuses uploads that carry
// one; "key" exists only so the unpacked folder has a stable id in
// development.
func chromeManifest(m *object) *object {
	out := m.clone()
	out.del("key")
	return out
}

// FirefoxID is the add-on id. Firefox needs a fixed id for native messaging
// (the host manifest lists it in allowed_extensions) and for signing.
const FirefoxID = "reins@reins.dev"

// firefoxMinVersion is the first Firefox that understands
// data_collection_permissions; older ones refuse the manifest outright.
const firefoxMinVersion = "140.0"

// chromeOnlyPermissions are dropped for Firefox: it has no chrome.debugger
// (the extension drives Firefox tabs another way), and an unknown permission
// is an install warning there.
var chromeOnlyPermissions = []string{"debugger"}

// firefoxOnlyPermissions are what the Firefox adapter (extension/lib/
// cdp-firefox.js) drives tabs with instead of the debugger: scripts in pages,
// request capture and the tab's own cookies. Chromium must not get them:
// they would add install warnings for APIs its build never uses.
var firefoxOnlyPermissions = []string{"scripting", "webRequest", "cookies"}

// firefoxHostPermissions let the adapter script pages and capture tabs
// (tabs.captureTab needs <all_urls>); which tabs it may touch is still
// decided by sharing, in the extension and the companion.
var firefoxHostPermissions = []string{"<all_urls>"}

// firefoxBackground is the Firefox entry of the extension, in place of the
// Chromium service worker: it adds the adapter that drives tabs without
// chrome.debugger, whose modules the Chromium worker must never load.
const firefoxBackground = "background-firefox.js"

// checkFirefoxBackground fails a Firefox build whose extension folder lacks
// the entry its manifest names: Firefox would load it without a background.
func checkFirefoxBackground(ext string) error {
	if _, err := os.Stat(filepath.Join(ext, firefoxBackground)); err != nil {
		return fmt.Errorf("the Firefox background script: %w", err)
	}
	return nil
}

// firefoxExtras are files the Firefox build adds to the extension folder,
// by package path, from paths relative to the repository root. The tool
// engine installs its page helper with Runtime.evaluate; Firefox forbids eval
// in the isolated world, so the adapter injects this shipped copy instead and
// checks that the companion sent the same text.
var firefoxExtras = func(root string) (map[string][]byte, error) {
	b, err := os.ReadFile(filepath.Join(root, "companion", "tools", "page.js"))
	if err != nil {
		return nil, fmt.Errorf("the tool engine's page helper for the Firefox adapter: %w", err)
	}
	return map[string][]byte{"lib/tools-page.js": b}, nil
}

// chromeOnlyKeys mean nothing to Firefox; AMO's linter warns on each.
var chromeOnlyKeys = []string{"key", "minimum_chrome_version", "update_url"}

// firefoxOptions are the parts of the Firefox variant a caller may change.
type firefoxOptions struct {
	// DataCollection is gecko.data_collection_permissions.required, which AMO
	// demands of every new add-on and shows the person before install.
	DataCollection []string
}

// firefoxManifest derives the Firefox variant from the Chromium manifest:
// Firefox MV3 runs background scripts as an event page rather than a
// service worker, needs a gecko id, and has no debugger API.
func firefoxManifest(m *object, opt firefoxOptions) (*object, error) {
	out := chromeManifest(m)
	for _, k := range chromeOnlyKeys {
		out.del(k)
	}

	if out.has("background") {
		bg, err := out.child("background")
		if err != nil {
			return nil, err
		}
		if bg.has("service_worker") {
			bg.del("service_worker")
			// "type": "module" carries over: Firefox loads module background
			// scripts too, and the entry imports its lib/ modules.
			if err := bg.set("scripts", []string{firefoxBackground}); err != nil {
				return nil, err
			}
		}
		if err := out.set("background", bg); err != nil {
			return nil, err
		}
	}

	if out.has("permissions") {
		var perms []string
		if err := out.get("permissions", &perms); err != nil {
			return nil, err
		}
		perms = slices.DeleteFunc(perms, func(p string) bool { return slices.Contains(chromeOnlyPermissions, p) })
		for _, p := range firefoxOnlyPermissions {
			if !slices.Contains(perms, p) {
				perms = append(perms, p)
			}
		}
		if err := out.set("permissions", perms); err != nil {
			return nil, err
		}
	}

	var hosts []string
	if out.has("host_permissions") {
		if err := out.get("host_permissions", &hosts); err != nil {
			return nil, err
		}
	}
	for _, h := range firefoxHostPermissions {
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if err := out.set("host_permissions", hosts); err != nil {
		return nil, err
	}

	csp, err := out.child("content_security_policy")
	if err != nil {
		return nil, err
	}
	var pages string
	if csp.has("extension_pages") {
		if err := csp.get("extension_pages", &pages); err != nil {
			return nil, err
		}
	}
	if err := csp.set("extension_pages", firefoxCSP(pages)); err != nil {
		return nil, err
	}
	if err := out.set("content_security_policy", csp); err != nil {
		return nil, err
	}

	bss, err := out.child("browser_specific_settings")
	if err != nil {
		return nil, err
	}
	gecko, err := bss.child("gecko")
	if err != nil {
		return nil, err
	}
	if len(opt.DataCollection) == 0 {
		return nil, errors.New("firefox: data collection list is empty; use \"none\" when nothing is collected")
	}
	for _, kv := range []struct {
		k string
		v any
	}{
		{"id", FirefoxID},
		{"strict_min_version", firefoxMinVersion},
		{"data_collection_permissions", map[string][]string{"required": opt.DataCollection}},
	} {
		if err := gecko.set(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	if err := bss.set("gecko", gecko); err != nil {
		return nil, err
	}
	if err := out.set("browser_specific_settings", bss); err != nil {
		return nil, err
	}
	return out, nil
}

// firefoxCSP is exactly "script-src 'self'", the only script source Firefox
// accepts for extension pages. Stating a policy at all keeps Firefox's
// default "upgrade-insecure-requests" off the ws:// loopback connection.
// The Chromium policy's other directives are not carried over: its
// connect-src (the loopback socket only) would also block the Firefox
// background from reading its own packaged files (the adapter fetches
// lib/tools-page.js to compare it with what the companion sends).
func firefoxCSP(string) string {
	return "script-src 'self'"
}
