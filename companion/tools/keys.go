package tools

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Key names follow xdotool ("ctrl+a", "Return", "shift+Tab", "Page_Down"),
// which is what agents trained on the computer tool send, and take the
// names people write too: "Ctrl+K", "Cmd+Shift+P", "⌘+a", and "CmdOrCtrl+s"
// for the platform's primary modifier. A letter is the same key whatever
// its case; shift is named when meant. A sequence is space separated:
// "ctrl+a Delete".

// CDP modifier bits.
const (
	modAlt   = 1
	modCtrl  = 2
	modMeta  = 4
	modShift = 8
	// modPrimary is Meta on macOS and Control elsewhere, settled when the
	// keys are pressed; it never reaches the browser.
	modPrimary = 16
)

type keyDef struct {
	Key  string // DOM key value
	Code string // DOM code value
	VK   int    // Windows virtual key code
	Text string // text the key inserts, "" for none
	Loc  int    // DOM location: 1 left, 2 right, 3 numpad
}

// keyCombo is one chord: modifiers held while key is pressed.
type keyCombo struct {
	mods    int
	modKeys []keyDef
	key     keyDef
	modOnly bool
}

var modifierNames = map[string]struct {
	bit int
	def keyDef
}{
	"ctrl": {modCtrl, keyDef{"Control", "ControlLeft", 17, "", 1}}, "control": {modCtrl, keyDef{"Control", "ControlLeft", 17, "", 1}},
	"shift": {modShift, keyDef{"Shift", "ShiftLeft", 16, "", 1}},
	"alt":   {modAlt, keyDef{"Alt", "AltLeft", 18, "", 1}}, "option": {modAlt, keyDef{"Alt", "AltLeft", 18, "", 1}},
	"meta": {modMeta, keyDef{"Meta", "MetaLeft", 91, "", 1}}, "super": {modMeta, keyDef{"Meta", "MetaLeft", 91, "", 1}},
	"cmd": {modMeta, keyDef{"Meta", "MetaLeft", 91, "", 1}}, "command": {modMeta, keyDef{"Meta", "MetaLeft", 91, "", 1}},
	"win": {modMeta, keyDef{"Meta", "MetaLeft", 91, "", 1}}, "windows": {modMeta, keyDef{"Meta", "MetaLeft", 91, "", 1}},
	"⌘": {modMeta, keyDef{"Meta", "MetaLeft", 91, "", 1}}, "opt": {modAlt, keyDef{"Alt", "AltLeft", 18, "", 1}},
	"⌥": {modAlt, keyDef{"Alt", "AltLeft", 18, "", 1}}, "⌃": {modCtrl, keyDef{"Control", "ControlLeft", 17, "", 1}},
	"ctl": {modCtrl, keyDef{"Control", "ControlLeft", 17, "", 1}}, "⇧": {modShift, keyDef{"Shift", "ShiftLeft", 16, "", 1}},
	"cmdorctrl": {modPrimary, keyDef{"Primary", "", 0, "", 1}}, "commandorcontrol": {modPrimary, keyDef{"Primary", "", 0, "", 1}},
	"mod": {modPrimary, keyDef{"Primary", "", 0, "", 1}},
}

var namedKeys = map[string]keyDef{
	"return": {"Enter", "Enter", 13, "\r", 0}, "enter": {"Enter", "Enter", 13, "\r", 0}, "kp_enter": {"Enter", "NumpadEnter", 13, "\r", 3},
	"tab": {"Tab", "Tab", 9, "", 0}, "iso_left_tab": {"Tab", "Tab", 9, "", 0},
	"escape": {"Escape", "Escape", 27, "", 0}, "esc": {"Escape", "Escape", 27, "", 0},
	"backspace": {"Backspace", "Backspace", 8, "", 0},
	"delete":    {"Delete", "Delete", 46, "", 0}, "del": {"Delete", "Delete", 46, "", 0},
	"insert": {"Insert", "Insert", 45, "", 0},
	"space":  {" ", "Space", 32, " ", 0},
	"up":     {"ArrowUp", "ArrowUp", 38, "", 0}, "down": {"ArrowDown", "ArrowDown", 40, "", 0},
	"left": {"ArrowLeft", "ArrowLeft", 37, "", 0}, "right": {"ArrowRight", "ArrowRight", 39, "", 0},
	"arrowup": {"ArrowUp", "ArrowUp", 38, "", 0}, "arrowdown": {"ArrowDown", "ArrowDown", 40, "", 0},
	"arrowleft": {"ArrowLeft", "ArrowLeft", 37, "", 0}, "arrowright": {"ArrowRight", "ArrowRight", 39, "", 0},
	"home": {"Home", "Home", 36, "", 0}, "end": {"End", "End", 35, "", 0},
	"page_up": {"PageUp", "PageUp", 33, "", 0}, "pageup": {"PageUp", "PageUp", 33, "", 0}, "prior": {"PageUp", "PageUp", 33, "", 0},
	"page_down": {"PageDown", "PageDown", 34, "", 0}, "pagedown": {"PageDown", "PageDown", 34, "", 0}, "next": {"PageDown", "PageDown", 34, "", 0},
	"caps_lock": {"CapsLock", "CapsLock", 20, "", 0}, "menu": {"ContextMenu", "ContextMenu", 93, "", 0},
	"minus": {"-", "Minus", 189, "-", 0}, "equal": {"=", "Equal", 187, "=", 0}, "plus": {"+", "Equal", 187, "+", 0},
	"comma": {",", "Comma", 188, ",", 0}, "period": {".", "Period", 190, ".", 0}, "slash": {"/", "Slash", 191, "/", 0},
	"backslash": {"\\", "Backslash", 220, "\\", 0}, "semicolon": {";", "Semicolon", 186, ";", 0},
	"apostrophe": {"'", "Quote", 222, "'", 0}, "grave": {"`", "Backquote", 192, "`", 0},
	"bracketleft": {"[", "BracketLeft", 219, "[", 0}, "bracketright": {"]", "BracketRight", 221, "]", 0},
}

func init() {
	namedKeys["back_space"] = namedKeys["backspace"]
	for i := 1; i <= 12; i++ {
		n := "F" + itoa(i)
		namedKeys["f"+itoa(i)] = keyDef{n, n, 111 + i, "", 0}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// punctuation on a US layout: unshifted and shifted character → code, vk.
var punctKeys = map[rune]struct {
	code  string
	vk    int
	shift bool
}{
	'-': {"Minus", 189, false}, '_': {"Minus", 189, true}, '=': {"Equal", 187, false}, '+': {"Equal", 187, true},
	'[': {"BracketLeft", 219, false}, '{': {"BracketLeft", 219, true}, ']': {"BracketRight", 221, false}, '}': {"BracketRight", 221, true},
	'\\': {"Backslash", 220, false}, '|': {"Backslash", 220, true}, ';': {"Semicolon", 186, false}, ':': {"Semicolon", 186, true},
	'\'': {"Quote", 222, false}, '"': {"Quote", 222, true}, ',': {"Comma", 188, false}, '<': {"Comma", 188, true},
	'.': {"Period", 190, false}, '>': {"Period", 190, true}, '/': {"Slash", 191, false}, '?': {"Slash", 191, true},
	'`': {"Backquote", 192, false}, '~': {"Backquote", 192, true},
	'!': {"Digit1", 49, true}, '@': {"Digit2", 50, true}, '#': {"Digit3", 51, true}, '$': {"Digit4", 52, true},
	'%': {"Digit5", 53, true}, '^': {"Digit6", 54, true}, '&': {"Digit7", 55, true}, '*': {"Digit8", 56, true},
	'(': {"Digit9", 57, true}, ')': {"Digit0", 48, true},
}

// charKey maps a single character to its key.
func charKey(r rune) (keyDef, bool) {
	s := string(r)
	switch {
	case r >= 'a' && r <= 'z':
		return keyDef{s, "Key" + strings.ToUpper(s), int(r - 'a' + 65), s, 0}, true
	case r >= 'A' && r <= 'Z':
		return keyDef{s, "Key" + s, int(r - 'A' + 65), s, 0}, true
	case r >= '0' && r <= '9':
		return keyDef{s, "Digit" + s, int(r - '0' + 48), s, 0}, true
	case r == ' ':
		return namedKeys["space"], true
	}
	if p, ok := punctKeys[r]; ok {
		return keyDef{s, p.code, p.vk, s, 0}, true
	}
	if r > 127 {
		// Non-ASCII characters have no key on a US layout; send them as text.
		return keyDef{s, "", 0, s, 0}, true
	}
	return keyDef{}, false
}

// parseKeys parses a space-separated sequence of chords.
func parseKeys(seq string) ([]keyCombo, error) {
	fields := strings.Fields(seq)
	if len(fields) == 0 {
		return nil, wire.Errorf(wire.CodeBadParams, "text must name a key, e.g. \"Return\" or \"ctrl+a\"")
	}
	out := make([]keyCombo, 0, len(fields))
	for _, f := range fields {
		c, err := parseCombo(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func parseCombo(s string) (keyCombo, error) {
	var c keyCombo
	parts := strings.Split(s, "+")
	// "ctrl++" means ctrl and the plus key.
	if strings.HasSuffix(s, "++") {
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
	}
	for i, p := range parts {
		if p == "" {
			return c, wire.Errorf(wire.CodeBadParams, "malformed key %q", s)
		}
		last := i == len(parts)-1
		if m, ok := modifierNames[strings.ToLower(p)]; ok && !last {
			if c.mods&m.bit == 0 {
				c.mods |= m.bit
				c.modKeys = append(c.modKeys, m.def)
			}
			continue
		}
		if !last {
			return c, wire.Errorf(wire.CodeBadParams, "%q in %q is not a modifier (ctrl, shift, alt, meta)", p, s)
		}
		if m, ok := modifierNames[strings.ToLower(p)]; ok {
			// A modifier pressed alone, e.g. "shift".
			c.mods |= m.bit
			c.key = m.def
			c.modOnly = true
			continue
		}
		if k, ok := namedKeys[strings.ToLower(p)]; ok && utf8.RuneCountInString(p) > 1 {
			c.key = k
			continue
		}
		if utf8.RuneCountInString(p) == 1 {
			r, _ := utf8.DecodeRuneInString(p)
			k, ok := charKey(r)
			if !ok {
				return c, wire.Errorf(wire.CodeBadParams, "unknown key %q", p)
			}
			if pk, ok := punctKeys[r]; ok && pk.shift && c.mods&modShift == 0 {
				c.mods |= modShift
			}
			if r >= 'A' && r <= 'Z' && c.mods&(modCtrl|modAlt|modMeta|modPrimary) != 0 {
				// "Ctrl+K" is how people write ctrl+k: the letter's case
				// in a chord is not a shift.
				k, _ = charKey(r - 'A' + 'a')
			}
			c.key = k
			continue
		}
		return c, wire.Errorf(wire.CodeBadParams, "unknown key %q (use xdotool names like Return, Tab, BackSpace, Page_Down, F5)", p)
	}
	return c, nil
}

// forPlatform settles the primary modifier: Meta on macOS, Control
// elsewhere.
func (c keyCombo) forPlatform(mac bool) keyCombo {
	if c.mods&modPrimary == 0 {
		return c
	}
	bit, def := modCtrl, modifierNames["ctrl"].def
	if mac {
		bit, def = modMeta, modifierNames["meta"].def
	}
	out := c
	out.mods = c.mods&^modPrimary | bit
	out.modKeys = nil
	seen := 0
	for _, m := range c.modKeys {
		if m.Key == "Primary" {
			m = def
		}
		if b := modBitFor(m.Key); seen&b == 0 {
			seen |= b
			out.modKeys = append(out.modKeys, m)
		}
	}
	if c.modOnly {
		out.key = def
	}
	return out
}

// keyEvents lists the Input.dispatchKeyEvent params for one chord. On
// macOS the browser, not the page, turns editing shortcuts into commands,
// so the key down names them (macCommands).
func (c keyCombo) events(mac bool) []map[string]any {
	c = c.forPlatform(mac)
	var evs []map[string]any
	held := 0
	for _, m := range c.modKeys {
		held |= modBitFor(m.Key)
		evs = append(evs, keyEvent("rawKeyDown", m, held, ""))
	}
	k := c.key
	if c.modOnly {
		held |= modBitFor(k.Key)
		evs = append(evs, keyEvent("rawKeyDown", k, held, ""))
		evs = append(evs, keyEvent("keyUp", k, held&^modBitFor(k.Key), ""))
	} else {
		text := k.Text
		if c.mods&(modCtrl|modAlt|modMeta) != 0 {
			text = "" // shortcuts do not type
		} else if c.mods&modShift != 0 && len(text) == 1 && text[0] >= 'a' && text[0] <= 'z' {
			text = strings.ToUpper(text)
		}
		typ := "rawKeyDown"
		if text != "" {
			typ = "keyDown"
		}
		key := k
		if len(k.Key) == 1 && k.Key[0] >= 'a' && k.Key[0] <= 'z' && c.mods&modShift != 0 {
			key.Key = strings.ToUpper(k.Key)
		} else if text != "" && len(k.Key) == 1 {
			key.Key = text
		}
		down := keyEvent(typ, key, c.mods, text)
		if mac {
			if cmds := macCommands(c.mods, key.Key); len(cmds) > 0 {
				down["commands"] = cmds
			}
		}
		evs = append(evs, down)
		evs = append(evs, keyEvent("keyUp", key, c.mods, ""))
	}
	for i := len(c.modKeys) - 1; i >= 0; i-- {
		m := c.modKeys[i]
		held &^= modBitFor(m.Key)
		evs = append(evs, keyEvent("keyUp", m, held, ""))
	}
	return evs
}

func modBitFor(key string) int {
	switch key {
	case "Control":
		return modCtrl
	case "Shift":
		return modShift
	case "Alt":
		return modAlt
	case "Meta":
		return modMeta
	}
	return 0
}

func keyEvent(typ string, k keyDef, mods int, text string) map[string]any {
	ev := map[string]any{"type": typ, "key": k.Key, "modifiers": mods}
	if k.Code != "" {
		ev["code"] = k.Code
	}
	if k.VK != 0 {
		ev["windowsVirtualKeyCode"] = k.VK
		ev["nativeVirtualKeyCode"] = k.VK
	}
	if text != "" {
		ev["text"] = text
		ev["unmodifiedText"] = text
	}
	if k.Loc != 0 {
		ev["location"] = k.Loc
	}
	return ev
}

// macCommands are the editing commands of a key down on macOS, where the
// app menu and the text system, not the page, act on these chords. Agents
// write Linux chords, so ctrl+c means copy there as cmd+c does.
func macCommands(mods int, key string) []string {
	primary := mods&(modMeta|modCtrl) != 0
	shift := mods&modShift != 0
	alt := mods&modAlt != 0
	sel := func(cmd string) []string {
		if shift {
			return []string{cmd + "AndModifySelection"}
		}
		return []string{cmd}
	}
	switch strings.ToLower(key) {
	case "a":
		if primary && !alt {
			return []string{"selectAll"}
		}
	case "c":
		if primary && !alt {
			return []string{"copy"}
		}
	case "x":
		if primary && !alt {
			return []string{"cut"}
		}
	case "v":
		if primary && !alt {
			return []string{"paste"}
		}
	case "z":
		if primary && !alt && shift {
			return []string{"redo"}
		}
		if primary && !alt {
			return []string{"undo"}
		}
	case "backspace":
		if mods&modMeta != 0 {
			return []string{"deleteToBeginningOfLine"}
		}
		if alt {
			return []string{"deleteWordBackward"}
		}
	case "delete":
		if mods&modMeta != 0 {
			return []string{"deleteToEndOfLine"}
		}
		if alt {
			return []string{"deleteWordForward"}
		}
	case "arrowleft":
		if mods&modMeta != 0 {
			return sel("moveToBeginningOfLine")
		}
		if alt {
			return sel("moveWordLeft")
		}
	case "arrowright":
		if mods&modMeta != 0 {
			return sel("moveToEndOfLine")
		}
		if alt {
			return sel("moveWordRight")
		}
	case "arrowup":
		if mods&modMeta != 0 {
			return sel("moveToBeginningOfDocument")
		}
	case "arrowdown":
		if mods&modMeta != 0 {
			return sel("moveToEndOfDocument")
		}
	}
	return nil
}

// parseModifiers reads the click modifiers ("shift", "ctrl+shift"). The
// primary modifier ("CmdOrCtrl") stays modPrimary until clickModifiers.
func parseModifiers(s string) (int, error) {
	mods := 0
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '+' || r == ' ' || r == ',' }) {
		m, ok := modifierNames[strings.ToLower(p)]
		if !ok {
			return 0, wire.Errorf(wire.CodeBadParams, "unknown modifier %q (use ctrl, shift, alt, meta)", p)
		}
		mods |= m.bit
	}
	return mods, nil
}

// clickModifiers settles the primary modifier of click modifiers.
func clickModifiers(mods int, mac bool) int {
	if mods&modPrimary == 0 {
		return mods
	}
	if mac {
		return mods&^modPrimary | modMeta
	}
	return mods&^modPrimary | modCtrl
}

// macOS reports whether the tab's browser runs on macOS: from its user
// agent, or for the dev browser, which runs beside the companion, from the
// companion's own platform.
func (c *call) macOS(tabID int) bool {
	_, b, err := c.e.hub.Tab(tabID)
	if err != nil {
		return false
	}
	if ua := b.Hello.UserAgent; ua != "" {
		return strings.Contains(ua, "Macintosh")
	}
	return b.Info().Mode == hub.ModeDev && runtime.GOOS == "darwin"
}

// pressKeys sends the chords to the tab, repeat times.
func (c *call) pressKeys(ctx context.Context, tabID int, combos []keyCombo, repeat int) error {
	mac := c.macOS(tabID)
	for i := 0; i < repeat; i++ {
		for _, k := range combos {
			for _, ev := range k.events(mac) {
				if err := c.cdp(ctx, tabID, "Input.dispatchKeyEvent", ev, nil); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
