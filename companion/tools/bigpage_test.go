package tools_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

var fromRefRE = regexp.MustCompile(`continue with from_ref="(ref_(?:f\d+_)?\d+)"`)

// treeLines is a read_page answer without its two header lines and its
// notes.
func treeLines(out string) []string {
	lines := strings.Split(out, "\n")[2:]
	var keep []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "[") {
			keep = append(keep, l)
		}
	}
	return keep
}

// readAll reads a tab in pieces of at most limit characters, following
// each cut's from_ref, and returns every line and the number of pieces.
func (r *rig) readAll(s *tools.Session, tab int, args map[string]any, limit int) ([]string, int) {
	r.tb.Helper()
	var all []string
	from := ""
	for pieces := 1; ; pieces++ {
		a := map[string]any{"tabId": tab, "max_chars": limit}
		for k, v := range args {
			a[k] = v
		}
		if from != "" {
			a["from_ref"] = from
		}
		out := r.ok(s, "read_page", a)
		if len(out) > limit {
			r.tb.Fatalf("piece %d is %d characters, over max_chars=%d", pieces, len(out), limit)
		}
		got := treeLines(out)
		if len(got) == 0 {
			r.tb.Fatalf("piece %d from %s is empty:\n%s", pieces, from, out)
		}
		all = append(all, got...)
		m := fromRefRE.FindStringSubmatch(out)
		if m == nil {
			return all, pieces
		}
		if m[1] == from {
			r.tb.Fatalf("piece %d continues from where it started (%s):\n%s", pieces, from, out)
		}
		from = m[1]
		if pieces > 500 {
			r.tb.Fatal("read_page never ends")
		}
	}
}

func TestReadPageContinuesWhereItStopped(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:pager", "pager")

	t.Run("1000 rows", func(t *testing.T) {
		tab := r.newTab(s, "/rows")
		first := r.ok(s, "read_page", map[string]any{"tabId": tab})
		if len(first) > 30000 || !fromRefRE.MatchString(first) || strings.Contains(first, "Order #873") {
			t.Fatalf("the first read should stop before row 873 and say where to go on (%d chars):\n%s", len(first), first[len(first)-300:])
		}
		whole := r.ok(s, "read_page", map[string]any{"tabId": tab, "max_chars": 1000000})
		want := treeLines(whole)
		got, pieces := r.readAll(s, tab, nil, 30000)
		if pieces < 2 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%d pieces gave %d lines; one read gives %d", pieces, len(got), len(want))
		}
		// Row 873's Open button, read in a later piece, is clickable.
		ref := refFor(t, strings.Join(got, "\n"), `button "Open order 873"`)
		r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": ref})
		if clicks := only(r.log(s, tab), "click"); len(clicks) != 1 || clicks[0].ID != "open873" {
			t.Fatalf("clicks: %+v", clicks)
		}
		inter, _ := r.readAll(s, tab, map[string]any{"filter": "interactive"}, 4000)
		if len(inter) != 1000 {
			t.Fatalf("interactive pieces hold %d lines, want the 1000 buttons", len(inter))
		}
	})

	t.Run("across frames", func(t *testing.T) {
		tab := r.newTab(s, framesURL(r))
		r.waitFramesLoaded(s, tab)
		want := treeLines(r.ok(s, "read_page", map[string]any{"tabId": tab}))
		// Small pieces cut inside frames, nested ones too.
		got, pieces := r.readAll(s, tab, nil, 700)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%d pieces:\n%s\n--- one read:\n%s", pieces, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("the walk limit", func(t *testing.T) {
		const n = 31000
		tab := r.newTab(s, fmt.Sprintf("/spans?n=%d", n))
		out := r.ok(s, "read_page", map[string]any{"tabId": tab, "max_chars": 1000000})
		m := regexp.MustCompile(`\[stopped after 30000 elements; continue with from_ref="(ref_\d+)"\]`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no walk-limit note:\n%s", out[len(out)-200:])
		}
		rest := r.ok(s, "read_page", map[string]any{"tabId": tab, "max_chars": 1000000, "from_ref": m[1]})
		if !strings.Contains(rest, fmt.Sprintf(`text "s%d"`, n)) || strings.Contains(rest, "stopped after") {
			t.Fatalf("the rest does not reach the last span:\n%s", rest[len(rest)-200:])
		}
		// The main landmark's line, then every span once.
		both := append(treeLines(out), treeLines(rest)...)
		if len(both) != n+1 {
			t.Fatalf("%d lines in two reads, want %d", len(both), n+1)
		}
		seen := map[string]bool{}
		for _, l := range both {
			if seen[l] {
				t.Fatalf("%s read twice", l)
			}
			seen[l] = true
		}
	})

	t.Run("a from_ref outside ref_id", func(t *testing.T) {
		tab := r.newTab(s, "/form")
		tree := r.ok(s, "read_page", map[string]any{"tabId": tab})
		out := r.ok(s, "read_page", map[string]any{"tabId": tab, "from_ref": refFor(t, tree, `textbox "Notes"`)})
		if strings.Contains(out, "Sign up") || !strings.Contains(out, `button "Create account"`) {
			t.Fatalf("from_ref did not start at Notes:\n%s", out)
		}
		r.fails(s, "read_page", map[string]any{"tabId": tab, "from_ref": "ref_999999"}, wire.CodeBadParams)
	})
}

func TestFrameLimits(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:frames-limit", "frames-limit")
	n := 50
	tab := r.newTab(s, fmt.Sprintf("/manyframes?n=%d", n))
	out := r.ok(s, "read_page", map[string]any{"tabId": tab})
	read := strings.Count(out, "text \"Inside frame")
	if read != 48 {
		t.Fatalf("%d of %d frames read, want the limit of 48:\n%s", read, n, out)
	}
	if !strings.Contains(out, "[2 frame(s) not read") {
		t.Fatalf("no note of the frames left unread:\n%s", out)
	}
	// The frames left out are read by ref_id.
	last := refFor(t, out, fmt.Sprintf(`iframe "Frame %d"`, n))
	if sub := r.ok(s, "read_page", map[string]any{"tabId": tab, "ref_id": last}); !strings.Contains(sub, fmt.Sprintf("Inside frame %d", n)) {
		t.Fatalf("ref_id of the last frame:\n%s", sub)
	}
}
