package tools

// Session is one agent's working state: its tab group, the origins it last
// observed per tab, its screenshots and its chosen browser.
type Session struct {
	Agent string
}

// AgentName implements Caller.
func (s *Session) AgentName() string { return s.Agent }
