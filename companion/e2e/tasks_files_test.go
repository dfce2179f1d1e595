package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/reinshq/reins/companion/e2e/internal/taskpages"
)

// Files in and out: an upload the server checks byte for byte, and a
// download whose content the agent reads back and types into the page.

const invoice = "INVOICE 4471\nTeam lunch, 6 people\nTotal 129.50 EUR\n"

// photo is a 1×1 PNG, bytes that are not text.
var photo = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

var (
	downloadIDRE = regexp.MustCompile(`download (dl_\d+)`)
	savedIDRE    = regexp.MustCompile(`as (dl_\d+)`)
	rcCodeRE     = regexp.MustCompile(`Confirmation code:\s*(RC-\w+)`)
)

func init() {
	registerTask(agentTask{
		name: "upload",
		setup: func(pages *taskpages.Server) {
			pages.Handle("POST /upload", func(w http.ResponseWriter, r *http.Request) {
				if err := r.ParseMultipartForm(1 << 20); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				f, h, err := r.FormFile("invoice")
				if err != nil {
					http.Error(w, "no invoice attached", http.StatusBadRequest)
					return
				}
				defer f.Close()
				got, _ := io.ReadAll(f)
				if string(got) != invoice || h.Filename != "invoice-4471.txt" || r.FormValue("title") != "Team lunch" {
					http.Error(w, "that is not the invoice", http.StatusBadRequest)
					return
				}
				pages.Done("upload", h.Filename+" "+h.Header.Get("Content-Type"))
				io.WriteString(w, "<!doctype html><title>Claim sent</title><p>Claim sent.</p>")
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/upload"))
			a.on("upload_file", map[string]any{"ref": a.find("Invoice file input", "Invoice file"), "files": []map[string]any{{
				"name": "invoice-4471.txt", "mimeType": "text/plain", "data": base64.StdEncoding.EncodeToString([]byte(invoice)),
			}}})
			a.click(a.find("Send claim button", `button "Send claim"`))
		},
	})

	registerTask(agentTask{
		name: "drop",
		setup: func(pages *taskpages.Server) {
			pages.Handle("POST /photo", func(w http.ResponseWriter, r *http.Request) {
				f, h, err := r.FormFile("photo")
				if err != nil {
					http.Error(w, "no photo", http.StatusBadRequest)
					return
				}
				defer f.Close()
				got, _ := io.ReadAll(f)
				if !bytes.Equal(got, photo) || h.Filename != "me.png" || h.Header.Get("Content-Type") != "image/png" {
					http.Error(w, "that is not the photo", http.StatusBadRequest)
					return
				}
				pages.Done("drop", fmt.Sprintf("%s, %d bytes", h.Filename, len(got)))
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/drop"))
			a.on("upload_file", map[string]any{"ref": a.find("Drop your photo here", `region "Drop your photo here"`), "files": []map[string]any{{
				"name": "me.png", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(photo),
			}}})
		},
	})

	// The largest upload an agent may make: 10 MiB in one call.
	dataset := make([]byte, 10<<20)
	for i := range dataset {
		dataset[i] = byte(i*7 + i>>9)
	}
	registerTask(agentTask{
		name: "bigupload",
		setup: func(pages *taskpages.Server) {
			pages.Handle("POST /bigupload", func(w http.ResponseWriter, r *http.Request) {
				f, h, err := r.FormFile("dataset")
				if err != nil {
					http.Error(w, "no dataset", http.StatusBadRequest)
					return
				}
				defer f.Close()
				got, _ := io.ReadAll(f)
				if !bytes.Equal(got, dataset) {
					http.Error(w, "that is not the dataset", http.StatusBadRequest)
					return
				}
				pages.Done("bigupload", fmt.Sprintf("%s, %d bytes", h.Filename, len(got)))
				io.WriteString(w, "<!doctype html><title>Uploaded</title><p>Dataset uploaded.</p>")
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/bigupload"))
			a.on("upload_file", map[string]any{"ref": a.find("Dataset file input", "Dataset file"), "files": []map[string]any{{
				"name": "dataset.bin", "mimeType": "application/octet-stream", "data": base64.StdEncoding.EncodeToString(dataset),
			}}})
			a.click(a.find("Upload dataset button", `button "Upload dataset"`))
		},
	})

	var mu sync.Mutex
	var code string
	registerTask(agentTask{
		name: "download",
		setup: func(pages *taskpages.Server) {
			pages.Handle("GET /task-files/unlock-code.txt", func(w http.ResponseWriter, r *http.Request) {
				b := make([]byte, 4)
				rand.Read(b)
				mu.Lock()
				code = strings.ToUpper(hex.EncodeToString(b))
				c := code
				mu.Unlock()
				w.Header().Set("Content-Type", "text/plain")
				w.Header().Set("Content-Disposition", `attachment; filename="unlock-code.txt"`)
				io.WriteString(w, "Keep this file private.\nUnlock code: "+c+"\n")
			})
			pages.Handle("POST /unlock", func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				want := code
				mu.Unlock()
				if want == "" || r.FormValue("code") != want {
					http.Error(w, "wrong code", http.StatusForbidden)
					return
				}
				pages.Done("download", want)
				io.WriteString(w, "<!doctype html><title>Unlocked</title><p>Your account is unlocked.</p>")
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/download"))
			clicked := a.click(a.find("Download unlock code link", "Download unlock code"))
			m := downloadIDRE.FindStringSubmatch(clicked.text)
			if m == nil {
				a.t.Fatalf("the click's result does not mention the download: %s", clicked.text)
			}
			done := a.must("downloads", map[string]any{"action": "wait", "id": m[1]})
			if !strings.Contains(done.text, "unlock-code.txt: complete") {
				a.t.Fatalf("downloads wait answered %s", done.text)
			}
			text := a.must("downloads", map[string]any{"action": "read", "id": m[1]}).text
			got := regexp.MustCompile(`Unlock code: (\w+)`).FindStringSubmatch(text)
			if got == nil {
				a.t.Fatalf("downloads read answered %s", text)
			}
			a.on("form_input", map[string]any{"ref": a.find("Unlock code field", "Unlock code"), "value": got[1]})
			a.click(a.find("Unlock button", `button "Unlock"`))
		},
	})
	registerTask(agentTask{
		name:  "pdf",
		notOn: map[string]string{"firefox": "Firefox lets an extension print to PDF only through a save dialog the person answers"},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/receipt"))
			saved := a.on("downloads", map[string]any{"action": "save_pdf"})
			m := savedIDRE.FindStringSubmatch(saved.text)
			if m == nil {
				a.t.Fatalf("save_pdf answered %s", saved.text)
			}
			text := a.must("downloads", map[string]any{"action": "read", "id": m[1]}).text
			code := rcCodeRE.FindStringSubmatch(text)
			if code == nil {
				a.t.Fatalf("the PDF's text has no confirmation code: %s", text)
			}
			a.on("form_input", map[string]any{"ref": a.find("Confirmation code field", "Confirmation code"), "value": code[1]})
			a.click(a.find("Confirm button", `button "Confirm"`))
		},
		unsupported: func(a *taskAgent) {
			a.open(a.pages.URL("/task/receipt"))
			out := a.call("downloads", map[string]any{"action": "save_pdf", "tabId": a.tab})
			if !out.isErr || !strings.Contains(out.text, "[unsupported]") {
				a.t.Fatalf("save_pdf in Firefox answered %+v, want an unsupported error", out)
			}
		},
	})
}
