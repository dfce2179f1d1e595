package nativemsg

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/reinshq/reins/companion/atomicfile"
)

// Identity of the host and of the extension allowed to start it.
const (
	HostName        = "com.reins.companion"
	ManifestFile    = HostName + ".json"
	HostDescription = "Reins companion: finds and starts the Reins app for the browser extension"
	// ChromeOrigin is the Reins extension in every Chromium-family browser.
	ChromeOrigin = "chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/"
	// FirefoxExtensionID is the Reins extension's gecko id.
	FirefoxExtensionID = "reins@reins.dev"
)

// Browser says where one browser looks for native messaging host manifests.
type Browser struct {
	ID      string // "chrome", "chromium", "brave", "edge", "vivaldi", "firefox"
	Name    string
	Firefox bool // Firefox manifests name extensions, not origins
	// Per-user dirs, relative to the home dir.
	Linux, Darwin string
	// System-wide dirs, for packages.
	LinuxSystem, DarwinSystem string
	// Windows: the HKCU key whose subkey HostName points at the manifest.
	RegistryKey string
}

// Browsers are the browsers Reins registers its host with.
var Browsers = []Browser{
	{
		ID: "chrome", Name: "Google Chrome",
		Linux:        ".config/google-chrome/NativeMessagingHosts",
		Darwin:       "Library/Application Support/Google/Chrome/NativeMessagingHosts",
		LinuxSystem:  "/etc/opt/chrome/native-messaging-hosts",
		DarwinSystem: "/Library/Google/Chrome/NativeMessagingHosts",
		RegistryKey:  `Software\Google\Chrome\NativeMessagingHosts`,
	},
	{
		ID: "chromium", Name: "Chromium",
		Linux:        ".config/chromium/NativeMessagingHosts",
		Darwin:       "Library/Application Support/Chromium/NativeMessagingHosts",
		LinuxSystem:  "/etc/chromium/native-messaging-hosts",
		DarwinSystem: "/Library/Application Support/Chromium/NativeMessagingHosts",
		RegistryKey:  `Software\Chromium\NativeMessagingHosts`,
	},
	{
		ID: "brave", Name: "Brave",
		Linux:        ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
		Darwin:       "Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
		LinuxSystem:  "/etc/opt/brave.com/brave/native-messaging-hosts",
		DarwinSystem: "/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
		RegistryKey:  `Software\BraveSoftware\Brave-Browser\NativeMessagingHosts`,
	},
	{
		ID: "edge", Name: "Microsoft Edge",
		Linux:        ".config/microsoft-edge/NativeMessagingHosts",
		Darwin:       "Library/Application Support/Microsoft Edge/NativeMessagingHosts",
		LinuxSystem:  "/etc/opt/edge/native-messaging-hosts",
		DarwinSystem: "/Library/Microsoft/Edge/NativeMessagingHosts",
		RegistryKey:  `Software\Microsoft\Edge\NativeMessagingHosts`,
	},
	{
		ID: "vivaldi", Name: "Vivaldi",
		Linux:        ".config/vivaldi/NativeMessagingHosts",
		Darwin:       "Library/Application Support/Vivaldi/NativeMessagingHosts",
		LinuxSystem:  "/etc/vivaldi/native-messaging-hosts",
		DarwinSystem: "/Library/Application Support/Vivaldi/NativeMessagingHosts",
		RegistryKey:  `Software\Vivaldi\NativeMessagingHosts`,
	},
	{
		ID: "firefox", Name: "Firefox", Firefox: true,
		Linux:        ".mozilla/native-messaging-hosts",
		Darwin:       "Library/Application Support/Mozilla/NativeMessagingHosts",
		LinuxSystem:  "/usr/lib/mozilla/native-messaging-hosts",
		DarwinSystem: "/Library/Application Support/Mozilla/NativeMessagingHosts",
		RegistryKey:  `Software\Mozilla\NativeMessagingHosts`,
	},
}

// ChromiumManifest is the host manifest Chromium-family browsers read.
type ChromiumManifest struct {
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	Path           string   `json:"path"`
	Type           string   `json:"type"`
	AllowedOrigins []string `json:"allowed_origins"`
}

// FirefoxManifest is the host manifest Firefox reads.
type FirefoxManifest struct {
	Name              string   `json:"name"`
	Description       string   `json:"description"`
	Path              string   `json:"path"`
	Type              string   `json:"type"`
	AllowedExtensions []string `json:"allowed_extensions"`
}

// Manifest returns the manifest b reads, pointing at binaryPath. Browsers
// pass the host arguments they choose and manifests cannot add any, so the
// binary must recognise a browser launch itself: see LaunchedByBrowser.
//
// extraIDs are further Chromium extension ids allowed to start the host:
// a build packed with another key than the release one (tests) has
// another id. Firefox manifests ignore them.
func Manifest(b Browser, binaryPath string, extraIDs ...string) ([]byte, error) {
	if binaryPath == "" {
		return nil, errors.New("manifest: empty binary path")
	}
	var v any
	if b.Firefox {
		v = FirefoxManifest{HostName, HostDescription, binaryPath, "stdio", []string{FirefoxExtensionID}}
	} else {
		origins := []string{ChromeOrigin}
		for _, id := range extraIDs {
			if !validExtensionID(id) {
				return nil, fmt.Errorf("manifest: %q is not a Chromium extension id (32 letters a-p)", id)
			}
			if o := "chrome-extension://" + id + "/"; o != ChromeOrigin {
				origins = append(origins, o)
			}
		}
		v = ChromiumManifest{HostName, HostDescription, binaryPath, "stdio", origins}
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return append(out, '\n'), nil
}

// validExtensionID: Chromium ids are 32 letters a-p (hex digits shifted).
func validExtensionID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if c < 'a' || c > 'p' {
			return false
		}
	}
	return true
}

// LaunchedByBrowser reports whether args (without the program name) are
// what a browser passes a native host: Chromium passes the caller's origin
// first (and --parent-window=N on Windows), Firefox the manifest's path and
// the add-on id. Only those positions count, so a command that merely
// names the add-on id (reins token issue reins@reins.dev) is not a launch.
// The reins command line uses it to run the host for such a launch.
func LaunchedByBrowser(args []string) bool {
	if len(args) == 0 {
		return false
	}
	if strings.HasPrefix(args[0], "chrome-extension://") {
		return true
	}
	return len(args) >= 2 && strings.HasSuffix(args[0], ".json") && args[1] == FirefoxExtensionID
}

// File is one manifest to put on disk.
type File struct {
	Browser string // Browser.ID
	Path    string
	Data    []byte
}

// SystemManifests returns the system-wide manifests a package installs for
// goos ("linux" or "darwin"), e.g. /etc/opt/chrome/native-messaging-hosts/
// com.reins.companion.json. Windows registers hosts in the registry, not by
// path; packages there call Install per user.
func SystemManifests(goos, binaryPath string, extraIDs ...string) ([]File, error) {
	if goos != "linux" && goos != "darwin" {
		return nil, fmt.Errorf("system manifests: %s finds hosts through the registry, not a directory", goos)
	}
	var out []File
	for _, b := range Browsers {
		dir := b.LinuxSystem
		if goos == "darwin" {
			dir = b.DarwinSystem
		}
		data, err := Manifest(b, binaryPath, extraIDs...)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Browser: b.ID, Path: dir + "/" + ManifestFile, Data: data})
	}
	return out, nil
}

// Registry sets and removes HKCU keys. The Windows implementation sits
// behind a build tag; tests pass a fake.
type Registry interface {
	// SetDefault creates key under HKCU and sets its default value.
	SetDefault(key, value string) error
	// DeleteKey removes key under HKCU; a missing key is not an error.
	DeleteKey(key string) error
}

// Installer writes and removes per-user host manifests.
type Installer struct {
	Home string // the user's home dir
	GOOS string // "linux", "darwin" or "windows"
	// Windows only: where manifest files go (default
	// Home\AppData\Local\Reins\NativeMessagingHosts) and the registry
	// (default HKCU).
	WindowsDir string
	Registry   Registry
	// ExtensionIDs are further Chromium extension ids the manifests allow
	// (see Manifest).
	ExtensionIDs []string
}

// DefaultInstaller is an Installer for this user on this system.
func DefaultInstaller() (*Installer, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("native host manifests: %w", err)
	}
	i := &Installer{Home: home, GOOS: runtime.GOOS}
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LOCALAPPDATA"); d != "" {
			i.WindowsDir = filepath.Join(d, "Reins", "NativeMessagingHosts")
		}
	}
	return i, nil
}

// Install writes manifests for every browser in Browsers for this user,
// pointing at binaryPath and allowing extraIDs beside the Reins extension.
// It returns what it wrote.
func Install(binaryPath string, extraIDs ...string) ([]string, error) {
	i, err := DefaultInstaller()
	if err != nil {
		return nil, err
	}
	i.ExtensionIDs = extraIDs
	return i.Install(binaryPath)
}

// Uninstall removes what Install wrote and returns what it removed.
func Uninstall() ([]string, error) {
	i, err := DefaultInstaller()
	if err != nil {
		return nil, err
	}
	return i.Uninstall()
}

// Install writes one manifest per browser (on Windows, one per flavour plus
// a registry key per browser) and returns the paths and keys written. A
// browser that fails does not stop the others; all failures are returned
// joined.
func (i *Installer) Install(binaryPath string) ([]string, error) {
	if !isAbs(i.GOOS, binaryPath) {
		return nil, fmt.Errorf("install native host: binary path %q is not absolute; browsers need an absolute path", binaryPath)
	}
	if i.Home == "" {
		return nil, errors.New("install native host: no home dir")
	}
	if i.GOOS == "windows" {
		return i.installWindows(binaryPath)
	}
	var done []string
	var errs []error
	for _, b := range Browsers {
		dir, err := i.userDir(b)
		if err != nil {
			return nil, err
		}
		data, err := Manifest(b, binaryPath, i.ExtensionIDs...)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, ManifestFile)
		if err := writeManifest(p, data); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", b.Name, err))
			continue
		}
		done = append(done, p)
	}
	return done, errors.Join(errs...)
}

// Uninstall removes the manifests (and on Windows the registry keys) that
// Install writes, returning those that were there. Dirs are left: the
// browsers own them.
func (i *Installer) Uninstall() ([]string, error) {
	if i.Home == "" {
		return nil, errors.New("uninstall native host: no home dir")
	}
	if i.GOOS == "windows" {
		return i.uninstallWindows()
	}
	var done []string
	var errs []error
	for _, b := range Browsers {
		dir, err := i.userDir(b)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, ManifestFile)
		switch err := os.Remove(p); {
		case err == nil:
			done = append(done, p)
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("%s: %w", b.Name, err))
		}
	}
	return done, errors.Join(errs...)
}

func (i *Installer) userDir(b Browser) (string, error) {
	switch i.GOOS {
	case "linux":
		return filepath.Join(i.Home, filepath.FromSlash(b.Linux)), nil
	case "darwin":
		return filepath.Join(i.Home, filepath.FromSlash(b.Darwin)), nil
	default:
		return "", fmt.Errorf("native host manifests: unsupported system %q", i.GOOS)
	}
}

func (i *Installer) windowsDir() string {
	if i.WindowsDir != "" {
		return i.WindowsDir
	}
	return filepath.Join(i.Home, "AppData", "Local", "Reins", "NativeMessagingHosts")
}

func (i *Installer) registry() Registry {
	if i.Registry != nil {
		return i.Registry
	}
	return systemRegistry{}
}

// Windows browsers find a manifest through the registry, so one Chromium
// manifest serves all Chromium browsers and Firefox gets its own.
func (i *Installer) windowsManifest(b Browser) string {
	flavour := "chromium"
	if b.Firefox {
		flavour = "firefox"
	}
	return filepath.Join(i.windowsDir(), flavour, ManifestFile)
}

func (i *Installer) installWindows(binaryPath string) ([]string, error) {
	var done []string
	var errs []error
	written := map[string]bool{}
	for _, b := range Browsers {
		p := i.windowsManifest(b)
		if !written[p] {
			data, err := Manifest(b, binaryPath, i.ExtensionIDs...)
			if err != nil {
				return nil, err
			}
			if err := writeManifest(p, data); err != nil {
				return done, fmt.Errorf("install native host: %w", err)
			}
			written[p] = true
			done = append(done, p)
		}
		key := b.RegistryKey + `\` + HostName
		if err := i.registry().SetDefault(key, p); err != nil {
			errs = append(errs, fmt.Errorf("%s: registry: %w", b.Name, err))
			continue
		}
		done = append(done, `HKCU\`+key)
	}
	return done, errors.Join(errs...)
}

func (i *Installer) uninstallWindows() ([]string, error) {
	var done []string
	var errs []error
	for _, b := range Browsers {
		key := b.RegistryKey + `\` + HostName
		if err := i.registry().DeleteKey(key); err != nil {
			errs = append(errs, fmt.Errorf("%s: registry: %w", b.Name, err))
			continue
		}
		done = append(done, `HKCU\`+key)
	}
	for _, flavour := range []string{"chromium", "firefox"} {
		p := filepath.Join(i.windowsDir(), flavour, ManifestFile)
		switch err := os.Remove(p); {
		case err == nil:
			done = append(done, p)
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}

// writeManifest replaces p whole, 0644: browsers run as the user, and the
// manifest holds nothing secret.
func writeManifest(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(p, data, 0o644)
}

// isAbs judges a path by the target system's rules, so a Windows layout can
// be tested on Linux.
func isAbs(goos, p string) bool {
	if goos != "windows" {
		return strings.HasPrefix(p, "/")
	}
	if strings.HasPrefix(p, `\\`) {
		return true // UNC
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}
