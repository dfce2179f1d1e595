package admin

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/reinshq/reins/companion/tokens"
)

type fakeSettings struct {
	manage bool
	devs   map[string]bool
}

func (f *fakeSettings) SettingsState() (SettingsResponse, error) {
	out := SettingsResponse{ManageExtensions: f.manage}
	for n, on := range f.devs {
		if on {
			out.DeveloperAgents = append(out.DeveloperAgents, n)
		}
	}
	return out, nil
}

func (f *fakeSettings) SetManageExtensions(on bool) error { f.manage = on; return nil }

func (f *fakeSettings) SetDeveloperAgentByName(name string, on bool) error {
	if name != "builder" {
		return fmt.Errorf("no agent token named %q: %w", name, tokens.ErrNotFound)
	}
	f.devs[name] = on
	return nil
}

func TestSettingsOverTheChannel(t *testing.T) {
	dir := shortDir(t)
	fs := &fakeSettings{devs: map[string]bool{}}
	serve(t, dir, Options{Settings: fs})
	c := NewClient(dir)
	defer c.Close()
	s, err := c.Settings(ctx(t))
	if err != nil || s.ManageExtensions || s.DeveloperAgents == nil || len(s.DeveloperAgents) != 0 {
		t.Fatalf("settings %+v, %v", s, err)
	}
	if err := c.SetManageExtensions(ctx(t), true); err != nil || !fs.manage {
		t.Fatalf("manage extensions: %v", err)
	}
	if err := c.SetDeveloperAgent(ctx(t), "builder", true); err != nil || !fs.devs["builder"] {
		t.Fatalf("developer agent: %v", err)
	}
	if err := c.SetDeveloperAgent(ctx(t), "ghost", true); !errors.Is(err, tokens.ErrNotFound) {
		t.Fatalf("an unknown agent: %v", err)
	}
	// A switch without its value is refused, not read as off.
	if err := c.do(ctx(t), http.MethodPut, "/v1/settings/manage-extensions", map[string]any{}, nil); !errors.Is(err, ErrBadRequest) || !fs.manage {
		t.Fatalf("a switch without on: %v (manage %v)", err, fs.manage)
	}
	if s, err := c.Settings(ctx(t)); err != nil || !s.ManageExtensions || len(s.DeveloperAgents) != 1 {
		t.Fatalf("settings after: %+v, %v", s, err)
	}
	if err := NewClient(shortDir(t)).SetManageExtensions(ctx(t), true); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("no companion: %v", err)
	}
}
