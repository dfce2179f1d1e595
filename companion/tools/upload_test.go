package tools_test

import (
	"regexp"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

var imgIDRE = regexp.MustCompile(`img_\d+`)

func TestUploadImage(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:uploader", "uploader")
	tab := r.newTab(s, "/record")
	res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
	id := imgIDRE.FindString(text(res))
	var size int
	for _, c := range res.Content {
		if c.Type == "image" {
			size = len(c.Data) * 3 / 4
		}
	}
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	ref := refFor(t, tree, `file "Upload"`)

	r.ok(s, "upload_image", map[string]any{"tabId": tab, "imageId": id, "ref": ref})
	files := only(r.log(s, tab), "file")
	if len(files) != 1 || files[0].Type != "image/jpeg" || files[0].Size < size-3 || files[0].Size > size || files[0].Name == "" {
		t.Fatalf("file input got %+v, want one JPEG of about %d bytes", files, size)
	}

	r.clearLog(s, tab)
	r.ok(s, "upload_image", map[string]any{"tabId": tab, "imageId": id, "coordinate": []int{250, 575}})
	drops := only(r.log(s, tab), "drop")
	if len(drops) != 1 || drops[0].Type != "image/jpeg" || drops[0].Size != files[0].Size || !near(drops[0].X, 250) {
		t.Fatalf("drop zone got %+v", drops)
	}

	r.fails(s, "upload_image", map[string]any{"tabId": tab, "imageId": "img_999", "ref": ref}, wire.CodeBadParams)
	r.fails(s, "upload_image", map[string]any{"tabId": tab, "imageId": id}, wire.CodeBadParams)
	r.fails(s, "upload_image", map[string]any{"tabId": tab, "imageId": id, "ref": refFor(t, tree, `"Press me"`)}, wire.CodeBadParams)
	// Images belong to the session that took them.
	other := r.e.NewSession("agent:someone-else", "someone-else")
	r.fails(other, "upload_image", map[string]any{"tabId": tab, "imageId": id, "ref": ref}, wire.CodeBadParams)
}
