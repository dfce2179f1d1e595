package tools_test

import (
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

func TestFormInput(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:former", "former")
	tab := r.newTab(s, "/form")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	ref := func(needle string) string { return refFor(t, tree, needle) }
	value := func(expr string) string {
		var v string
		r.js(s, tab, expr, &v)
		return v
	}
	changed := func(id string) event {
		t.Helper()
		for _, e := range r.log(s, tab) {
			if e.T == "change" && e.ID == id {
				return e
			}
		}
		t.Fatalf("no change event for #%s: %+v", id, r.log(s, tab))
		return event{}
	}

	for _, tc := range []struct {
		name, needle string
		value        any
		check        string // JS expression that must give want
		want         string
		id           string
	}{
		{"text", `textbox "Email"`, "ada@example.com", "document.getElementById('email').value", "ada@example.com", "email"},
		{"password", `textbox "Password"`, "s3cret!", "document.getElementById('pw').value", "s3cret!", "pw"},
		{"textarea", `textbox "Bio"`, "line one\nline two", "document.getElementById('bio').value", "line one\nline two", "bio"},
		{"select by label", `combobox "Country"`, "Japan", "document.getElementById('country').value", "jp", "country"},
		{"select by value", `combobox "Country"`, "fr", "document.getElementById('country').value", "fr", "country"},
		{"multi-select", `listbox "Tags"`, []string{"Alpha", "c"}, "[...document.getElementById('tags').selectedOptions].map(o => o.value).join(',')", "a,c", "tags"},
		{"checkbox on", `checkbox "I agree"`, true, "String(document.getElementById('agree').checked)", "true", "agree"},
		{"checkbox off", `checkbox "I agree"`, "false", "String(document.getElementById('agree').checked)", "false", "agree"},
		{"radio", `radio "Pro"`, true, "document.querySelector('input[name=plan]:checked').value", "pro", "pro"},
		{"radio by value", `radio "Pro"`, "free", "document.querySelector('input[name=plan]:checked').value", "free", "free"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.clearLog(s, tab)
			out := r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": ref(tc.needle), "value": tc.value})
			if got := value(tc.check); got != tc.want {
				t.Fatalf("%s = %q, want %q (%s)", tc.check, got, tc.want, out)
			}
			changed(tc.id)
			if tc.name == "password" && strings.Contains(out, "s3cret") {
				t.Fatalf("result echoes the password: %s", out)
			}
		})
	}

	t.Run("contenteditable", func(t *testing.T) {
		r.clearLog(s, tab)
		r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": ref(`textbox "Notes"`), "value": "new notes"})
		if got := value("document.getElementById('notes').innerText"); got != "new notes" {
			t.Fatalf("notes = %q", got)
		}
		evs := only(r.log(s, tab), "input")
		if len(evs) == 0 || evs[len(evs)-1].ID != "notes" {
			t.Fatalf("no input event from the contenteditable: %+v", evs)
		}
	})

	t.Run("errors", func(t *testing.T) {
		r.fails(s, "form_input", map[string]any{"tabId": tab, "ref": ref(`combobox "Country"`), "value": "Atlantis"}, wire.CodeBadParams)
		r.fails(s, "form_input", map[string]any{"tabId": tab, "ref": ref(`link "About us"`), "value": "x"}, wire.CodeBadParams)
		r.fails(s, "form_input", map[string]any{"tabId": tab, "ref": ref(`checkbox "I agree"`), "value": "maybe"}, wire.CodeBadParams)
		r.fails(s, "form_input", map[string]any{"tabId": tab, "value": "x"}, wire.CodeBadParams)
	})

	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.activities {
		if a.Tool == "form_input" && a.Agent != "former" {
			t.Fatalf("activity %+v", a)
		}
	}
}
