package companion

import (
	"sort"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/operator"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// Snapshot is everything the tray app shows, read from the companion at
// one moment and computed here, so the UI binding only maps it to its own
// types.
type Snapshot struct {
	Paused  bool
	Port    int
	MCPURL  string
	Version string

	Graph         Graph
	Tabs          []SharedTab      // shared tabs, in the hub's order
	Agents        []AgentToken     // token holders, by name
	Backends      []operator.State // paired hosted products, oldest first
	Offers        []pairing.Offer  // pair offers waiting for the person
	Activity      []tools.Activity // the last MaxActivity calls, oldest first
	Blocked       []BlockedBrowser // refused browser profiles, oldest first
	Tools         []string         // every tool name, sorted
	DisabledTools []string         // the tools the person turned off, sorted
	Overlay       bool
	// ManageExtensions: the person lets agents list, enable and disable
	// extensions.
	ManageExtensions bool
	// DialogTimeout: how long a dialog in an agent's tab waits for it.
	DialogTimeout time.Duration
}

// Graph is who is connected to what: the dashboard's Connections view draws
// all of it, and extensions that enabled Graph get it as graph.state
// (Graph.Wire), so both count the same way.
type Graph struct {
	Agents   []GraphAgent // MCP agents (by name), then paired backends (oldest first)
	Browsers []GraphBrowser
	Edges    []GraphEdge // by agent, then browser
}

// GraphAgent is an agent node: an MCP agent seen since start, or a paired
// backend that is not revoked.
type GraphAgent struct {
	// ID is the principal ("agent:<token id>", "backend:<id>"), the node's
	// id; Name its label. Two principals with one label stay two nodes.
	ID        string
	Name      string
	Backend   bool // a paired hosted product rather than an MCP agent
	Connected bool
	LastSeen  time.Time
}

// GraphBrowser is a browser node.
type GraphBrowser struct {
	ID      string
	Name    string
	Mode    hub.Mode
	Engine  wire.Engine
	Browser string // the product as the extension reports it, "" if unknown
	Profile string // the profile label the extension reports, "" if unknown
	// SharedTabs counts the tabs agents may use: the shared ones (every tab
	// of a browser Reins launched is shared).
	SharedTabs int
}

// GraphEdge says an agent works in Tabs shared tabs of a browser: its
// latest successful call used them (Companion.TabAgents).
type GraphEdge struct {
	AgentID   string
	BrowserID string
	Tabs      int
}

// SharedTab is a shared tab and who works in it.
type SharedTab struct {
	ID          int // the public tab id
	Title       string
	URL         string
	BrowserID   string
	BrowserName string
	// AgentID is the principal whose latest successful call used the tab
	// ("" when none did); AgentName its label.
	AgentID   string
	AgentName string
}

// AgentToken is an agent token and whether its agent is connected. LastSeen
// is zero if it never connected.
type AgentToken struct {
	// ID is the agent's principal ("agent:<token id>").
	ID        string
	Name      string
	Created   time.Time
	LastSeen  time.Time
	Connected bool
	// Developer: the person let this agent send raw DevTools commands.
	Developer bool
}

// Snapshot reads everything the tray app shows.
func (c *Companion) Snapshot() Snapshot {
	s := Snapshot{
		Paused:        c.Paused(),
		Port:          c.Port(),
		MCPURL:        c.MCPURL(),
		Version:       c.Version(),
		Tools:         c.Tools(),
		DisabledTools: c.DisabledTools(),
		Overlay:       c.Overlay(),

		ManageExtensions: c.ManageExtensions(),
		DialogTimeout:    c.DialogTimeout(),
		Blocked:          c.BlockedBrowsers(),
		Offers:           c.PendingOffers(),
		Activity:         c.Activity(),
	}
	st := c.readState()
	s.Backends = st.backends
	s.Graph = st.graph()

	// The person sees labels. A principal's label comes from its node, or
	// from the activity for one that is no longer a node.
	labels := map[string]string{}
	for _, a := range s.Activity {
		if a.Principal != "" {
			labels[a.Principal] = a.Agent
		}
	}
	for _, n := range s.Graph.Agents {
		labels[n.ID] = n.Name
	}
	for _, t := range st.tabs {
		if !t.Shared {
			continue
		}
		principal := st.users[t.ID]
		s.Tabs = append(s.Tabs, SharedTab{
			ID: t.ID, Title: t.Title, URL: t.URL, BrowserID: t.BrowserID, BrowserName: t.BrowserName,
			AgentID: principal, AgentName: labels[principal],
		})
	}

	if ts := c.cfg.Tokens; ts != nil {
		infos, err := ts.List()
		if err != nil {
			c.log.Warn("listing agent tokens for the dashboard", "err", err)
		}
		seen := map[string]mcp.AgentInfo{}
		for _, a := range st.agents {
			seen[a.ID] = a
		}
		for _, t := range infos {
			id := mcp.AgentID(t.ID)
			a := AgentToken{ID: id, Name: t.Name, Created: t.Created, Developer: c.IsDeveloperAgent(id)}
			if m, ok := seen[id]; ok {
				a.LastSeen, a.Connected = m.LastSeen, m.Connected
			}
			s.Agents = append(s.Agents, a)
		}
		sort.Slice(s.Agents, func(i, j int) bool { return s.Agents[i].Name < s.Agents[j].Name })
	}
	return s
}

// state is what the connection graph is drawn from, read once.
type state struct {
	agents   []mcp.AgentInfo
	backends []operator.State
	browsers []hub.BrowserInfo
	tabs     []hub.Tab
	users    map[int]string // shared tab → principal working in it
}

func (c *Companion) readState() state {
	st := state{agents: c.mcp.Agents(), backends: c.Backends(), browsers: c.hub.Browsers(), tabs: c.hub.Tabs()}
	shared := map[int]bool{}
	for _, t := range st.tabs {
		if t.Shared {
			shared[t.ID] = true
		}
	}
	st.users = c.activity.tabUsers(shared, time.Now())
	return st
}

// graph is the one computation of the connection graph.
func (st state) graph() Graph {
	g := Graph{Agents: []GraphAgent{}, Browsers: []GraphBrowser{}, Edges: []GraphEdge{}}
	nodes := map[string]bool{}
	for _, a := range st.agents {
		g.Agents = append(g.Agents, GraphAgent{ID: a.ID, Name: a.Name, Connected: a.Connected, LastSeen: a.LastSeen})
		nodes[a.ID] = true
	}
	for _, b := range st.backends {
		if b.Revoked {
			continue // listed so the person can forget it, but no longer an agent
		}
		g.Agents = append(g.Agents, GraphAgent{ID: b.Principal, Name: b.Agent, Backend: true, Connected: b.Connected, LastSeen: b.LastSeen})
		nodes[b.Principal] = true
	}
	for _, b := range st.browsers {
		g.Browsers = append(g.Browsers, GraphBrowser{
			ID: b.ID, Name: b.Name, Mode: b.Mode, Engine: b.Engine,
			Browser: b.Hello.Browser, Profile: b.Hello.Profile, SharedTabs: b.SharedTabs,
		})
	}
	edges := map[[2]string]int{}
	for _, t := range st.tabs {
		if p := st.users[t.ID]; t.Shared && nodes[p] {
			edges[[2]string{p, t.BrowserID}]++
		}
	}
	for k, n := range edges {
		g.Edges = append(g.Edges, GraphEdge{AgentID: k[0], BrowserID: k[1], Tabs: n})
	}
	sort.Slice(g.Edges, func(i, j int) bool {
		a, b := g.Edges[i], g.Edges[j]
		if a.AgentID != b.AgentID {
			return a.AgentID < b.AgentID
		}
		return a.BrowserID < b.BrowserID
	})
	return g
}

// Wire is the graph as extensions receive it in graph.state: connected
// agents only, and never a page's URL or title. The hub fills in each
// profile's ThisBrowserID.
func (g Graph) Wire() wire.ConnectionGraph {
	out := wire.ConnectionGraph{Agents: []wire.GraphAgent{}, Browsers: []wire.GraphBrowser{}}
	for _, a := range g.Agents {
		if a.Connected {
			out.Agents = append(out.Agents, wire.GraphAgent{ID: a.ID, Name: a.Name})
		}
	}
	for _, b := range g.Browsers {
		out.Browsers = append(out.Browsers, wire.GraphBrowser{ID: b.ID, Name: b.Name, Mode: string(b.Mode), SharedTabs: b.SharedTabs, BrowserEngine: b.Engine})
	}
	return out
}
