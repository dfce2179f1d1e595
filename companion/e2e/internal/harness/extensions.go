package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// OtherExtensionName is the name of the extension WithManagementGranted
// installs beside Reins, for agents to list, disable and enable.
const OtherExtensionName = "Reins test neighbour"

// WithManagementGranted loads Reins as it is once the person granted it the
// optional management permission in its popup (headless Chromium cannot
// show that prompt): a copy of extension/ whose manifest holds the
// permission, with the same key and so the same id. Beside it goes a
// minimal extension for agents to manage.
func WithManagementGranted() ChromiumOption {
	return func(o *chromiumOptions) {
		o.extensions = func(dir, ext string) ([]string, error) {
			granted := filepath.Join(dir, "reins-extension")
			if err := os.CopyFS(granted, os.DirFS(ext)); err != nil {
				return nil, fmt.Errorf("copying the extension: %w", err)
			}
			path := filepath.Join(granted, "manifest.json")
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, err
			}
			perms, _ := m["permissions"].([]any)
			m["permissions"] = append(perms, "management")
			if opt, ok := m["optional_permissions"].([]any); ok {
				m["optional_permissions"] = slices.DeleteFunc(opt, func(p any) bool { return p == "management" })
			}
			if data, err = json.MarshalIndent(m, "", "  "); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return nil, err
			}
			other := filepath.Join(dir, "neighbour-extension")
			if err := os.MkdirAll(other, 0o755); err != nil {
				return nil, err
			}
			manifest := fmt.Sprintf(`{"manifest_version": 3, "name": %q, "version": "1.0", "description": "An extension for the tests to manage."}`, OtherExtensionName)
			if err := os.WriteFile(filepath.Join(other, "manifest.json"), []byte(manifest), 0o644); err != nil {
				return nil, err
			}
			return []string{granted, other}, nil
		}
	}
}
