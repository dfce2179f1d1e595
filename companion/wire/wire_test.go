package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// urlRules is testdata/url_rules.json, the fixture the extension's tests
// read too.
type urlRules struct {
	CDPURLParams map[string]string `json:"cdpURLParams"`
	CDPCases     []struct {
		Method  string `json:"method"`
		Params  string `json:"params"`
		Refused bool   `json:"refused"`
	} `json:"cdpCases"`
	Cases []struct {
		URL         string `json:"url"`
		Engine      Engine `json:"engine"`
		Unsupported bool   `json:"unsupported"`
		NewTab      bool   `json:"newTab"`
		Navigable   bool   `json:"navigable"`
	} `json:"cases"`
}

func readURLRules(t *testing.T) urlRules {
	t.Helper()
	var r urlRules
	readFixture(t, "url_rules.json", &r)
	return r
}

func TestURLRules(t *testing.T) {
	r := readURLRules(t)
	if len(r.Cases) < 50 {
		t.Fatalf("only %d cases", len(r.Cases))
	}
	for _, c := range r.Cases {
		reason := UnsupportedReason(c.URL, c.Engine)
		if (reason != "") != c.Unsupported {
			t.Errorf("UnsupportedReason(%q, %s) = %q, want unsupported=%v", c.URL, c.Engine, reason, c.Unsupported)
		}
		if got := IsNewTab(c.URL); got != c.NewTab {
			t.Errorf("IsNewTab(%q) = %v, want %v", c.URL, got, c.NewTab)
		}
		if refusal := NavigationRefusal(c.URL, c.Engine); (refusal == "") != c.Navigable {
			t.Errorf("NavigationRefusal(%q, %s) = %q, want navigable=%v", c.URL, c.Engine, refusal, c.Navigable)
		}
	}
}

// TestAgentsOpenOnlyWebPages is the allowlist: whatever the rules for
// shared tabs say, an agent may open http(s) and about:blank and nothing
// else, on either engine.
func TestAgentsOpenOnlyWebPages(t *testing.T) {
	for _, engine := range []Engine{EngineChromium, EngineFirefox} {
		for _, u := range []string{
			"file:///home/person/.local/share/reins/secrets.json",
			"file://fileserver/share/x.html",
			"vscode://x",
			"ms-settings:privacy",
			"javascript:alert(1)",
			"data:text/html,x",
			"chrome://newtab/",
			"",
		} {
			if NavigationRefusal(u, engine) == "" {
				t.Errorf("%s: an agent may open %q", engine, u)
			}
		}
		for _, u := range []string{"https://example.com/", "http://127.0.0.1:8080/", "about:blank"} {
			if r := NavigationRefusal(u, engine); r != "" {
				t.Errorf("%s: %q refused: %s", engine, u, r)
			}
		}
	}
}

func TestCDPNavigationRefusal(t *testing.T) {
	r := readURLRules(t)
	if !maps.Equal(r.CDPURLParams, cdpURLParams) {
		t.Fatalf("cdpURLParams = %v, the fixture says %v", cdpURLParams, r.CDPURLParams)
	}
	if len(r.CDPCases) < 10 {
		t.Fatalf("only %d cdp cases", len(r.CDPCases))
	}
	for _, c := range r.CDPCases {
		got := CDPNavigationRefusal(c.Method, json.RawMessage(c.Params), EngineChromium)
		if (got != "") != c.Refused {
			t.Errorf("CDPNavigationRefusal(%s, %s) = %q, want refused=%v", c.Method, c.Params, got, c.Refused)
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
	// A code outside the table reaches nobody: it reads as internal, and
	// the message keeps it.
	if err := Remote("x", "made_up"); CodeOf(err) != CodeInternal || !strings.Contains(err.Error(), "made_up") {
		t.Fatalf("Remote with an unknown code = %v (code %q)", err, CodeOf(err))
	}
	if got := CodeOf(Remote("x", CodeNoSuchTab)); got != CodeNoSuchTab {
		t.Fatalf("CodeOf(remote no_such_tab) = %q", got)
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
