package mcp_test

import (
	"encoding/json"
	"testing"
)

// maxToolsListChars bounds what tools/list costs an agent's context: every
// tool's name, description, schema and annotations, as the SDK sends them.
const maxToolsListChars = 20_000

// TestToolsListSize prints the size of the real catalog as an agent lists
// it, per tool, and fails above maxToolsListChars.
func TestToolsListSize(t *testing.T) {
	e := newEnvWith(t, nil)
	cs := e.connect(t, e.issue(t, "measure"))
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	total, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		one, _ := json.Marshal(tool)
		t.Logf("%-22s %5d", tool.Name, len(one))
	}
	t.Logf("tools/list: %d tools, %d characters (limit %d)", len(res.Tools), len(total), maxToolsListChars)
	if len(total) > maxToolsListChars {
		t.Fatalf("tools/list is %d characters, over %d", len(total), maxToolsListChars)
	}
}
