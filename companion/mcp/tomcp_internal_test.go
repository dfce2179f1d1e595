package mcp

import (
	"bytes"
	"encoding/base64"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// toMCP is the one conversion of an engine result for agents: images are
// decoded, a failure's code travels in _meta beside the text.
func TestToMCP(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G'}
	out := toMCP(&tools.Result{Content: []tools.Content{
		{Type: "text", Text: "hello"},
		{Type: "image", Data: base64.StdEncoding.EncodeToString(png), MimeType: "image/png"},
		{Type: "image", Data: "%%%", MimeType: "image/png"},
	}})
	if out.IsError || out.Meta != nil || len(out.Content) != 3 {
		t.Fatalf("result %+v", out)
	}
	if tc, ok := out.Content[0].(*sdk.TextContent); !ok || tc.Text != "hello" {
		t.Fatalf("text %+v", out.Content[0])
	}
	if ic, ok := out.Content[1].(*sdk.ImageContent); !ok || !bytes.Equal(ic.Data, png) || ic.MIMEType != "image/png" {
		t.Fatalf("image %+v", out.Content[1])
	}
	if tc, ok := out.Content[2].(*sdk.TextContent); !ok || tc.Text != "[internal] undecodable image" {
		t.Fatalf("undecodable image %+v", out.Content[2])
	}
	failed := toMCP(tools.Failure(wire.Errorf(wire.CodeNotShared, "tab 3 is not shared")))
	if !failed.IsError || failed.Meta[CodeMetaKey] != "not_shared" || failed.Content[0].(*sdk.TextContent).Text != "[not_shared] tab 3 is not shared" {
		t.Fatalf("failure %+v", failed)
	}
}
