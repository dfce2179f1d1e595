// Package ui owns everything the person sees of Reins on the desktop: the tray
// menu and icon, the dashboard (connections graph, shared tabs, agents and
// their setup snippets, paired backends, activity, settings), the first-run
// guide, the pairing approval windows and the plain error window used at
// start-up.
//
// The package knows nothing about the companion's implementation. It declares
// the small Companion interface it needs and its own view-model State; the app
// package adapts the running companion to them. State reaches the widgets as a
// single stream (Companion.Subscribe) and only through fyne.Do, so the UI never
// polls and never touches a widget from a background goroutine.
package ui
