package devbrowser

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/hub"
)

// How a Keeper launches again: at once after a browser that ran for
// keepStable, otherwise after a delay that doubles from keepMinDelay up to
// keepMaxDelay (a browser that cannot start, or dies as it starts, is not
// launched in a loop).
const (
	keepStable   = 30 * time.Second
	keepMinDelay = time.Second
	keepMaxDelay = 30 * time.Second
	// launchTimeout bounds one launch and attach.
	launchTimeout = 60 * time.Second
)

// Keeper keeps a dev browser running while the companion runs. A browser
// that exits on its own (a crash, its window closed, a kill from outside)
// is launched again with a fresh profile and attached under the same
// instance id, so the hub gives it the same browser id and an agent that
// chose it keeps it; its tabs went with the old one, and their calls
// failed with the link.
type Keeper struct {
	opts Options
	hub  *hub.Hub
	stop context.CancelFunc
	done chan struct{}
	mu   sync.Mutex
	cur  *Browser
}

// Keep launches the browser, attaches it to h and keeps it until ctx ends
// or Close. The first launch's error is Keep's.
func Keep(ctx context.Context, opts Options, h *hub.Hub) (*Keeper, error) {
	if opts.InstanceID == "" {
		opts.InstanceID = NewInstanceID()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, stop := context.WithCancel(ctx)
	k := &Keeper{opts: opts, hub: h, stop: stop, done: make(chan struct{})}
	b, err := k.launch(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	go k.run(ctx, b)
	return k, nil
}

// Close stops keeping the browser and closes it (Browser.Close).
func (k *Keeper) Close() error {
	k.stop()
	<-k.done
	k.mu.Lock()
	b := k.cur
	k.cur = nil
	k.mu.Unlock()
	if b == nil {
		return nil
	}
	return b.Close()
}

func (k *Keeper) run(ctx context.Context, b *Browser) {
	defer close(k.done)
	var delay time.Duration
	for {
		started := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-b.Done():
		}
		k.mu.Lock()
		if k.cur == b {
			k.cur = nil
		}
		k.mu.Unlock()
		b.Close() // its link and its temporary profile
		if time.Since(started) >= keepStable {
			delay = 0
		} else {
			delay = nextDelay(delay)
		}
		k.opts.Logger.Warn("dev browser exited; starting it again", "ran", time.Since(started).Round(time.Millisecond), "after", delay)
		for {
			if delay > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(delay):
				}
			}
			nb, err := k.launch(ctx)
			if err == nil {
				b = nb
				break
			}
			if ctx.Err() != nil {
				return
			}
			delay = nextDelay(delay)
			k.opts.Logger.Warn("dev browser did not start again", "err", err, "retry_in", delay)
		}
	}
}

func nextDelay(d time.Duration) time.Duration {
	return min(max(2*d, keepMinDelay), keepMaxDelay)
}

// launch starts a browser and attaches it; one that comes after Close
// began is closed at once.
func (k *Keeper) launch(ctx context.Context) (*Browser, error) {
	lctx, cancel := context.WithTimeout(ctx, launchTimeout)
	defer cancel()
	b, err := Launch(lctx, k.opts)
	if err == nil && ctx.Err() != nil {
		err = errors.New("devbrowser: closed while launching")
	}
	if err == nil {
		_, err = b.Attach(k.hub)
	}
	if err != nil {
		if b != nil {
			b.Close()
		}
		return nil, err
	}
	k.mu.Lock()
	k.cur = b
	k.mu.Unlock()
	k.opts.Logger.Info("dev browser attached", "path", k.opts.Path, "headless", k.opts.Headless)
	return b, nil
}
