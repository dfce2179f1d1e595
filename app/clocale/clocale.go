// Package clocale keeps the C locale from reaching the GUI toolkit as an
// unparsable language. It does its work in init, and it must: the toolkit
// reads the locale while its own packages initialize. Go initializes
// packages in import-path order among those whose imports are ready, and
// this one needs only the standard library, so it runs before the
// toolkit's language package (which waits on golang.org/x/text).
//
// Under LANG=C.UTF-8 (the default of many containers and servers) the
// toolkit's locale lookup takes "C" for a language tag and logs three lines
// of errors on every command, `reins version` included. The plain "C" and
// "POSIX" it handles itself. For "C.<charset>" and "POSIX.<charset>" this
// sets LANGUAGE=en, the language those locales mean, unless LANGUAGE is
// already set; message catalogs of other programs started by Reins read
// LANGUAGE the same way, and English is what C gives them anyway.
package clocale

import (
	"os"
	"strings"
)

func init() { apply(os.Getenv, os.Setenv) }

// apply looks at the variables in the order the C library does and sets
// LANGUAGE when the one in effect is a C or POSIX locale with a charset.
func apply(getenv func(string) string, setenv func(string, string) error) {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := getenv(k)
		if v == "" {
			continue
		}
		base, _, charset := strings.Cut(v, ".")
		if charset && (base == "C" || base == "POSIX") && getenv("LANGUAGE") == "" {
			_ = setenv("LANGUAGE", "en")
		}
		return
	}
}
