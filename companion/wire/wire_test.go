package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
)

func TestURLRules(t *testing.T) {
	raw, err := os.ReadFile("testdata/url_rules.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		URL         string `json:"url"`
		Engine      Engine `json:"engine"`
		Unsupported bool   `json:"unsupported"`
		NewTab      bool   `json:"newTab"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		reason := UnsupportedReason(c.URL, c.Engine)
		if (reason != "") != c.Unsupported {
			t.Errorf("UnsupportedReason(%q, %s) = %q, want unsupported=%v", c.URL, c.Engine, reason, c.Unsupported)
		}
		if got := IsNewTab(c.URL); got != c.NewTab {
			t.Errorf("IsNewTab(%q) = %v, want %v", c.URL, got, c.NewTab)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	wrapped := fmt.Errorf("calling tab 3: %w", Errorf(CodeNotShared, "tab 3 is not shared"))
	if !errors.Is(wrapped, ErrNotShared) {
		t.Fatal("wrapped not_shared error does not match its sentinel")
	}
	if errors.Is(wrapped, ErrPaused) {
		t.Fatal("not_shared matched paused")
	}
	if got := CodeOf(wrapped); got != CodeNotShared {
		t.Fatalf("CodeOf = %q", got)
	}
	if got := CodeOf(errors.New("boom")); got != CodeInternal {
		t.Fatalf("CodeOf(plain) = %q", got)
	}
	if got := CodeOf(Remote("x", "")); got != CodeInternal {
		t.Fatalf("CodeOf(remote without code) = %q", got)
	}
	seen := map[Code]bool{}
	for _, c := range Codes {
		if seen[c] {
			t.Fatalf("duplicate code %q", c)
		}
		seen[c] = true
	}
}

func TestFrameKinds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		resp bool
		evt  string
	}{
		{`{"id":7,"result":{"ok":true}}`, true, ""},
		{`{"id":8,"error":"nope","code":"not_shared"}`, true, ""},
		{`{"event":"ping"}`, false, "ping"},
		{`{"event":"tabs","params":[]}`, false, "tabs"},
	} {
		var f Frame
		if err := json.Unmarshal([]byte(tc.in), &f); err != nil {
			t.Fatal(err)
		}
		if (f.ID != nil && f.Method == "") != tc.resp || f.Event != tc.evt {
			t.Errorf("%s: decoded as %+v", tc.in, f)
		}
	}
}
