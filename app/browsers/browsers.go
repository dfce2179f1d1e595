// Package browsers finds the browsers installed for this user (Chrome,
// Chromium, Edge, Brave, Vivaldi, Firefox), the profiles Chromium-family
// browsers list in their Local State, and whether the Linux package offers
// them the packed extension. The first-run guide shows what it finds; the
// package knows no GUI.
package browsers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/reinshq/reins/app/osenv"
	"github.com/reinshq/reins/companion/nativemsg"
)

// Limits on what is read from a browser's Local State.
const (
	// MaxLocalState caps the file read; real ones are tens of KiB.
	MaxLocalState = 8 << 20
	// MaxProfiles caps the profiles listed per browser.
	MaxProfiles = 50
)

// Env is the machine browsers are looked for on.
type Env = osenv.Env

// Browser is one browser Reins knows, under the id and name the native
// messaging manifests use.
type Browser struct {
	ID     string // nativemsg.Browser.ID: chrome, chromium, edge, brave, vivaldi, firefox
	Name   string
	Engine string // "chromium" or "firefox"
	// ExtensionsPage is where extensions are managed (typed by hand: a
	// web page cannot link there).
	ExtensionsPage string
	// ExternalDir is where a Linux package puts external-extension
	// preference files (ID.json naming a .crx); "" where the browser has
	// none (Firefox). Chrome and Chromium read /usr/share/…/extensions;
	// the others read the extensions folder beside their binary, which
	// every Chromium build does.
	ExternalDir string

	userData    func(Env) string
	executables func(Env) []string
	commands    []string
}

// Known lists the browsers in the guide's order.
var Known = []Browser{
	{
		ID: "chrome", Engine: "chromium", ExtensionsPage: "chrome://extensions",
		ExternalDir: "/usr/share/google-chrome/extensions",
		userData: func(e Env) string {
			return pick(e, e.Join(e.ConfigHome(), "google-chrome"), e.Join(e.ConfigHome(), "Google", "Chrome"), e.Join(e.LocalAppData(), "Google", "Chrome", "User Data"))
		},
		executables: func(e Env) []string {
			return picks(e, []string{"/opt/google/chrome/chrome"}, []string{"/Applications/Google Chrome.app"},
				[]string{e.Join(e.ProgramFiles(false), "Google", "Chrome", "Application", "chrome.exe"), e.Join(e.ProgramFiles(true), "Google", "Chrome", "Application", "chrome.exe"), e.Join(e.LocalAppData(), "Google", "Chrome", "Application", "chrome.exe")})
		},
		commands: []string{"google-chrome-stable", "google-chrome"},
	},
	{
		ID: "chromium", Engine: "chromium", ExtensionsPage: "chrome://extensions",
		ExternalDir: "/usr/share/chromium/extensions",
		userData: func(e Env) string {
			return pick(e, e.Join(e.ConfigHome(), "chromium"), e.Join(e.ConfigHome(), "Chromium"), e.Join(e.LocalAppData(), "Chromium", "User Data"))
		},
		executables: func(e Env) []string {
			return picks(e, []string{"/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser"}, []string{"/Applications/Chromium.app"},
				[]string{e.Join(e.LocalAppData(), "Chromium", "Application", "chrome.exe")})
		},
		commands: []string{"chromium", "chromium-browser"},
	},
	{
		ID: "edge", Engine: "chromium", ExtensionsPage: "edge://extensions",
		ExternalDir: "/opt/microsoft/msedge/extensions",
		userData: func(e Env) string {
			return pick(e, e.Join(e.ConfigHome(), "microsoft-edge"), e.Join(e.ConfigHome(), "Microsoft Edge"), e.Join(e.LocalAppData(), "Microsoft", "Edge", "User Data"))
		},
		executables: func(e Env) []string {
			return picks(e, []string{"/opt/microsoft/msedge/msedge"}, []string{"/Applications/Microsoft Edge.app"},
				[]string{e.Join(e.ProgramFiles(true), "Microsoft", "Edge", "Application", "msedge.exe"), e.Join(e.ProgramFiles(false), "Microsoft", "Edge", "Application", "msedge.exe")})
		},
		commands: []string{"microsoft-edge-stable", "microsoft-edge"},
	},
	{
		ID: "brave", Engine: "chromium", ExtensionsPage: "brave://extensions",
		ExternalDir: "/opt/brave.com/brave/extensions",
		userData: func(e Env) string {
			return pick(e, e.Join(e.ConfigHome(), "BraveSoftware", "Brave-Browser"), e.Join(e.ConfigHome(), "BraveSoftware", "Brave-Browser"), e.Join(e.LocalAppData(), "BraveSoftware", "Brave-Browser", "User Data"))
		},
		executables: func(e Env) []string {
			return picks(e, []string{"/opt/brave.com/brave/brave"}, []string{"/Applications/Brave Browser.app"},
				[]string{e.Join(e.ProgramFiles(false), "BraveSoftware", "Brave-Browser", "Application", "brave.exe"), e.Join(e.LocalAppData(), "BraveSoftware", "Brave-Browser", "Application", "brave.exe")})
		},
		commands: []string{"brave-browser", "brave"},
	},
	{
		ID: "vivaldi", Engine: "chromium", ExtensionsPage: "vivaldi://extensions",
		ExternalDir: "/opt/vivaldi/extensions",
		userData: func(e Env) string {
			return pick(e, e.Join(e.ConfigHome(), "vivaldi"), e.Join(e.ConfigHome(), "Vivaldi"), e.Join(e.LocalAppData(), "Vivaldi", "User Data"))
		},
		executables: func(e Env) []string {
			return picks(e, []string{"/opt/vivaldi/vivaldi"}, []string{"/Applications/Vivaldi.app"},
				[]string{e.Join(e.LocalAppData(), "Vivaldi", "Application", "vivaldi.exe")})
		},
		commands: []string{"vivaldi-stable", "vivaldi"},
	},
	{
		ID: "firefox", Engine: "firefox", ExtensionsPage: "about:addons",
		userData: func(e Env) string {
			return pick(e, e.Join(e.Home, ".mozilla", "firefox"), e.Join(e.ConfigHome(), "Firefox"), e.Join(e.ConfigHome(), "Mozilla", "Firefox"))
		},
		executables: func(e Env) []string {
			return picks(e, []string{"/usr/lib/firefox/firefox", "/usr/lib/firefox-esr/firefox-esr"}, []string{"/Applications/Firefox.app"},
				[]string{e.Join(e.ProgramFiles(false), "Mozilla Firefox", "firefox.exe")})
		},
		commands: []string{"firefox", "firefox-esr"},
	},
}

func init() {
	// The names come from the native messaging table, so the guide and
	// the host manifests never disagree about which browsers exist.
	for i := range Known {
		for _, nb := range nativemsg.Browsers {
			if nb.ID == Known[i].ID {
				Known[i].Name = nb.Name
			}
		}
	}
}

func pick(e Env, linux, darwin, windows string) string {
	switch e.GOOS {
	case "darwin":
		return darwin
	case "windows":
		return windows
	}
	return linux
}

func picks(e Env, linux, darwin, windows []string) []string {
	switch e.GOOS {
	case "darwin":
		return darwin
	case "windows":
		return windows
	}
	return linux
}

// UserDataDir is where the browser keeps its profiles on e.
func (b Browser) UserDataDir(e Env) string { return b.userData(e) }

// Profile is one browser profile: its folder and the name the person gave
// it.
type Profile struct {
	Dir  string
	Name string
}

// Installed is a browser found on the machine.
type Installed struct {
	Browser
	// Executable is the program to start; on macOS the .app bundle.
	Executable string
	Profiles   []Profile
	// Offered: the Linux package's external-extensions file for this
	// browser is in place, so the browser offers Reins at its next start.
	Offered bool
}

// Find returns the known browser with id.
func Find(id string) (Browser, bool) {
	for _, b := range Known {
		if b.ID == id {
			return b, true
		}
	}
	return Browser{}, false
}

// Detect lists the browsers installed on e, with their profiles. offered
// reports whether a Linux package offers the packed extension through a
// browser's external-extensions dir; nil means never.
func Detect(e Env, offered func(Browser) bool) []Installed {
	var out []Installed
	for _, b := range Known {
		exe := b.find(e)
		if exe == "" {
			continue
		}
		in := Installed{Browser: b, Executable: exe}
		if b.Engine == "chromium" {
			in.Profiles, _ = ReadProfiles(b.UserDataDir(e))
		}
		if offered != nil && b.ExternalDir != "" && e.GOOS == "linux" {
			in.Offered = offered(b)
		}
		out = append(out, in)
	}
	return out
}

func (b Browser) find(e Env) string {
	for _, p := range b.executables(e) {
		if osenv.Exists(p) {
			return p
		}
	}
	if e.GOOS == "linux" {
		for _, c := range b.commands {
			if p, ok := e.OnPath(c); ok {
				return p
			}
		}
	}
	return ""
}

// ErrTooLarge: a Local State over MaxLocalState.
var ErrTooLarge = errors.New("local state too large")

// ReadProfiles lists the profiles a Chromium-family browser keeps in
// userData/Local State (profile.info_cache), in the browser's own order
// (profile.profiles_order) and then by folder. No Local State means no
// profile yet, which is not an error.
func ReadProfiles(userData string) ([]Profile, error) {
	f, err := os.Open(userData + string(os.PathSeparator) + "Local State")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxLocalState+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxLocalState {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, MaxLocalState)
	}
	var ls struct {
		Profile struct {
			InfoCache map[string]struct {
				Name string `json:"name"`
			} `json:"info_cache"`
			Order []string `json:"profiles_order"`
		} `json:"profile"`
	}
	if err := json.Unmarshal(data, &ls); err != nil {
		return nil, fmt.Errorf("reading Local State: %w", err)
	}
	rank := map[string]int{}
	for i, d := range ls.Profile.Order {
		if _, ok := rank[d]; !ok {
			rank[d] = i
		}
	}
	var out []Profile
	for dir, info := range ls.Profile.InfoCache {
		name := info.Name
		if name == "" {
			name = dir
		}
		out = append(out, Profile{Dir: dir, Name: name})
	}
	sort.Slice(out, func(i, j int) bool {
		ri, iok := rank[out[i].Dir]
		rj, jok := rank[out[j].Dir]
		switch {
		case iok && jok:
			return ri < rj
		case iok != jok:
			return iok
		}
		return out[i].Dir < out[j].Dir
	})
	if len(out) > MaxProfiles {
		out = out[:MaxProfiles]
	}
	return out, nil
}
