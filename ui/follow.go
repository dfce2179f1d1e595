package ui

import "sync"

// follow feeds the companion's state stream to apply on the Fyne goroutine
// until stop is called or the stream ends. do hands a function to the Fyne
// goroutine: fyne.Do in the app; tests pass a queue they drain on the test
// goroutine, because the test driver's fyne.Do runs the function right away
// on the calling goroutine, which would race with the test's own taps.
//
// Bursts are coalesced: at most one apply is queued with fyne.Do at a time and
// it applies the newest State when it runs, so a busy companion (activity
// arrives with every tool call) cannot flood the UI queue with stale frames.
func follow(c Companion, apply func(State), do func(func())) (stop func()) {
	states, cancel := c.Subscribe()
	quit := make(chan struct{})
	done := make(chan struct{})

	var (
		mu        sync.Mutex
		latest    State
		scheduled bool
		stopped   bool
	)
	run := func() {
		mu.Lock()
		s, skip := latest, stopped
		scheduled = false
		mu.Unlock()
		if !skip {
			apply(s)
		}
	}

	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case s, ok := <-states:
				if !ok {
					return
				}
				mu.Lock()
				latest = s
				queue := !scheduled
				scheduled = true
				mu.Unlock()
				if queue {
					do(run)
				}
			}
		}
	}()

	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			stopped = true // an apply already queued must not run after stop
			mu.Unlock()
			close(quit)
			cancel()
			<-done
		})
	}
}
