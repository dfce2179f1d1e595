package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinshq/reins/companion/nativemsg"
)

// nativeHostScript writes an executable under dir that runs the test's
// reins as the native messaging host of dataDir. A manifest names a
// program, not arguments, so the script adds them, as the packages'
// reins-native-host launcher does.
func nativeHostScript(dir, dataDir string) (string, error) {
	reins, err := Binary()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	script := filepath.Join(dir, "reins-native-host")
	body := fmt.Sprintf("#!/bin/sh\nexec %s native-host --data-dir %s \"$@\"\n", shellQuote(reins), shellQuote(dataDir))
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		return "", err
	}
	return script, nil
}

// writeChromiumHost registers the host for one Chromium profile. With
// --user-data-dir, Chromium reads user-level host manifests from
// <user-data-dir>/NativeMessagingHosts, so the test's host is seen by that
// profile alone and never by a person's browser.
func writeChromiumHost(userDataDir, script string) error {
	return writeHostManifest(filepath.Join(userDataDir, "NativeMessagingHosts"), nativemsg.ChromiumManifest{
		Name: nativemsg.HostName, Description: hostDescription, Path: script, Type: "stdio",
		AllowedOrigins: []string{nativemsg.ChromeOrigin},
	})
}

// writeFirefoxHost registers the host for Firefox under home, where Firefox
// reads user-level manifests ($HOME/.mozilla/native-messaging-hosts).
func writeFirefoxHost(home, script string) error {
	return writeHostManifest(filepath.Join(home, ".mozilla", "native-messaging-hosts"), nativemsg.FirefoxManifest{
		Name: nativemsg.HostName, Description: hostDescription, Path: script, Type: "stdio",
		AllowedExtensions: []string{nativemsg.FirefoxExtensionID},
	})
}

const hostDescription = "Reins end-to-end test host"

func writeHostManifest(dir string, manifest any) error {
	m, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, nativemsg.ManifestFile), m, 0o600)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
