package tools

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

type uploadArgs struct {
	ImageID    string    `json:"imageId" jsonschema:"screenshot or zoom id (img_3)"`
	TabID      int       `json:"tabId" jsonschema:"tab id"`
	Ref        string    `json:"ref,omitempty" jsonschema:"ref of a file input to put the image in"`
	Coordinate []float64 `json:"coordinate,omitempty" jsonschema:"or [x, y] of a drop zone"`
}

func registerUpload(e *Engine) {
	define(e, Info{
		Name:        "upload_image",
		Description: "Put one of your screenshots (by imageId) into a file input (ref) or drop it on a drop zone (coordinate).",
		Destructive: true, Mutating: true, Batchable: true,
	}, func(s *jsonschema.Schema) { items(s, "coordinate", 2) }, runUpload)
}

func runUpload(ctx context.Context, c *call, in *uploadArgs) (*Result, error) {
	img := c.s.image(in.ImageID)
	if img == nil {
		return nil, wire.Errorf(wire.CodeBadParams, "no image %q in this session (the last %d screenshots are kept)", in.ImageID, maxImages)
	}
	if (in.Ref == "") == (len(in.Coordinate) != 2) {
		return nil, wire.Errorf(wire.CodeBadParams, "give either ref (a file input) or coordinate (a drop zone)")
	}
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	b64 := base64.StdEncoding.EncodeToString(img.data)
	name := fmt.Sprintf("screenshot-%s.jpg", img.id)
	w := ts.watch()
	defer w.stop()
	if in.Ref != "" {
		var r struct {
			Desc  string `json:"desc"`
			Count int    `json:"count"`
		}
		if _, err := c.guardedHelper(ctx, ts, "setFile", &r, in.Ref, b64, name, "image/jpeg"); err != nil {
			return nil, err
		}
		return c.after(ctx, ts, w, in.TabID, []string{fmt.Sprintf("Put %s (%s, %d bytes) into %s [%s]; it now holds %d file(s).", in.ImageID, name, len(img.data), r.Desc, in.Ref, r.Count)})
	}
	v, err := c.viewFor(ctx, ts)
	if err != nil {
		return nil, err
	}
	if !v.contains(in.Coordinate[0], in.Coordinate[1]) {
		return nil, wire.Errorf(wire.CodeBadParams, "coordinate (%g, %g) is outside the screenshot", in.Coordinate[0], in.Coordinate[1])
	}
	x, y := v.toCSS(in.Coordinate[0], in.Coordinate[1])
	desc, accepted, err := c.dropFiles(ctx, ts, "", x, y, []pageFile{{Data: b64, Name: name, Mime: "image/jpeg"}})
	if err != nil {
		return nil, err
	}
	line := fmt.Sprintf("Dropped %s (%s) on %s at (%g, %g).", in.ImageID, name, desc, in.Coordinate[0], in.Coordinate[1])
	if !accepted {
		line += " The page did not handle the drop (no drop handler called preventDefault)."
	}
	return c.after(ctx, ts, w, in.TabID, []string{line})
}
