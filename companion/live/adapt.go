package live

import "time"

// level is one screencast setting. Lower levels cost the browser less to
// encode and the viewers less to receive.
type level struct {
	Quality   int
	MaxWidth  int
	MaxHeight int
}

// levels runs from the best picture to the cheapest. A view starts at
// startLevel and moves one step at a time.
var levels = []level{
	{Quality: 80, MaxWidth: 1920, MaxHeight: 1200},
	{Quality: 70, MaxWidth: 1600, MaxHeight: 1000},
	{Quality: 60, MaxWidth: 1280, MaxHeight: 800},
	{Quality: 50, MaxWidth: 1024, MaxHeight: 640},
	{Quality: 40, MaxWidth: 800, MaxHeight: 500},
	{Quality: 30, MaxWidth: 640, MaxHeight: 400},
}

const startLevel = 1

// Adaptation looks at windows of frames: a window where some viewer lost
// more than dropHigh of its frames steps down; upAfter windows in a row
// where no viewer lost any step back up.
const (
	adaptWindow = 30
	dropHigh    = 0.25
	upAfter     = 3
)

// stallAfter is how long one write may take before its viewer counts as
// stalled: a stalled viewer is left out of adaptation (the write timeout
// will close it), so one frozen tab in some browser does not pull every
// other viewer down to the cheapest picture.
const stallAfter = time.Second

// adapter decides level changes from per-window drop counts.
type adapter struct {
	level   int
	frames  int
	goodRun int
}

// windowDone takes the worst drop ratio among keeping-up viewers of the
// window that just ended and returns the new level and whether it changed.
func (a *adapter) windowDone(worst float64) (int, bool) {
	switch {
	case worst > dropHigh:
		a.goodRun = 0
		if a.level < len(levels)-1 {
			a.level++
			return a.level, true
		}
	case worst == 0:
		a.goodRun++
		if a.goodRun >= upAfter && a.level > 0 {
			a.goodRun = 0
			a.level--
			return a.level, true
		}
	default:
		a.goodRun = 0
	}
	return a.level, false
}
