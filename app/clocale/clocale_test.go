package clocale

import "testing"

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // LANGUAGE afterwards
	}{
		{"C.UTF-8", map[string]string{"LANG": "C.UTF-8"}, "en"},
		{"POSIX with a charset in LC_ALL", map[string]string{"LC_ALL": "POSIX.ISO-8859-1", "LANG": "de_DE.UTF-8"}, "en"},
		{"LC_MESSAGES before LANG", map[string]string{"LC_MESSAGES": "C.utf8", "LANG": "fr_FR.UTF-8"}, "en"},
		{"plain C is left to the toolkit", map[string]string{"LANG": "C"}, ""},
		{"a real language", map[string]string{"LANG": "de_DE.UTF-8"}, ""},
		{"LC_ALL wins over a C LANG", map[string]string{"LC_ALL": "pt_BR.UTF-8", "LANG": "C.UTF-8"}, ""},
		{"LANGUAGE already set", map[string]string{"LANG": "C.UTF-8", "LANGUAGE": "nl"}, "nl"},
		{"nothing set", map[string]string{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tc.env {
				env[k] = v
			}
			apply(func(k string) string { return env[k] }, func(k, v string) error { env[k] = v; return nil })
			if got := env["LANGUAGE"]; got != tc.want {
				t.Errorf("LANGUAGE = %q, want %q", got, tc.want)
			}
		})
	}
}
