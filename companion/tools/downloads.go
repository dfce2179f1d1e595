package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ledongthuc/pdf"

	"github.com/reinshq/reins/companion/agentfiles"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Downloads started from a tab are followed from the tab's own events
// (Page.downloadWillBegin, Page.downloadProgress; the Firefox adapter
// reports the same from browser.downloads). When one completes, its file
// moves into the downloads folder of the principal that was acting on the
// tab: a dev browser writes it into the incoming folder under its guid
// (Browser.setDownloadBehavior), an extension's browser into its own
// Downloads folder, and downloads.wait says where.

type downloadsArgs struct {
	Action   string  `json:"action" jsonschema:"what to do"`
	ID       string  `json:"id,omitempty" jsonschema:"download id (dl_1); wait defaults to the newest"`
	TabID    int     `json:"tabId,omitempty" jsonschema:"tab (save_pdf; filter for list, wait)"`
	Timeout  float64 `json:"timeout,omitempty" jsonschema:"wait: seconds, default 30"`
	MaxChars int     `json:"maxChars,omitempty" jsonschema:"read: characters, default 50000"`
}

const (
	// maxDownloads bounds the downloads the engine remembers; the oldest
	// finished ones are forgotten first.
	maxDownloads = 200
	// maxDownloadWait bounds how long a download is followed before it
	// counts as failed.
	maxDownloadWait = 30 * time.Minute
	// downloadWaitChunk bounds one downloads.wait request, below the hub's
	// request timeout.
	downloadWaitChunk   = 20 * time.Second
	defaultDownloadWait = 30 * time.Second
	maxDownloadWaitCall = 120 * time.Second
	// maxReadBytes bounds the bytes of a file read reads; maxReadChars the
	// characters it returns.
	maxReadBytes = 8 << 20
	maxReadChars = 50000
	// maxPDFBytes bounds the PDFs read parses: the parser holds its
	// structures in memory.
	maxPDFBytes = 64 << 20
	// downloadBeginWait bounds the wait, after an action whose navigation
	// stopped without a new page, for the download it may have become.
	downloadBeginWait = 2 * time.Second
)

func registerDownloads(e *Engine) {
	define(e, Info{
		Name: "downloads",
		Description: "Files your tabs downloaded, kept in your downloads folder: list them, wait for one to finish (name, size, type), " +
			"read its text (text, CSV, JSON, PDF), or save_pdf a tab.",
		Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "action", "list", "wait", "read", "save_pdf")
		bounds(s, "timeout", 0, maxDownloadWaitCall.Seconds())
		bounds(s, "maxChars", 0, maxReadChars)
	}, runDownloads)
}

// download is one file a tab downloaded.
type download struct {
	id        string
	guid      string
	browserID int // the browser's own id (Firefox), 0 when unknown
	tab       int
	principal string
	browser   string
	url       string
	name      string
	started   time.Time

	state    string // in_progress, complete, canceled, failed
	received int64
	total    int64
	filePath string // where a dev browser wrote it
	path     string // in the principal's downloads folder
	mime     string
	size     int64
	err      string
	placing  bool
}

func (d *download) finished() bool { return d.state != "in_progress" && !d.placing }

type downloadTable struct {
	mu      sync.Mutex
	list    []*download // oldest first
	next    int
	changed chan struct{}
}

func newDownloadTable() *downloadTable { return &downloadTable{changed: make(chan struct{})} }

func (t *downloadTable) bump() {
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *downloadTable) byGUID(guid string) *download {
	for _, d := range t.list {
		if d.guid == guid {
			return d
		}
	}
	return nil
}

// begin records a download the tab's page started. It runs on the
// browser's reader goroutine: no I/O here.
func (t *downloadTable) begin(ts *tabState, params json.RawMessage) {
	var p struct {
		GUID       string `json:"guid"`
		URL        string `json:"url"`
		Suggested  string `json:"suggestedFilename"`
		DownloadID int    `json:"downloadId"`
	}
	if json.Unmarshal(params, &p) != nil || p.GUID == "" {
		return
	}
	actor, browser := ts.claimant(time.Now())
	if actor == "" {
		return // the person's own download, in a tab they shared
	}
	t.mu.Lock()
	if t.byGUID(p.GUID) != nil {
		t.mu.Unlock()
		return
	}
	t.next++
	d := &download{
		id: fmt.Sprintf("dl_%d", t.next), guid: p.GUID, browserID: p.DownloadID, tab: ts.id, principal: actor, browser: browser,
		url: p.URL, name: agentfiles.CleanFileName(p.Suggested), started: time.Now(), state: "in_progress",
	}
	if len(t.list) >= maxDownloads {
		drop := 0
		for i, o := range t.list {
			if o.finished() {
				drop = i
				break
			}
		}
		t.list = append(t.list[:drop], t.list[drop+1:]...)
	}
	t.list = append(t.list, d)
	t.bump()
	t.mu.Unlock()
	ts.e.follow(d)
}

// progress updates a download from Page.downloadProgress or a dev
// browser's Browser.downloadProgress, which names the file it wrote.
func (t *downloadTable) progress(e *Engine, params json.RawMessage) {
	var p struct {
		GUID     string `json:"guid"`
		State    string `json:"state"`
		Received int64  `json:"receivedBytes"`
		Total    int64  `json:"totalBytes"`
		FilePath string `json:"filePath"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	t.mu.Lock()
	d := t.byGUID(p.GUID)
	if d == nil || (d.state != "in_progress" && !d.placing) {
		t.mu.Unlock()
		return
	}
	d.received, d.total = p.Received, p.Total
	if p.FilePath != "" {
		d.filePath = p.FilePath
	}
	place := false
	switch p.State {
	case "canceled":
		d.state, d.err = "canceled", "the download was cancelled"
	case "completed":
		// A dev browser names the file; an extension's browser is asked
		// by follow, which is already waiting.
		if d.filePath != "" && !d.placing && d.path == "" {
			d.placing, place = true, true
		}
	}
	t.bump()
	t.mu.Unlock()
	if place {
		e.background(func(ctx context.Context) { e.place(ctx, d, d.filePath, "") })
	}
}

// background runs fn on its own goroutine until the engine closes.
func (e *Engine) background(fn func(ctx context.Context)) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.bg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.bg.Done()
		fn(e.stopCtx)
	}()
}

// follow waits, in an extension's browser, for the browser to finish the
// download and say where the file is; a dev browser reports that in its
// events instead.
func (e *Engine) follow(d *download) {
	b, err := e.hub.Browser(d.browser)
	if err != nil || b.Mode == hub.ModeDev {
		return
	}
	e.downloads.mu.Lock()
	d.placing = true
	e.downloads.mu.Unlock()
	e.background(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, maxDownloadWait)
		defer cancel()
		since := d.started.Add(-5 * time.Second).UnixMilli()
		for {
			var item wire.DownloadItem
			raw, err := e.hub.Request(ctx, d.browser, wire.MethodDownloadsWait, wire.DownloadsWaitParams{
				ID: d.browserID, URL: d.url, Since: since, TimeoutMS: int(downloadWaitChunk.Milliseconds()),
			})
			if err == nil {
				err = json.Unmarshal(raw, &item)
			}
			if err != nil {
				e.failDownload(d, fmt.Sprintf("the browser did not say where it saved the file: %v", err))
				return
			}
			switch item.State {
			case "in_progress":
				if ctx.Err() != nil {
					e.failDownload(d, "the download did not finish in time")
					return
				}
				continue
			case "complete":
				e.place(ctx, d, item.Filename, item.Mime)
			default:
				msg := item.Error
				if msg == "" {
					msg = "interrupted"
				}
				e.failDownload(d, "the download failed: "+msg)
			}
			return
		}
	})
}

func (e *Engine) failDownload(d *download, msg string) {
	t := e.downloads
	t.mu.Lock()
	d.placing = false
	if d.state == "in_progress" {
		d.state, d.err = "failed", msg
	}
	t.bump()
	t.mu.Unlock()
	e.log.Warn("download not saved", "tab", d.tab, "principal", d.principal, "download", d.id, "err", msg)
}

// place moves the finished file into its principal's downloads folder.
func (e *Engine) place(ctx context.Context, d *download, from, mimeType string) {
	t := e.downloads
	path := from
	var err error
	if e.opts.Files != nil && d.principal != "" && from != "" {
		var dir string
		dir, err = e.opts.Files.Folder(d.principal, agentfiles.Downloads)
		if err == nil {
			name := d.name
			if name == "" || name == "file" {
				name = agentfiles.CleanFileName(filepath.Base(from))
			}
			path, err = agentfiles.Move(from, dir, name)
		}
	}
	var size int64
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(path); err == nil {
			size = fi.Size()
		}
	}
	if err != nil {
		e.failDownload(d, fmt.Sprintf("the file could not be moved to the downloads folder: %v", err))
		return
	}
	if mimeType == "" || mimeType == "application/octet-stream" {
		mimeType = sniffType(path)
	}
	t.mu.Lock()
	d.placing, d.state, d.path, d.size, d.mime = false, "complete", path, size, mimeType
	d.received = size
	t.bump()
	t.mu.Unlock()
	e.log.Info("download saved", "tab", d.tab, "principal", d.principal, "download", d.id, "bytes", size)
}

// sniffType names a file's type from its extension, or its first bytes.
func sniffType(path string) string {
	if t := mime.TypeByExtension(filepath.Ext(path)); t != "" {
		return t
	}
	f, err := os.Open(path)
	if err != nil {
		return "application/octet-stream"
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return http.DetectContentType(head[:n])
}

// downloadsTo points a dev browser's downloads at the incoming folder,
// named by guid, with events on, once per tab session.
func (e *Engine) downloadsTo(ctx context.Context, ts *tabState, agent string) error {
	if e.opts.Files == nil || ts.dlReady.Load() {
		return nil
	}
	b, err := e.hub.Browser(ts.browserID())
	if err != nil || b.Mode != hub.ModeDev {
		ts.dlReady.Store(true)
		return nil
	}
	dir, err := e.opts.Files.Incoming()
	if err != nil {
		return wire.Errorf(wire.CodeInternal, "the downloads folder: %v", err)
	}
	if _, err := e.hub.CDP(ctx, ts.id, "Browser.setDownloadBehavior", map[string]any{
		"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true,
	}, "", agent); err != nil {
		return fmt.Errorf("preparing tab %d for downloads: %w", ts.id, err)
	}
	ts.dlReady.Store(true)
	return nil
}

// downloadNotes reads the downloads an action started from its events,
// waiting a little for one when a navigation ended without a new page.
func (c *call) downloadNotes(ctx context.Context, w *watcher, guids []string, maybe bool) []string {
	if len(guids) == 0 && maybe {
		wctx, cancel := context.WithTimeout(ctx, downloadBeginWait)
		for len(guids) == 0 {
			ev, err := w.next(wctx)
			if err != nil {
				break
			}
			if ev.Method == "Page.downloadWillBegin" {
				guids = append(guids, guidOf(ev.Params))
			}
		}
		cancel()
	}
	var out []string
	t := c.e.downloads
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, g := range guids {
		if d := t.byGUID(g); d != nil {
			out = append(out, fmt.Sprintf("This started download %s: %s. downloads wait gives its size and type when it is done.", d.id, d.name))
		}
	}
	return out
}

func guidOf(params json.RawMessage) string {
	var p struct {
		GUID string `json:"guid"`
	}
	json.Unmarshal(params, &p) //nolint:errcheck // an empty guid matches nothing
	return p.GUID
}

func runDownloads(ctx context.Context, c *call, in *downloadsArgs) (*Result, error) {
	switch in.Action {
	case "list":
		return c.listDownloads(in)
	case "wait":
		return c.waitDownload(ctx, in)
	case "read":
		return c.readDownload(in)
	case "save_pdf":
		return c.savePDF(ctx, in)
	}
	return nil, wire.Errorf(wire.CodeBadParams, "unknown action %q; use list, wait, read or save_pdf", in.Action)
}

// mine returns the principal's downloads (of one tab when tab > 0),
// oldest first. The caller holds t.mu.
func (c *call) mine(tab int) []*download {
	var out []*download
	for _, d := range c.e.downloads.list {
		if d.principal == c.s.Principal && (tab <= 0 || d.tab == tab) {
			out = append(out, d)
		}
	}
	return out
}

func describeDownload(d *download) string {
	switch {
	case d.state == "complete":
		return fmt.Sprintf("%s %s: complete, %d bytes, %s, from tab %d; saved as %s", d.id, d.name, d.size, d.mime, d.tab, d.path)
	case d.state == "in_progress" || d.placing:
		s := fmt.Sprintf("%s %s: in progress from tab %d", d.id, d.name, d.tab)
		if d.total > 0 {
			s += fmt.Sprintf(", %d of %d bytes", d.received, d.total)
		}
		return s
	}
	return fmt.Sprintf("%s %s: %s from tab %d: %s", d.id, d.name, d.state, d.tab, d.err)
}

func (c *call) listDownloads(in *downloadsArgs) (*Result, error) {
	if in.TabID > 0 {
		if _, _, err := c.tab(in.TabID, accessRead); err != nil {
			return nil, err
		}
	}
	t := c.e.downloads
	t.mu.Lock()
	ds := c.mine(in.TabID)
	lines := make([]string, 0, len(ds)+1)
	for _, d := range ds {
		lines = append(lines, describeDownload(d))
	}
	t.mu.Unlock()
	if len(lines) == 0 {
		return textResult("No downloads from your tabs yet."), nil
	}
	return textResult(append([]string{fmt.Sprintf("%d download(s), oldest first:", len(lines))}, lines...)...), nil
}

func (c *call) waitDownload(ctx context.Context, in *downloadsArgs) (*Result, error) {
	timeout := defaultDownloadWait
	if in.Timeout > 0 {
		timeout = time.Duration(in.Timeout * float64(time.Second))
	}
	if timeout > maxDownloadWaitCall {
		return nil, wire.Errorf(wire.CodeBadParams, "timeout is at most %g seconds", maxDownloadWaitCall.Seconds())
	}
	if in.TabID > 0 {
		if _, _, err := c.tab(in.TabID, accessRead); err != nil {
			return nil, err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := c.e.downloads
	for {
		t.mu.Lock()
		var d *download
		ds := c.mine(in.TabID)
		if in.ID != "" {
			for _, o := range ds {
				if o.id == in.ID {
					d = o
				}
			}
			if d == nil {
				t.mu.Unlock()
				return nil, wire.Errorf(wire.CodeBadParams, "no download %s of yours", in.ID)
			}
		} else if len(ds) > 0 {
			d = ds[len(ds)-1]
		}
		changed := t.changed
		if d != nil && d.finished() {
			line := describeDownload(d)
			t.mu.Unlock()
			return textResult(line), nil
		}
		t.mu.Unlock()
		select {
		case <-changed:
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if d == nil {
				return nil, wire.Errorf(wire.CodeTimeout, "no download started within %s", timeout)
			}
			return nil, wire.Errorf(wire.CodeTimeout, "%s did not finish within %s", d.id, timeout)
		}
	}
}

func (c *call) readDownload(in *downloadsArgs) (*Result, error) {
	if in.ID == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "read needs the id of a download (dl_1)")
	}
	t := c.e.downloads
	t.mu.Lock()
	var d download
	found := false
	for _, o := range c.mine(0) {
		if o.id == in.ID {
			d, found = *o, true
		}
	}
	t.mu.Unlock()
	if !found {
		return nil, wire.Errorf(wire.CodeBadParams, "no download %s of yours", in.ID)
	}
	if d.state != "complete" || d.placing {
		return nil, wire.Errorf(wire.CodeBadParams, "%s is not complete: %s", d.id, describeDownload(&d))
	}
	limit := maxReadChars
	if in.MaxChars > 0 && in.MaxChars < limit {
		limit = in.MaxChars
	}
	text, note, err := fileText(d.path, d.mime, limit)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("%s (%s, %d bytes, %s):", d.id, d.name, d.size, d.mime)
	if note != "" {
		head += " " + note
	}
	return textResult(head, text), nil
}

// fileText returns up to limit characters of a file's text, and a note
// when it was cut.
func fileText(path, mimeType string, limit int) (string, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", wire.Errorf(wire.CodeBadParams, "the file is gone from the downloads folder: %v", err)
	}
	defer f.Close()
	base := strings.TrimSpace(strings.SplitN(mimeType, ";", 2)[0])
	if base == "application/pdf" || strings.EqualFold(filepath.Ext(path), ".pdf") {
		return pdfText(f, limit)
	}
	data, cut, err := readCapped(f)
	if err != nil {
		return "", "", wire.Errorf(wire.CodeInternal, "reading the file: %v", err)
	}
	if !textual(base, data) {
		return "", "", wire.Errorf(wire.CodeUnsupported, "the file is %s, not text; read takes text, CSV, JSON and PDF", mimeType)
	}
	return clipText(string(bytes.ToValidUTF8(data, []byte("\uFFFD"))), limit, cut)
}

func textual(mimeType string, data []byte) bool {
	switch {
	case strings.HasPrefix(mimeType, "text/"), strings.HasSuffix(mimeType, "+json"), strings.HasSuffix(mimeType, "+xml"),
		mimeType == "application/json", mimeType == "application/xml", mimeType == "application/javascript",
		mimeType == "application/csv", mimeType == "application/x-ndjson", mimeType == "application/yaml":
		return true
	}
	head := data[:min(len(data), 4096)]
	// The cut may split the last character.
	for i := 0; i < utf8.UTFMax-1 && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return utf8.Valid(head) && !bytes.ContainsRune(head, 0) || strings.HasPrefix(http.DetectContentType(head), "text/")
}

// readCapped reads at most maxReadBytes and says whether there was more.
func readCapped(r io.Reader) ([]byte, bool, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxReadBytes+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > maxReadBytes {
		return data[:maxReadBytes], true, nil
	}
	return data, false, nil
}

func clipText(s string, limit int, cut bool) (string, string, error) {
	n := utf8.RuneCountInString(s)
	if n > limit {
		i := 0
		for j := range s {
			if i == limit {
				s = s[:j]
				break
			}
			i++
		}
		return s, fmt.Sprintf("the first %d of %d characters%s.", limit, n, map[bool]string{true: "+", false: ""}[cut]), nil
	}
	if cut {
		return s, fmt.Sprintf("the first %d bytes only.", maxReadBytes), nil
	}
	return s, "", nil
}

// pdfText extracts a PDF's text. The parser is defensive about what it
// reads, but a malformed file must fail this call, not the companion.
func pdfText(f *os.File, limit int) (text, note string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, note, err = "", "", wire.Errorf(wire.CodeUnsupported, "the PDF could not be read: %v", r)
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return "", "", wire.Errorf(wire.CodeInternal, "reading the PDF: %v", err)
	}
	if fi.Size() > maxPDFBytes {
		return "", "", wire.Errorf(wire.CodeUnsupported, "the PDF is %d MiB; read takes the text of PDFs up to %d MiB", fi.Size()>>20, maxPDFBytes>>20)
	}
	r, err := pdf.NewReader(f, fi.Size())
	if err != nil {
		return "", "", wire.Errorf(wire.CodeUnsupported, "the PDF could not be read: %v", err)
	}
	rd, err := r.GetPlainText()
	if err != nil {
		return "", "", wire.Errorf(wire.CodeUnsupported, "the PDF's text could not be read: %v", err)
	}
	data, cut, err := readCapped(rd)
	if err != nil {
		return "", "", wire.Errorf(wire.CodeUnsupported, "the PDF's text could not be read: %v", err)
	}
	return clipText(ligatures.Replace(strings.TrimSpace(string(bytes.ToValidUTF8(data, []byte("\uFFFD"))))), limit, cut)
}

// ligatures spells out the typographic ligatures PDFs draw words with, so
// "conﬁrmation" reads and searches as "confirmation".
var ligatures = strings.NewReplacer("\uFB00", "ff", "\uFB01", "fi", "\uFB02", "fl", "\uFB03", "ffi", "\uFB04", "ffl", "\uFB05", "st", "\uFB06", "st")

// savePDF prints the tab to a PDF in the principal's downloads folder.
func (c *call) savePDF(ctx context.Context, in *downloadsArgs) (*Result, error) {
	if in.TabID <= 0 {
		return nil, wire.Errorf(wire.CodeBadParams, "save_pdf needs tabId")
	}
	ts, t, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	if t.BrowserEngine == wire.EngineFirefox {
		return nil, wire.Errorf(wire.CodeUnsupported, "save_pdf is not available in Firefox: extensions can only print to PDF through a save dialog the person answers")
	}
	if c.e.opts.Files == nil {
		return nil, wire.Errorf(wire.CodeInternal, "this companion has no agent folders")
	}
	dir, err := c.e.opts.Files.Folder(c.s.Principal, agentfiles.Downloads)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInternal, "your downloads folder: %v", err)
	}
	var info struct {
		Title string `json:"title"`
	}
	href, err := ts.helper(ctx, c.s.Label, "info", &info)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data string `json:"data"`
	}
	if err := c.cdp(ctx, in.TabID, "Page.printToPDF", map[string]any{"printBackground": true}, &out); err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(out.Data)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInternal, "Page.printToPDF returned undecodable data")
	}
	name := strings.TrimSpace(info.Title)
	if name == "" {
		name = "page"
	}
	path, err := agentfiles.Save(dir, agentfiles.CleanFileName(name)+".pdf", data)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInternal, "saving the PDF: %v", err)
	}
	c.observe(in.TabID, href)
	d := c.e.downloads.saved(in.TabID, c.s.Principal, c.browser, href, path, int64(len(data)))
	return textResult(fmt.Sprintf("Saved tab %d (%s) as %s: %s, %d bytes. downloads read %s gives its text.", in.TabID, href, d.id, path, len(data), d.id)), nil
}

// saved records a file Reins itself wrote (save_pdf) as a finished download.
func (t *downloadTable) saved(tab int, principal, browser, url, path string, size int64) *download {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	d := &download{
		id: fmt.Sprintf("dl_%d", t.next), guid: fmt.Sprintf("reins-%d", t.next), tab: tab, principal: principal, browser: browser,
		url: url, name: filepath.Base(path), started: time.Now(), state: "complete", path: path, size: size, mime: "application/pdf",
	}
	if len(t.list) >= maxDownloads {
		t.list = t.list[1:]
	}
	t.list = append(t.list, d)
	t.bump()
	return d
}
