package live

import (
	"encoding/json"
	"strconv"

	"github.com/reinshq/reins/companion/wire"
)

// Message kinds. Every frame on /live-ws is a JSON object whose "kind" names
// it; mouse and key messages keep "type" for their own event type.
const (
	KindHello    = "hello"
	KindFrame    = "frame"
	KindError    = "error"
	KindTakeover = "takeover"
	KindTab      = "tab"
	KindNotice   = "notice"
	KindMouse    = "mouse"
	KindKey      = "key"
)

// TabDesc names the watched tab.
type TabDesc struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	Browser string `json:"browser"`
}

// Viewport is the tab's visible area in CSS pixels.
type Viewport struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Hello is the first message of every view.
type Hello struct {
	Kind     string   `json:"kind"`
	Tab      TabDesc  `json:"tab"`
	Viewport Viewport `json:"viewport"`
}

// FrameMetadata describes one screencast frame: the viewport it shows in CSS
// pixels (width, height), the pinch zoom, the scroll position and when the
// browser painted it (seconds since the epoch).
type FrameMetadata struct {
	Width           float64 `json:"width"`
	Height          float64 `json:"height"`
	PageScaleFactor float64 `json:"pageScaleFactor"`
	ScrollOffsetX   float64 `json:"scrollOffsetX"`
	ScrollOffsetY   float64 `json:"scrollOffsetY"`
	Timestamp       float64 `json:"timestamp,omitempty"`
}

// Frame is one picture; Data is the base64 JPEG exactly as the browser sent it.
type Frame struct {
	Kind     string        `json:"kind"`
	Seq      int64         `json:"seq"`
	Metadata FrameMetadata `json:"metadata"`
	Data     string        `json:"data"`
}

// ErrorMsg ends a view: a normal close follows it.
type ErrorMsg struct {
	Kind    string    `json:"kind"`
	Code    wire.Code `json:"code"`
	Message string    `json:"message"`
}

// TakeoverMsg tells a viewer who holds the tab. In, {on} asks for it or
// gives it back.
type TakeoverMsg struct {
	Kind  string `json:"kind"`
	Held  bool   `json:"held"`
	ByYou bool   `json:"byYou"`
}

// TabMsg carries a changed title or URL.
type TabMsg struct {
	Kind string  `json:"kind"`
	Tab  TabDesc `json:"tab"`
}

// NoticeMsg is a passing remark that does not end the view.
type NoticeMsg struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// MouseMsg is a pointer event on the picture. X and Y are fractions of the
// picture's width and height, so the page never needs to know the tab's size.
type MouseMsg struct {
	Type       string  `json:"type"` // move, down, up, wheel
	X          float64 `json:"x"`
	Y          float64 `json:"y"`
	Button     string  `json:"button"` // none, left, middle, right, back, forward
	Buttons    int     `json:"buttons"`
	ClickCount int     `json:"clickCount"`
	DeltaX     float64 `json:"deltaX"`
	DeltaY     float64 `json:"deltaY"`
	Modifiers  int     `json:"modifiers"` // Alt=1, Ctrl=2, Meta=4, Shift=8
}

// KeyMsg is a keyboard event.
type KeyMsg struct {
	Type      string `json:"type"` // down, up, char
	Key       string `json:"key"`
	Code      string `json:"code"`
	Text      string `json:"text"`
	Modifiers int    `json:"modifiers"`
	KeyCode   int    `json:"keyCode"`
}

// inMsg is any message from the page, decoded once.
type inMsg struct {
	Kind string `json:"kind"`
	On   bool   `json:"on"`
	MouseMsg
	Key  string `json:"key"`
	Code string `json:"code"`
	Text string `json:"text"`
	// KeyCode is the page's KeyboardEvent.keyCode (a Windows virtual key).
	KeyCode int `json:"keyCode"`
}

func (m inMsg) key() KeyMsg {
	return KeyMsg{Type: m.Type, Key: m.Key, Code: m.Code, Text: m.Text, Modifiers: m.Modifiers, KeyCode: m.KeyCode}
}

func encode(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		// Every message type here is plain data; this cannot fail.
		panic("live: encoding a message: " + err.Error())
	}
	return data
}

// frameMessage builds a frame message around the browser's base64 data
// without decoding it: the same bytes go to every viewer.
func frameMessage(seq int64, md FrameMetadata, data json.RawMessage) []byte {
	mdJSON := encode(md)
	out := make([]byte, 0, len(data)+len(mdJSON)+64)
	out = append(out, `{"kind":"frame","seq":`...)
	out = strconv.AppendInt(out, seq, 10)
	out = append(out, `,"metadata":`...)
	out = append(out, mdJSON...)
	out = append(out, `,"data":`...)
	out = append(out, data...)
	out = append(out, '}')
	return out
}
