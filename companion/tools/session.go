package tools

import (
	"strconv"
	"sync"
	"time"
)

// maxImages bounds the screenshots a session keeps for upload_image.
const maxImages = 20

// Session is one principal's working state: its tab group, the origins it
// last observed per tab, its screenshots and its chosen browser. Its zero
// value with Principal and Label set is ready to use; the engine keeps no
// pointer to it, so a session ends when its holder drops it.
type Session struct {
	// Principal is who calls: "agent:<token id>" for an MCP agent,
	// "backend:<backend id>" for a paired backend. Tabs are owned by it,
	// so two callers with the same label never see each other's tabs.
	Principal string
	// Label is the caller's display name (the token name, the backend's
	// brand), for tab group titles, logs and the person's views. It
	// decides nothing.
	Label string
	// OperatorCatalog limits the session to the Browser Operator catalog:
	// a paired backend's, which expects exactly that surface. Reins' own
	// (Extended) tools are unknown to it.
	OperatorCatalog bool

	mu        sync.Mutex
	browserID string
	origins   map[int]string  // tab → origin last observed
	views     map[int]viewMap // tab → mapping of the last screenshot
	images    []*image        // oldest first, at most maxImages
	nextImage int
	marks     map[int]time.Time // tab → when the latest call on it began
}

// GroupTitle is the title of the caller's tab group. The extension keeps one
// group per principal, so two callers with one label get two groups.
func (s *Session) GroupTitle() string { return "Reins · " + s.Label }

// BrowserID is the browser chosen with switch_browser, or "".
func (s *Session) BrowserID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.browserID
}

func (s *Session) setBrowser(id string) {
	s.mu.Lock()
	s.browserID = id
	s.mu.Unlock()
}

func (s *Session) observe(tab int, origin string) {
	s.mu.Lock()
	if s.origins == nil {
		s.origins = map[int]string{}
	}
	s.origins[tab] = origin
	s.mu.Unlock()
}

// mark records that a call on tab began at t and returns when the
// previous one began (zero if none).
func (s *Session) mark(tab int, t time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.marks == nil {
		s.marks = map[int]time.Time{}
	}
	prev := s.marks[tab]
	s.marks[tab] = t
	return prev
}

func (s *Session) observed(tab int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.origins[tab]
}

// viewMap maps screenshot pixels to CSS pixels for one tab.
type viewMap struct {
	scale  float64 // screenshot px per CSS px
	width  int     // CSS viewport size when captured
	height int
}

func (s *Session) setView(tab int, v viewMap) {
	s.mu.Lock()
	if s.views == nil {
		s.views = map[int]viewMap{}
	}
	s.views[tab] = v
	s.mu.Unlock()
}

func (s *Session) view(tab int) (viewMap, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.views[tab]
	return v, ok
}

func (s *Session) forgetView(tab int) {
	s.mu.Lock()
	delete(s.views, tab)
	s.mu.Unlock()
}

// image is a screenshot kept for upload_image.
type image struct {
	id     string
	tab    int
	data   []byte // JPEG
	width  int
	height int
}

func (s *Session) addImage(img *image) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextImage++
	img.id = "img_" + strconv.Itoa(s.nextImage)
	s.images = append(s.images, img)
	if len(s.images) > maxImages {
		s.images = append([]*image(nil), s.images[len(s.images)-maxImages:]...)
	}
	return img.id
}

func (s *Session) image(id string) *image {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, img := range s.images {
		if img.id == id {
			return img
		}
	}
	return nil
}
