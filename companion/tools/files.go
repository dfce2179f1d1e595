package tools

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/agentfiles"
	"github.com/reinshq/reins/companion/wire"
)

// upload_file puts files an agent supplies into a page: as bytes, which
// Reins first writes into the agent's upload folder, or by path inside
// that folder, never anywhere else. Chromium takes a file input's files
// from disk (DOM.setFileInputFiles); Firefox, and every drop target, get
// them through a DataTransfer in the page.

type uploadFileItem struct {
	Name     string `json:"name,omitempty" jsonschema:"file name"`
	MimeType string `json:"mimeType,omitempty" jsonschema:"MIME type"`
	Data     string `json:"data,omitempty" jsonschema:"base64 bytes"`
	Path     string `json:"path,omitempty" jsonschema:"or a path in your upload folder"`
}

type uploadFileArgs struct {
	TabID      int              `json:"tabId" jsonschema:"tab id"`
	Ref        string           `json:"ref,omitempty" jsonschema:"file input or drop target"`
	Coordinate []float64        `json:"coordinate,omitempty" jsonschema:"or [x, y] of a drop target"`
	Files      []uploadFileItem `json:"files" jsonschema:"files"`
}

const (
	// maxUploadBytes bounds the files of one upload_file call together.
	maxUploadBytes = 10 << 20
	// maxUploadFiles bounds how many files one call puts into a page.
	maxUploadFiles = 20
)

func registerFiles(e *Engine) {
	define(e, Info{
		Name: "upload_file",
		Description: "Put files into a file input or drop them on a drop target. " +
			"Each file: base64 data with a name, or a path in your upload folder; 10 MiB in all.",
		Destructive: true, Mutating: true, Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) {
		items(s, "coordinate", 2)
		one, most := 1, maxUploadFiles
		s.Properties["files"].MinItems, s.Properties["files"].MaxItems = &one, &most
	}, runUploadFile)
}

// pageFile is one file as the page helper takes it.
type pageFile struct {
	Data string `json:"data"`
	Name string `json:"name"`
	Mime string `json:"mime"`
	path string // on disk, for DOM.setFileInputFiles
	size int
}

func runUploadFile(ctx context.Context, c *call, in *uploadFileArgs) (*Result, error) {
	if (in.Ref == "") == (len(in.Coordinate) != 2) {
		return nil, wire.Errorf(wire.CodeBadParams, "give either ref (a file input or a drop target) or coordinate (a drop target)")
	}
	files, err := c.uploadFiles(in.Files)
	if err != nil {
		return nil, err
	}
	ts, t, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	w := ts.watch()
	defer w.stop()
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	list := strings.Join(names, ", ")
	if in.Ref == "" {
		v, err := c.viewFor(ctx, ts)
		if err != nil {
			return nil, err
		}
		if !v.contains(in.Coordinate[0], in.Coordinate[1]) {
			return nil, wire.Errorf(wire.CodeBadParams, "coordinate (%g, %g) is outside the screenshot", in.Coordinate[0], in.Coordinate[1])
		}
		x, y := v.toCSS(in.Coordinate[0], in.Coordinate[1])
		return c.drop(ctx, ts, w, in.TabID, "", x, y, files, fmt.Sprintf("(%g, %g)", in.Coordinate[0], in.Coordinate[1]))
	}
	var target struct {
		Desc     string `json:"desc"`
		Input    bool   `json:"input"`
		Multiple bool   `json:"multiple"`
	}
	if _, err := c.guardedHelper(ctx, ts, "fileTarget", &target, in.Ref); err != nil {
		return nil, err
	}
	if !target.Input {
		return c.drop(ctx, ts, w, in.TabID, in.Ref, 0, 0, files, "["+in.Ref+"]")
	}
	if len(files) > 1 && !target.Multiple {
		return nil, wire.Errorf(wire.CodeBadParams, "%s (%s) takes one file; you gave %d", in.Ref, target.Desc, len(files))
	}
	var now []string
	if t.BrowserEngine == wire.EngineChromium {
		now, err = c.setInputFiles(ctx, ts, in.Ref, files)
	} else {
		var r struct {
			Names []string `json:"names"`
		}
		_, err = c.guardedHelper(ctx, ts, "putFiles", &r, in.Ref, files, false)
		now = r.Names
	}
	if err != nil {
		return nil, err
	}
	line := fmt.Sprintf("Put %s into %s [%s]; it now holds %d file(s)", list, target.Desc, in.Ref, len(now))
	if len(now) > 0 {
		line += ": " + strings.Join(now, ", ")
	}
	return c.after(ctx, ts, w, in.TabID, []string{line + "."})
}

// setInputFiles hands Chromium the files on disk. The ref is resolved in
// the isolated world (refs live there), so the page cannot redirect it.
func (c *call) setInputFiles(ctx context.Context, ts *tabState, ref string, files []pageFile) ([]string, error) {
	// The ref's world has answered this call's helper calls already, so it
	// took its setup; element needs none in any case.
	id, _, err := ts.worldID(ctx, c.s.Label)
	if err != nil {
		return nil, err
	}
	var res evalResult
	if err := c.cdp(ctx, ts.id, "Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": "function(r){return globalThis.__reins.element(r)}",
		"executionContextId":  id,
		"arguments":           []map[string]any{{"value": ref}},
		"objectGroup":         fileObjectGroup,
	}, &res); err != nil {
		return nil, err
	}
	defer c.cdp(context.WithoutCancel(ctx), ts.id, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": fileObjectGroup}, nil) //nolint:errcheck // the group goes with the document anyway
	if res.ExceptionDetails != nil || res.Result.ObjectID == "" {
		msg := "the element is gone"
		if res.ExceptionDetails != nil {
			msg = firstLine(res.ExceptionDetails.text())
		}
		return nil, wire.Errorf(wire.CodeBadParams, "%s: %s", ref, strings.TrimPrefix(msg, "Error: "))
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	if err := c.cdp(ctx, ts.id, "DOM.setFileInputFiles", map[string]any{"files": paths, "objectId": res.Result.ObjectID}, nil); err != nil {
		return nil, err
	}
	var r struct {
		Names []string `json:"names"`
	}
	if _, err := ts.helper(ctx, c.s.Label, "fileNames", &r, ref); err != nil {
		return nil, err
	}
	return r.Names, nil
}

const fileObjectGroup = "reins-files"

func (c *call) drop(ctx context.Context, ts *tabState, w *watcher, tabID int, ref string, x, y float64, files []pageFile, where string) (*Result, error) {
	desc, accepted, err := c.dropFiles(ctx, ts, ref, x, y, files)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	line := fmt.Sprintf("Dropped %s on %s %s.", strings.Join(names, ", "), desc, where)
	if !accepted {
		line += " The page did not handle the drop (no drop handler called preventDefault)."
	}
	return c.after(ctx, ts, w, tabID, []string{line})
}

// dropFiles drops files on ref's element, or on what is at (x, y). The
// isolated world finds and marks the target (with the origin guard); the
// drop itself runs in the page's own world, because Firefox hides the
// files of a DataTransfer made in another world from the page's scripts.
// A page that navigated in between has no mark, and nothing is dropped.
func (c *call) dropFiles(ctx context.Context, ts *tabState, ref string, x, y float64, files []pageFile) (desc string, accepted bool, err error) {
	token := rand.Text()
	var mark struct {
		Desc string  `json:"desc"`
		X    float64 `json:"x"`
		Y    float64 `json:"y"`
	}
	if _, err := c.guardedHelper(ctx, ts, "dropMark", &mark, ref, x, y, token); err != nil {
		return "", false, err
	}
	args, err := json.Marshal([]any{token, files, mark.X, mark.Y})
	if err != nil {
		return "", false, wire.Errorf(wire.CodeInternal, "encoding the files: %v", err)
	}
	var res evalResult
	if err := c.cdp(ctx, ts.id, "Runtime.evaluate", map[string]any{
		"expression":    "(" + dropInPage + ")(..." + string(args) + ")",
		"returnByValue": true,
	}, &res); err != nil {
		return "", false, err
	}
	if res.ExceptionDetails != nil {
		return "", false, wire.Errorf(wire.CodeScriptError, "the drop failed in the page: %s", firstLine(res.ExceptionDetails.text()))
	}
	var out struct {
		Found    bool `json:"found"`
		Accepted bool `json:"accepted"`
	}
	if err := json.Unmarshal(res.Result.Value, &out); err != nil {
		return "", false, wire.Errorf(wire.CodeInternal, "the drop answered %s", truncate(string(res.Result.Value), 100))
	}
	if !out.Found {
		return "", false, wire.Errorf(wire.CodeNavigatedAway, "the page changed before the drop; nothing was dropped. Look at the page again")
	}
	return mark.Desc, out.Accepted, nil
}

// dropInPage runs in the page's own world: it drops files on the element
// dropMark marked, with the drag events a drop zone listens for.
const dropInPage = `function (token, files, x, y) {
  const sel = '[data-reins-drop="' + token + '"]';
  const find = (root) => {
    const hit = root.querySelector(sel);
    if (hit) return hit;
    for (const h of root.querySelectorAll('*')) {
      let inner = h.shadowRoot && find(h.shadowRoot);
      if (!inner && h.localName === 'iframe' && h.contentDocument) inner = find(h.contentDocument);
      if (inner) return inner;
    }
    return null;
  };
  const el = find(document);
  if (!el) return { found: false };
  el.removeAttribute('data-reins-drop');
  const dt = new DataTransfer();
  for (const f of files) {
    const bin = atob(f.data);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    dt.items.add(new File([bytes], f.name, { type: f.mime, lastModified: Date.now() }));
  }
  const o = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, dataTransfer: dt };
  const DragEvent = el.ownerDocument.defaultView.DragEvent;
  el.dispatchEvent(new DragEvent('dragenter', o));
  el.dispatchEvent(new DragEvent('dragover', o));
  return { found: true, accepted: !el.dispatchEvent(new DragEvent('drop', o)) };
}`

// uploadFiles checks and loads the agent's files: bytes are written into
// its upload folder, paths are resolved inside it.
func (c *call) uploadFiles(items []uploadFileItem) ([]pageFile, error) {
	if len(items) == 0 {
		return nil, wire.Errorf(wire.CodeBadParams, "files is empty")
	}
	if len(items) > maxUploadFiles {
		return nil, wire.Errorf(wire.CodeBadParams, "at most %d files at once", maxUploadFiles)
	}
	if c.e.opts.Files == nil {
		return nil, wire.Errorf(wire.CodeInternal, "this companion has no agent folders")
	}
	dir, err := c.e.opts.Files.Folder(c.s.Principal, agentfiles.Uploads)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInternal, "your upload folder: %v", err)
	}

	total := 0
	out := make([]pageFile, 0, len(items))
	for i, it := range items {
		if (it.Data == "") == (it.Path == "") {
			return nil, wire.Errorf(wire.CodeBadParams, "files[%d]: give either data (with name) or path", i)
		}
		var data []byte
		var f pageFile
		if it.Path != "" {
			real, fi, err := c.e.opts.Files.Resolve(c.s.Principal, agentfiles.Uploads, it.Path)
			switch {
			case errors.Is(err, agentfiles.ErrOutside):
				return nil, wire.Errorf(wire.CodeBadParams, "files[%d]: %q is outside your upload folder; only files in it can be uploaded by path", i, it.Path)
			case errors.Is(err, os.ErrNotExist):
				return nil, wire.Errorf(wire.CodeBadParams, "files[%d]: no file %q in your upload folder", i, it.Path)
			case err != nil:
				return nil, wire.Errorf(wire.CodeBadParams, "files[%d]: %v", i, err)
			}
			if total+int(fi.Size()) > maxUploadBytes {
				return nil, wire.Errorf(wire.CodeBadParams, "the files are larger than %d MiB together", maxUploadBytes>>20)
			}
			if data, err = os.ReadFile(real); err != nil {
				return nil, wire.Errorf(wire.CodeBadParams, "files[%d]: reading %q: %v", i, it.Path, err)
			}
			f = pageFile{Name: filepath.Base(real), Mime: it.MimeType, path: real}
		} else {
			if it.Name == "" {
				return nil, wire.Errorf(wire.CodeBadParams, "files[%d]: data needs a name", i)
			}
			if base64.StdEncoding.DecodedLen(len(it.Data)) > maxUploadBytes+3 {
				return nil, wire.Errorf(wire.CodeBadParams, "the files are larger than %d MiB together", maxUploadBytes>>20)
			}
			data, err = base64.StdEncoding.DecodeString(it.Data)
			if err != nil {
				return nil, wire.Errorf(wire.CodeBadParams, "files[%d]: data is not base64: %v", i, err)
			}
			name := agentfiles.CleanFileName(it.Name)
			if total+len(data) > maxUploadBytes {
				return nil, wire.Errorf(wire.CodeBadParams, "the files are larger than %d MiB together", maxUploadBytes>>20)
			}
			// Chromium reads a file input's files from disk; the bytes
			// stay in the upload folder, where the person can see them.
			p, err := agentfiles.Keep(dir, name, data)
			if err != nil {
				return nil, wire.Errorf(wire.CodeInternal, "files[%d]: %v", i, err)
			}
			f = pageFile{Name: name, Mime: it.MimeType, path: p}
		}
		total += len(data)
		if f.Mime == "" {
			f.Mime = mime.TypeByExtension(filepath.Ext(f.Name))
		}
		if f.Mime == "" {
			f.Mime = "application/octet-stream"
		}
		f.Data = base64.StdEncoding.EncodeToString(data)
		f.size = len(data)
		out = append(out, f)
	}
	return out, nil
}
