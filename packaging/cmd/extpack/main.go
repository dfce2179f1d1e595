// Command extpack builds the browser-store packages of the Reins extension
// and checks that the extension carries the app's version.
//
// FyneApp.toml's [Details] Version is the one version of Reins. The Chromium
// folder extension/ is loaded unpacked as is in development, so its
// manifest.json must already say that version; extpack refuses to package
// (and `check` fails) when it does not, rather than quietly rewriting it.
//
//	extpack version                  print the version from FyneApp.toml
//	extpack check                    fail unless extension/manifest.json has it
//	extpack chrome -o FILE.zip       Chrome Web Store package (no "key", no tests)
//	extpack firefox -o FILE.xpi      Firefox package (manifest transformed)
//	extpack firefox-dir -o DIR       the Firefox package as a loadable folder
//	extpack firefox-manifest [-o F]  the Firefox manifest alone
//	extpack copy -o DIR              the shipped files as a folder (Linux package)
//	extpack id DIR                   Chromium's id for DIR loaded unpacked
//	extpack keyid                    the id that manifest.json's "key" pins
//	extpack crx -o FILE.crx [-key K]  the packed extension (CRX3) signed with K,
//	                                 default $REINS_CRX_KEY; prints its id
//	extpack newkey -o FILE           a new throwaway signing key; prints its id
//	extpack external-prefs -crx PATH the external-extensions file for a .crx
//	extpack external-dirs            where Linux browsers read such files, one a line
//
// Flags common to all: -root DIR (the repository, default "."), -ext DIR
// (default ROOT/extension).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/reinshq/reins/app/browsers"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

type config struct {
	root, ext, out string
	key, crx       string
	dataCollection string
}

func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: extpack version|check|chrome|firefox|firefox-dir|firefox-manifest|copy|id|keyid|crx|newkey|external-prefs|external-dirs [flags]")
		return 2
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("extpack "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.key, "key", "", "crx: the signing key's PEM file (default $"+CRXKeyEnv+")")
	fs.StringVar(&c.crx, "crx", "", "external-prefs: where the package installs the .crx")
	fs.StringVar(&c.root, "root", ".", "repository root (holds FyneApp.toml)")
	fs.StringVar(&c.ext, "ext", "", "extension folder (default ROOT/extension)")
	fs.StringVar(&c.out, "o", "", "output file")
	fs.StringVar(&c.dataCollection, "data-collection", defaultDataCollection,
		"Firefox data_collection_permissions.required, comma-separated")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.ext == "" {
		c.ext = filepath.Join(c.root, "extension")
	}
	if err := dispatch(cmd, fs.Args(), c, stdout, getenv); err != nil {
		fmt.Fprintf(stderr, "extpack %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// defaultDataCollection is what the Firefox listing declares. Reins sends
// page content and tab activity out of the extension, to the local companion
// and from there to the agents the person connected, so it declares both
// rather than "none"; Firefox shows this to the person before install.
const defaultDataCollection = "websiteContent,browsingActivity"

func dispatch(cmd string, args []string, c config, stdout io.Writer, getenv func(string) string) error {
	switch cmd {
	case "version":
		v, err := appVersion(c.root)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, v)
		return nil
	case "check":
		_, v, err := load(c)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "extension/manifest.json version %s matches FyneApp.toml\n", v)
		return nil
	case "chrome", "firefox":
		if c.out == "" {
			return errors.New("-o FILE is required")
		}
		b, v, extra, err := packageInputs(c, cmd == "firefox")
		if err != nil {
			return err
		}
		mtime, err := buildTime(getenv)
		if err != nil {
			return err
		}
		files, err := writeZipFile(c.out, c.ext, b, mtime, extra)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (version %s, %d files)\n", c.out, v, len(files))
		return nil
	case "firefox-dir":
		if c.out == "" {
			return errors.New("-o DIR is required")
		}
		b, v, extra, err := packageInputs(c, true)
		if err != nil {
			return err
		}
		files, err := writeFirefoxDir(c.out, c.ext, b, extra)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (version %s, %d files)\n", c.out, v, len(files))
		return nil
	case "copy":
		if c.out == "" {
			return errors.New("-o DIR is required")
		}
		if _, _, err := load(c); err != nil {
			return err
		}
		files, err := copyTree(c.ext, c.out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "copied %d files to %s\n", len(files), c.out)
		return nil
	case "firefox-manifest":
		b, _, err := variantManifest(c, true)
		if err != nil {
			return err
		}
		if c.out == "" {
			_, err = stdout.Write(b)
			return err
		}
		return os.WriteFile(c.out, b, 0o644)
	case "id":
		if len(args) != 1 {
			return errors.New("usage: extpack id DIR")
		}
		id, err := unpackedID(args[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, id)
		return nil
	case "crx":
		if c.out == "" {
			return errors.New("-o FILE.crx is required")
		}
		kp, err := keyPath(c.key, getenv)
		if err != nil {
			return err
		}
		key, err := loadKey(kp)
		if err != nil {
			return err
		}
		b, _, err := variantManifest(c, false)
		if err != nil {
			return err
		}
		mtime, err := buildTime(getenv)
		if err != nil {
			return err
		}
		var zipped bytes.Buffer
		if _, err := writeZip(&zipped, c.ext, b, mtime, nil); err != nil {
			return err
		}
		crx, id, err := buildCRX(zipped.Bytes(), key)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(c.out, crx); err != nil {
			return err
		}
		// stdout carries the id alone, for the package scripts.
		fmt.Fprintln(stdout, id)
		return nil
	case "newkey":
		if c.out == "" {
			return errors.New("-o FILE is required")
		}
		id, err := writeKey(c.out)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, id)
		return nil
	case "external-prefs":
		if c.crx == "" || !strings.HasPrefix(c.crx, "/") {
			return errors.New("-crx needs the absolute path where the package installs the .crx")
		}
		v, err := appVersion(c.root)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(ExternalPrefs{CRX: c.crx, Version: v}, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	case "external-dirs":
		for _, b := range browsers.Known {
			if b.ExternalDir != "" {
				fmt.Fprintln(stdout, b.ExternalDir)
			}
		}
		return nil
	case "keyid":
		m, err := readManifest(c.ext)
		if err != nil {
			return err
		}
		var key string
		if err := m.get("key", &key); err != nil {
			return fmt.Errorf("extension manifest: %w", err)
		}
		id, err := keyID(key)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, id)
		return nil
	}
	return fmt.Errorf("unknown command %q", cmd)
}

// load reads the manifest and fails unless its version is the app's.
// packageInputs is what a package holds besides the shipped files: its
// manifest (and version) and, for Firefox, the extra files, after checking
// that the extension has the Firefox background.
func packageInputs(c config, firefox bool) (manifest []byte, version string, extra map[string][]byte, err error) {
	if manifest, version, err = variantManifest(c, firefox); err != nil || !firefox {
		return manifest, version, nil, err
	}
	if err := checkFirefoxBackground(c.ext); err != nil {
		return nil, "", nil, err
	}
	extra, err = firefoxExtras(c.root)
	return manifest, version, extra, err
}

// variantManifest is the Chromium (store) or the Firefox manifest of the
// extension, indented, and the version it carries.
func variantManifest(c config, firefox bool) ([]byte, string, error) {
	m, v, err := load(c)
	if err != nil {
		return nil, "", err
	}
	variant := chromeManifest(m)
	if firefox {
		if variant, err = firefoxManifest(m, firefoxOptions{DataCollection: splitList(c.dataCollection)}); err != nil {
			return nil, "", err
		}
	}
	b, err := variant.indent()
	return b, v, err
}

func load(c config) (*object, string, error) {
	want, err := appVersion(c.root)
	if err != nil {
		return nil, "", err
	}
	m, err := readManifest(c.ext)
	if err != nil {
		return nil, "", err
	}
	got, err := manifestVersion(m)
	if err != nil {
		return nil, "", err
	}
	if got != want {
		return nil, "", fmt.Errorf("%s says version %q but FyneApp.toml says %q: set them equal (FyneApp.toml is the source)",
			filepath.Join(c.ext, "manifest.json"), got, want)
	}
	return m, want, nil
}

func readManifest(ext string) (*object, error) {
	b, err := os.ReadFile(filepath.Join(ext, "manifest.json"))
	if err != nil {
		return nil, err
	}
	return parseManifest(b)
}

// appVersion is FyneApp.toml's [Details] Version, validated as the stores
// will validate it.
func appVersion(root string) (string, error) {
	var meta struct {
		Details struct {
			Version string
		}
	}
	p := filepath.Join(root, "FyneApp.toml")
	if _, err := toml.DecodeFile(p, &meta); err != nil {
		return "", fmt.Errorf("reading %s: %w", p, err)
	}
	if meta.Details.Version == "" {
		return "", fmt.Errorf("%s has no [Details] Version", p)
	}
	if err := checkVersion(meta.Details.Version); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return meta.Details.Version, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
