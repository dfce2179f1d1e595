package browsers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/nativemsg"
)

// A Local State as Chrome writes it, trimmed to what matters and a little
// of what does not.
const localState = `{
  "browser": {"enabled_labs_experiments": []},
  "profile": {
    "info_cache": {
      "Default": {"name": "Person 1", "is_using_default_name": true, "avatar_icon": "chrome://theme/IDR_PROFILE_AVATAR_26"},
      "Profile 1": {"name": "Work", "gaia_name": "Ada Lovelace", "user_name": "ada@example.com"},
      "Profile 3": {"name": "", "active_time": 1700000000.5},
      "Profile 2": {"name": "Family"}
    },
    "last_used": "Profile 1",
    "profiles_order": ["Profile 1", "Default", "Profile 2"]
  }
}`

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadProfiles(t *testing.T) {
	dir := t.TempDir()
	got, err := ReadProfiles(dir)
	if err != nil || got != nil {
		t.Fatalf("no Local State: %v, %v", got, err)
	}
	writeFile(t, filepath.Join(dir, "Local State"), localState)
	got, err = ReadProfiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Profile{{"Profile 1", "Work"}, {"Default", "Person 1"}, {"Profile 2", "Family"}, {"Profile 3", "Profile 3"}}
	if !slices.Equal(got, want) {
		t.Errorf("profiles %v, want %v", got, want)
	}

	writeFile(t, filepath.Join(dir, "Local State"), `{"profile": {"info_cache": `)
	if _, err := ReadProfiles(dir); err == nil {
		t.Error("a malformed Local State was read")
	}
	writeFile(t, filepath.Join(dir, "Local State"), `{"x":"`+strings.Repeat("a", MaxLocalState)+`"}`)
	if _, err := ReadProfiles(dir); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an oversized Local State: %v", err)
	}
	var many []string
	for i := range MaxProfiles + 10 {
		many = append(many, fmt.Sprintf(`"Profile %d": {"name": "P%d"}`, i, i))
	}
	writeFile(t, filepath.Join(dir, "Local State"), `{"profile": {"info_cache": {`+strings.Join(many, ",")+`}}}`)
	if got, err := ReadProfiles(dir); err != nil || len(got) != MaxProfiles {
		t.Errorf("%d profiles listed (%v), want at most %d", len(got), err, MaxProfiles)
	}
}

// Where each browser keeps its profiles, per system.
func TestUserDataDirs(t *testing.T) {
	env := func(goos, home string, vars map[string]string) Env {
		return Env{GOOS: goos, Home: home, Getenv: func(k string) string { return vars[k] }}
	}
	lin := env("linux", "/home/me", nil)
	mac := env("darwin", "/Users/me", nil)
	win := env("windows", `C:\Users\me`, map[string]string{"LOCALAPPDATA": `C:\Users\me\AppData\Local`, "APPDATA": `C:\Users\me\AppData\Roaming`})
	for _, tc := range []struct {
		id   string
		e    Env
		want string
	}{
		{"chrome", lin, "/home/me/.config/google-chrome"},
		{"chrome", mac, "/Users/me/Library/Application Support/Google/Chrome"},
		{"chrome", win, `C:\Users\me\AppData\Local\Google\Chrome\User Data`},
		{"chromium", lin, "/home/me/.config/chromium"},
		{"chromium", mac, "/Users/me/Library/Application Support/Chromium"},
		{"chromium", win, `C:\Users\me\AppData\Local\Chromium\User Data`},
		{"edge", lin, "/home/me/.config/microsoft-edge"},
		{"edge", mac, "/Users/me/Library/Application Support/Microsoft Edge"},
		{"edge", win, `C:\Users\me\AppData\Local\Microsoft\Edge\User Data`},
		{"brave", lin, "/home/me/.config/BraveSoftware/Brave-Browser"},
		{"brave", mac, "/Users/me/Library/Application Support/BraveSoftware/Brave-Browser"},
		{"brave", win, `C:\Users\me\AppData\Local\BraveSoftware\Brave-Browser\User Data`},
		{"vivaldi", lin, "/home/me/.config/vivaldi"},
		{"vivaldi", mac, "/Users/me/Library/Application Support/Vivaldi"},
		{"vivaldi", win, `C:\Users\me\AppData\Local\Vivaldi\User Data`},
		{"firefox", lin, "/home/me/.mozilla/firefox"},
		{"firefox", mac, "/Users/me/Library/Application Support/Firefox"},
		{"firefox", win, `C:\Users\me\AppData\Roaming\Mozilla\Firefox`},
	} {
		b, ok := Find(tc.id)
		if !ok {
			t.Fatalf("no browser %s", tc.id)
		}
		if got := b.UserDataDir(tc.e); got != tc.want {
			t.Errorf("%s on %s: %s, want %s", tc.id, tc.e.GOOS, got, tc.want)
		}
	}
}

// On Linux a browser is found by its command; its profiles come from its
// Local State, and the package's external-extensions file marks it offered.
func TestDetectLinux(t *testing.T) {
	home := t.TempDir()
	e := Env{GOOS: "linux", Home: home, Getenv: func(string) string { return "" },
		LookPath: func(cmd string) (string, error) {
			switch cmd {
			case "google-chrome":
				return "/usr/bin/google-chrome", nil
			case "firefox":
				return "/usr/bin/firefox", nil
			}
			return "", errors.New("not found")
		}}
	writeFile(t, filepath.Join(home, ".config", "google-chrome", "Local State"), localState)
	var asked []string
	got := Detect(e, func(b Browser) bool { asked = append(asked, b.ID); return b.ID == "chrome" })
	var ids []string
	for _, in := range got {
		ids = append(ids, in.ID)
	}
	// Chromium may really be installed on the test machine, at its
	// absolute path; the others are found through LookPath only.
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "chromium" })
	if !slices.Equal(ids, []string{"chrome", "firefox"}) {
		t.Fatalf("detected %v", ids)
	}
	chrome := got[0]
	if chrome.Name != "Google Chrome" || chrome.Executable != "/usr/bin/google-chrome" || !chrome.Offered || len(chrome.Profiles) != 4 || chrome.Profiles[0].Name != "Work" {
		t.Errorf("chrome: %+v", chrome)
	}
	ff := got[len(got)-1]
	if ff.Offered || ff.Profiles != nil || slices.Contains(asked, "firefox") {
		t.Errorf("firefox has no external-extensions dir: %+v (asked %v)", ff, asked)
	}
}

// On Windows a browser is found at its per-user install path.
func TestDetectWindows(t *testing.T) {
	local := t.TempDir()
	e := Env{GOOS: "windows", Home: `C:\Users\me`, Getenv: func(k string) string {
		if k == "LOCALAPPDATA" {
			return local
		}
		return ""
	}}
	b, _ := Find("vivaldi")
	exe := b.executables(e)[0]
	writeFile(t, exe, "MZ")
	got := Detect(e, func(Browser) bool { t.Error("offered asked on Windows"); return true })
	if len(got) != 1 || got[0].ID != "vivaldi" || got[0].Executable != exe || got[0].Offered {
		t.Fatalf("detected %+v", got)
	}
}

// The browser list and the native messaging host's list are the same
// browsers under the same names.
func TestSameBrowsersAsNativeMessaging(t *testing.T) {
	var a, b []string
	for _, k := range Known {
		if k.Name == "" {
			t.Errorf("%s has no name from nativemsg", k.ID)
		}
		a = append(a, k.ID)
	}
	for _, n := range nativemsg.Browsers {
		b = append(b, n.ID)
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("browsers %v, native messaging %v", a, b)
	}
	for _, k := range Known {
		if (k.Engine == "chromium") != (k.ExternalDir != "") || (k.ExternalDir != "" && !filepath.IsAbs(k.ExternalDir)) {
			t.Errorf("%s: external dir %q", k.ID, k.ExternalDir)
		}
	}
}
