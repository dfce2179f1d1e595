package companion

import (
	"sync"
	"time"

	"github.com/reinshq/reins/companion/tools"
)

// MaxActivity is how many finished tool calls the companion remembers for
// the dashboard's Activity view. The ring is memory only: activity is a
// glance at what agents just did, not an audit log, and it must not grow
// with a busy agent.
const MaxActivity = 200

// activityLog is a bounded ring of finished calls, plus which principal last
// worked on each tab. It holds tools.Activity values only, which carry no
// arguments: those can hold passwords typed into forms or whole scripts.
type activityLog struct {
	mu    sync.Mutex
	ring  []tools.Activity // at most MaxActivity; next is the oldest once full
	next  int
	users map[int]tabUser // tab id → the latest successful call on it
}

// tabUser is who last worked on a tab, and when.
type tabUser struct {
	principal string
	at        time.Time
}

// unsharedGrace is how long a tab's user is kept while the tab is not
// (yet) listed as shared: a call can finish on a tab before the browser's
// listing of it reaches the hub, and a snapshot taken in between must not
// forget who works there.
const unsharedGrace = time.Minute

func (l *activityLog) add(a tools.Activity) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ring == nil {
		l.ring = make([]tools.Activity, 0, MaxActivity)
	}
	if len(l.ring) < MaxActivity {
		l.ring = append(l.ring, a)
	} else {
		l.ring[l.next] = a
		l.next = (l.next + 1) % MaxActivity
	}
	if a.TabID > 0 && a.Outcome == "ok" && a.Principal != "" {
		if l.users == nil {
			l.users = map[int]tabUser{}
		}
		l.users[a.TabID] = tabUser{a.Principal, a.Time}
	}
}

// list returns the calls oldest first.
func (l *activityLog) list() []tools.Activity {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]tools.Activity, 0, len(l.ring))
	out = append(out, l.ring[l.next:]...)
	return append(out, l.ring[:l.next]...)
}

// tabUsers returns the principal that last worked on each of the given
// shared tabs, and forgets tabs that have not been shared for
// unsharedGrace, so the map stays about as small as the set of shared tabs.
func (l *activityLog) tabUsers(shared map[int]bool, now time.Time) map[int]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int]string, len(shared))
	for tab, u := range l.users {
		if !shared[tab] {
			if now.Sub(u.at) > unsharedGrace {
				delete(l.users, tab)
			}
			continue
		}
		out[tab] = u.principal
	}
	return out
}

// RecordActivity remembers one finished tool call. The engine calls it
// (tools.Options.OnActivity) for every call and batch step; it never
// blocks, since it only appends and signals Changes.
func (c *Companion) RecordActivity(a tools.Activity) {
	c.activity.add(a)
	// Not c.changed: a tool call does not change the connection graph the
	// extensions draw, so there is nothing to push to them.
	c.signal()
}

// Activity lists the last MaxActivity tool calls, oldest first.
func (c *Companion) Activity() []tools.Activity { return c.activity.list() }

// TabAgents names, for each shared tab, the principal (an MCP agent's
// "agent:<token id>" or a paired backend's "backend:<id>") whose latest
// successful tool call used it; the UI shows the principal's label. Who owns
// a tab is a different question, answered by the tab's owner; "who is
// working in this tab" is what the dashboard's edges mean to the person.
// Tabs no agent has used are absent.
func (c *Companion) TabAgents() map[int]string {
	shared := map[int]bool{}
	for _, t := range c.hub.Tabs() {
		if t.Shared {
			shared[t.ID] = true
		}
	}
	return c.activity.tabUsers(shared, time.Now())
}

// runner is the tool engine in use: Config.Tools, or the real engine.
func (c *Companion) runner() tools.Runner {
	if c.cfg.Tools != nil {
		return c.cfg.Tools
	}
	if c.engine != nil {
		return c.engine
	}
	return nil
}
