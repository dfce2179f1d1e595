// Package assets owns Reins' embedded images: the app icon, one tray icon per
// tray state and the browser-engine glyphs used by the dashboard. Every PNG is
// drawn by gen.go, so changing an icon means changing code and running
// `go generate ./assets`, never editing pixels by hand.
package assets

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

//go:generate go run gen.go

var (
	//go:embed icon.png
	iconPNG []byte
	//go:embed icon_64.png
	icon64PNG []byte
	//go:embed tray_normal.png
	trayNormalPNG []byte
	//go:embed tray_paused.png
	trayPausedPNG []byte
	//go:embed tray_offer.png
	trayOfferPNG []byte
	//go:embed chromium.png
	chromiumPNG []byte
	//go:embed firefox.png
	firefoxPNG []byte
)

// The resources are static (not themed) on purpose: a ThemedResource would be
// recoloured to a monochrome template on macOS and lose the state colours.
var (
	// AppIcon is the 256 px application icon (windows, installers, FyneApp.toml).
	AppIcon fyne.Resource = fyne.NewStaticResource("reins.png", iconPNG)
	// AppIconSmall is the 64 px application icon, for places that scale poorly.
	AppIconSmall fyne.Resource = fyne.NewStaticResource("reins-64.png", icon64PNG)

	// TrayNormal is the tray icon while automation runs.
	TrayNormal fyne.Resource = fyne.NewStaticResource("reins-tray.png", trayNormalPNG)
	// TrayPaused is the tray icon while automation is paused.
	TrayPaused fyne.Resource = fyne.NewStaticResource("reins-tray-paused.png", trayPausedPNG)
	// TrayOffer is the tray icon while a pairing request waits for the person.
	TrayOffer fyne.Resource = fyne.NewStaticResource("reins-tray-offer.png", trayOfferPNG)

	// Chromium marks a Chromium-family browser in the dashboard.
	Chromium fyne.Resource = fyne.NewStaticResource("chromium.png", chromiumPNG)
	// Firefox marks a Firefox browser in the dashboard.
	Firefox fyne.Resource = fyne.NewStaticResource("firefox.png", firefoxPNG)
)
