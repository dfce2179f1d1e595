package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The engine's halves of two contracts with JavaScript, read from fixtures
// that the node tests (extension/test/) read too, so neither side can drift.

func readContract(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "wire", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// The Firefox adapter runs a helper call only if it has exactly the shape
// helperDeclaration writes (firefox-runtime.js, helperCallName).
func TestHelperCallContract(t *testing.T) {
	var fx struct {
		Calls []struct {
			Fn          string `json:"fn"`
			Declaration string `json:"declaration"`
		} `json:"calls"`
	}
	readContract(t, "helper_call.json", &fx)
	if len(fx.Calls) < 5 {
		t.Fatalf("helper_call.json has only %d calls", len(fx.Calls))
	}
	for _, c := range fx.Calls {
		if got := helperDeclaration(c.Fn); got != c.Declaration {
			t.Errorf("helperDeclaration(%q) = %s, the fixture says %s", c.Fn, got, c.Declaration)
		}
	}
}

// originOf here and in page.js decide the navigated-away guard together:
// the engine records the origin an agent saw, and the page refuses an
// action when its own origin differs.
func TestOriginContract(t *testing.T) {
	var cases []struct {
		URL    string `json:"url"`
		Origin string `json:"origin"`
	}
	readContract(t, "origins.json", &cases)
	if len(cases) < 20 {
		t.Fatalf("origins.json has only %d cases", len(cases))
	}
	for _, c := range cases {
		if got := originOf(c.URL); got != c.Origin {
			t.Errorf("originOf(%q) = %q, the fixture says %q", c.URL, got, c.Origin)
		}
	}
}
