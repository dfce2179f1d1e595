package wire

// ConnectionGraph is the graph.state snapshot sent to extension profiles
// that enabled Graph. It never carries page URLs, titles or contents.
type ConnectionGraph struct {
	ThisBrowserID string         `json:"thisBrowserId"`
	Agents        []GraphAgent   `json:"agents"`
	Browsers      []GraphBrowser `json:"browsers"`
}

// GraphAgent is an agent node: present once it has initialized.
type GraphAgent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// GraphBrowser is a browser node.
type GraphBrowser struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Mode          string `json:"mode"`
	SharedTabs    int    `json:"sharedTabs"`
	Context       string `json:"context,omitempty"`
	BrowserEngine Engine `json:"browserEngine,omitempty"`
}

// GraphReceipt is the result of graph.state.
type GraphReceipt struct {
	Received bool `json:"received"`
}
