package app

import (
	"errors"
	"net/url"
	"runtime"

	"github.com/godbus/dbus/v5"
)

// showItem asks the desktop's file manager to show path selected
// (org.freedesktop.FileManager1, which Nautilus, Dolphin, Nemo and Thunar
// serve on the session bus).
func showItem(path string) error {
	if runtime.GOOS != "linux" {
		return errors.New("no FileManager1 here")
	}
	conn, err := dbus.SessionBus()
	if err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: path}
	return conn.Object("org.freedesktop.FileManager1", "/org/freedesktop/FileManager1").
		Call("org.freedesktop.FileManager1.ShowItems", 0, []string{u.String()}, "").Err
}
