package admin

import (
	"errors"
	"net/http"
	"testing"
)

type fakePauser struct{ paused bool }

func (f *fakePauser) Paused() bool { return f.paused }
func (f *fakePauser) Pause()       { f.paused = true }
func (f *fakePauser) Resume()      { f.paused = false }

func TestPauseOverTheChannel(t *testing.T) {
	dir := shortDir(t)
	fp := &fakePauser{}
	serve(t, dir, Options{Pause: fp})
	c := NewClient(dir)
	defer c.Close()
	if p, err := c.Paused(ctx(t)); err != nil || p {
		t.Fatalf("paused %v, %v; want running", p, err)
	}
	if err := c.SetPaused(ctx(t), true); err != nil || !fp.paused {
		t.Fatalf("pause: %v (paused %v)", err, fp.paused)
	}
	if p, err := c.Paused(ctx(t)); err != nil || !p {
		t.Fatalf("paused %v, %v; want paused", p, err)
	}
	// A body without its value is refused, not read as resume.
	if err := c.do(ctx(t), http.MethodPut, "/v1/pause", map[string]any{}, nil); !errors.Is(err, ErrBadRequest) || !fp.paused {
		t.Fatalf("pause without a value: %v (paused %v)", err, fp.paused)
	}
	if err := c.SetPaused(ctx(t), false); err != nil || fp.paused {
		t.Fatalf("resume: %v (paused %v)", err, fp.paused)
	}
}

func TestPauseWithoutACompanionSwitch(t *testing.T) {
	dir := shortDir(t)
	serve(t, dir, Options{})
	c := NewClient(dir)
	defer c.Close()
	if err := c.SetPaused(ctx(t), true); !errors.Is(err, ErrNotImplemented) {
		t.Fatalf("pause on a companion without the switch: %v", err)
	}
}
