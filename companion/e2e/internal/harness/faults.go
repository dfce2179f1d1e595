package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/hub"
)

// This file holds what the fault suite (companion/e2e/faults_test.go) does
// to the processes behind the companion's back: two browsers on one
// companion, a SIGKILLed companion started again, a stopped extension
// worker, closed tabs and crashed renderers.

// DualStack is one reins headless driving two browsers at once: the dev
// browser it launches itself (--dev-browser) and a Chromium whose real
// extension connects to it.
type DualStack struct {
	Companion
	Chrome *Chromium
	// Dev is the dev browser as it first attached.
	Dev hub.BrowserInfo
}

// StartDualStack starts reins with the dev browser, then Chromium with the
// extension, and returns once both browsers are connected.
func StartDualStack(ctx context.Context, opts ...ChromiumOption) (s *DualStack, err error) {
	s = &DualStack{Companion: Companion{Pages: StartPages()}}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if s.Reins, err = StartReins(ctx, "--dev-browser", ChromiumPath()); err != nil {
		return s, err
	}
	if s.Watch, err = s.Reins.Client.Watch(context.WithoutCancel(ctx)); err != nil {
		return s, err
	}
	if s.Chrome, err = StartChromium(ctx, append([]ChromiumOption{WithNativeHost(s.Reins.DataDir)}, opts...)...); err != nil {
		return s, err
	}
	snap, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool { return BothBrowsers(snap.Browsers) })
	if err != nil {
		return s, fmt.Errorf("the extension and the dev browser never both attached: %w", err)
	}
	for _, b := range snap.Browsers {
		if b.Mode == hub.ModeDev {
			s.Dev = b
		} else {
			s.Browser = b
		}
	}
	return s, nil
}

// BothBrowsers reports whether bs holds an extension browser and a dev
// browser.
func BothBrowsers(bs []hub.BrowserInfo) bool {
	var ext, dev bool
	for _, b := range bs {
		switch b.Mode {
		case hub.ModeDev:
			dev = true
		case hub.ModeExtension:
			ext = true
		}
	}
	return ext && dev
}

// Close stops everything: Chromium first (killed), then reins (and with it
// the dev browser) with SIGTERM.
func (s *DualStack) Close() error {
	return s.stop(func() {
		if s.Chrome != nil {
			s.Chrome.Close()
		}
	})
}

// Diagnostics is the tail of each process's output, for a failed test.
func (s *DualStack) Diagnostics() string {
	out := ""
	if s.Chrome != nil {
		out = s.Chrome.Output()
	}
	return s.diagnostics("chromium", out, 20)
}

// Kill SIGKILLs reins, as a crash would: no close frames, no cleanup of
// its port file or admin socket. Its dev browser dies with it.
func (r *Reins) Kill() error {
	select {
	case <-r.exited:
		return nil
	default:
	}
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil && err != os.ErrProcessDone {
		return fmt.Errorf("killing reins: %w", err)
	}
	<-r.exited
	return nil
}

// Relaunch starts reins again after Kill, with the same port, data dir and
// arguments, and returns once it answers. Output then holds the new
// process's lines only, and change streams must be opened anew.
func (r *Reins) Relaunch(ctx context.Context) error {
	select {
	case <-r.exited:
	default:
		return fmt.Errorf("reins %d is still running", r.PID())
	}
	return r.relaunch(ctx)
}

// StopServiceWorker stops the extension's service worker the way the
// browser does when it decides a worker is idle, and returns once its
// target is gone: Target.closeTarget on the worker's target. Nothing of the
// worker's state survives but what it stored.
func (c *Chromium) StopServiceWorker(ctx context.Context) error {
	sw, err := c.ServiceWorker(ctx)
	if err != nil {
		return err
	}
	var out struct {
		Success bool `json:"success"`
	}
	if err := c.Browser.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": sw.TargetID}, &out); err != nil {
		return fmt.Errorf("closing the extension's worker: %w", err)
	}
	return nil
}

// WorkerStarted returns when the extension's running service worker
// started (its performance.timeOrigin): after StopServiceWorker, the time
// the browser took to start it again (a new extension process, under load
// most of the wait) is before it, and the extension's own way back to the
// companion after it.
func (c *Chromium) WorkerStarted(ctx context.Context) (time.Time, error) {
	sw, err := c.ServiceWorker(ctx)
	if err != nil {
		return time.Time{}, err
	}
	sid, err := c.Attach(ctx, sw.TargetID)
	if err != nil {
		return time.Time{}, fmt.Errorf("attaching to the extension's worker: %w", err)
	}
	defer c.Detach(context.WithoutCancel(ctx), sid)
	var origin float64
	if err := c.Evaluate(ctx, sid, "performance.timeOrigin", &origin); err != nil {
		return time.Time{}, fmt.Errorf("reading the worker's start: %w", err)
	}
	return time.UnixMicro(int64(origin * 1000)), nil
}

// CrashTab crashes the renderer of a page target (Page.crash on a session
// of its own), behind the extension's back, and returns once the browser
// reports the crash (Inspector.targetCrashed). A page with nothing to crash
// is ErrNoCrash: its renderer does not answer (crashed before and not
// loaded again: crashing it again reports nothing), or it still answers
// 10 s after the command (which reached a renderer on its way out while the
// page navigated to a new one).
func (c *Chromium) CrashTab(ctx context.Context, targetID string) error {
	sid, err := c.Attach(ctx, targetID)
	if err != nil {
		return err
	}
	defer c.Detach(context.WithoutCancel(ctx), sid)
	answers := func() bool {
		probe, stop := context.WithTimeout(ctx, 5*time.Second)
		defer stop()
		return c.Browser.Call(probe, sid, "Runtime.evaluate", map[string]any{"expression": "1"}, nil) == nil
	}
	if !answers() {
		return ErrNoCrash
	}
	crashed := make(chan struct{}, 1)
	cancel := c.Browser.Subscribe(func(ev CDPEvent) {
		if ev.SessionID == sid && ev.Method == "Inspector.targetCrashed" {
			select {
			case crashed <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	if err := c.Browser.Call(ctx, sid, "Inspector.enable", nil, nil); err != nil {
		return err
	}
	// Page.crash never answers: the renderer is gone before it could.
	crashCtx, stop := context.WithCancel(ctx)
	defer stop()
	go c.Browser.Call(crashCtx, sid, "Page.crash", nil, nil)
	wait, stopWait := context.WithTimeout(ctx, 10*time.Second)
	defer stopWait()
	select {
	case <-crashed:
		return nil
	case <-wait.Done():
	}
	if ctx.Err() == nil && answers() {
		return ErrNoCrash
	}
	return fmt.Errorf("the renderer of %s crashed without a report, or never answered: %w", targetID, wait.Err())
}

// ErrNoCrash is CrashTab's answer when the page had nothing to crash.
var ErrNoCrash = errors.New("the page did not crash")
