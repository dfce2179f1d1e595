package e2e

import (
	"bytes"
	"image/jpeg"
	"strings"
)

// Tasks of pointer and keyboard depth: editors, hover menus, chords, drag
// and drop, a canvas.
func init() {
	registerTask(agentTask{
		name: "editor",
		run: func(a *taskAgent) {
			// form_input types into the editor, Enter between the lines,
			// so the editor's own input handling builds its model.
			a.open(a.pages.URL("/task/editor"))
			a.on("form_input", map[string]any{"ref": a.find("Release notes editor", "Release notes editor"), "value": "Shipped the new dashboard\nFixed the login bug"})
			a.click(a.find("Publish button", `button "Publish"`))
		},
	})
	registerTask(agentTask{
		name: "hover-menu",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/menu"))
			a.on("computer", map[string]any{"action": "hover", "ref": a.find("Account", `"Account"`)})
			a.click(a.find("Billing settings link", `link "Billing settings"`))
		},
		notOn: map[string]string{"firefox": "Firefox applies no :hover styles to the synthetic pointer events a WebExtension can send, so a menu CSS opens on :hover stays closed"},
		unsupported: func(a *taskAgent) {
			a.open(a.pages.URL("/task/menu"))
			out := a.on("computer", map[string]any{"action": "hover", "ref": a.find("Account", `"Account"`)})
			if !strings.Contains(out.text, "Firefox cannot show :hover styles") {
				a.t.Fatalf("the hover result does not say what Firefox cannot do: %s", out.text)
			}
			if found := a.on("find", map[string]any{"query": "Billing settings link"}); strings.Contains(found.text, `link "Billing settings"`) {
				a.t.Fatalf("the menu opened after all; the note is wrong:\n%s", found.text)
			}
		},
	})
	registerTask(agentTask{
		name: "palette",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/palette"))
			a.on("computer", map[string]any{"action": "key", "text": "Ctrl+K"})
			a.on("computer", map[string]any{"action": "type", "text": "archive"})
			a.on("computer", map[string]any{"action": "key", "text": "Return"})
		},
	})
	registerTask(agentTask{
		name: "kanban",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/kanban"))
			a.on("computer", map[string]any{"action": "left_click_drag",
				"ref": a.find("Fix the login bug card", "Fix the login bug"), "target_ref": a.find("Done column", `region "Done"`)})
		},
	})
	registerTask(agentTask{
		name: "canvas",
		run: func(a *taskAgent) {
			// Nothing on the page names the dot: the agent finds it in a
			// screenshot and clicks there.
			a.open(a.pages.URL("/task/canvas"))
			shot := a.on("computer", map[string]any{"action": "screenshot"})
			if len(shot.images) != 1 {
				a.t.Fatalf("screenshot: %s", shot.text)
			}
			x, y := redDot(a, shot.images[0])
			a.on("computer", map[string]any{"action": "left_click", "coordinate": []int{x, y}})
		},
	})
}

// redDot finds the centre of the red pixels of a JPEG screenshot.
func redDot(a *taskAgent, data []byte) (int, int) {
	a.t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		a.t.Fatal(err)
	}
	b := img.Bounds()
	sx, sy, n := 0, 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			if r>>8 > 180 && g>>8 < 80 && bb>>8 < 80 {
				sx, sy, n = sx+x, sy+y, n+1
			}
		}
	}
	if n < 20 {
		a.t.Fatalf("no red dot in the %d×%d screenshot", b.Dx(), b.Dy())
	}
	return sx / n, sy / n
}
