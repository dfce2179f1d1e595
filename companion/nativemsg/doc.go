// Package nativemsg owns Reins' native messaging host: the framing browsers
// use to talk to a native program over stdio (a 4-byte little-endian length,
// then UTF-8 JSON, as Prickly and Chrome specify), the small host loop
// behind `reins native-host` that hands the extension the link key, tells it
// the companion's port (as the companion states it over the admin channel,
// never as whatever answers on a TCP port) and starts the tray app when it
// is not running, and the host manifests that let Chrome, Chromium, Brave,
// Edge, Vivaldi and Firefox find that host. The manifests pin the Reins
// extension ids, so the browser starts the host for Reins alone.
package nativemsg
