package app

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

var (
	readmeSpan        = regexp.MustCompile("`([^`]+)`")
	readmePlaceholder = regexp.MustCompile(`^[A-Z]+$`)
)

// invocation is a reins command line of README.md. nameOnly: it names
// the command among others (reins token|pair|…) and shows no arguments.
type invocation struct {
	args     []string
	nameOnly bool
}

// readmeInvocations returns every reins command line README.md shows, in
// code spans and code blocks: optional parts kept, placeholders (NAME, ID,
// TABID…) filled with 1, and a|b alternatives of the command name split
// into one line each.
func readmeInvocations(t *testing.T) []invocation {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	inBlock := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			code = append(code, line)
		}
		for _, m := range readmeSpan.FindAllStringSubmatch(line, -1) {
			code = append(code, m[1])
		}
	}
	var out []invocation
	for _, c := range code {
		c, _, _ = strings.Cut(c, " # ")
		for _, seg := range strings.Split(c, " | ") {
			seg = strings.TrimLeft(seg, " │▲▼$")
			words := strings.Fields(strings.NewReplacer("[", "", "]", "", "…", "").Replace(seg))
			if len(words) == 0 || words[0] != "reins" {
				continue
			}
			args := words[1:]
			for i, w := range args {
				if readmePlaceholder.MatchString(w) {
					args[i] = "1"
				}
			}
			if len(args) > 0 && strings.Contains(args[0], "|") {
				for _, name := range strings.Split(args[0], "|") {
					out = append(out, invocation{args: []string{name}, nameOnly: true})
				}
				continue
			}
			out = append(out, invocation{args: args})
		}
	}
	if len(out) < 10 {
		t.Fatalf("found only %v in README.md: has its layout changed?", out)
	}
	return out
}

// Every command line README.md shows is one reins takes: its command
// exists, its flags are the command's, and the subcommands of the commands
// that have them are accepted (run against a data dir with no companion,
// which only those commands' real work needs).
func TestREADMECommandsExist(t *testing.T) {
	subcommands := map[string]bool{"token": true, "pair": true, "backends": true, "browsers": true, "live": true}
	seen := map[string]bool{}
	for _, in := range readmeInvocations(t) {
		args := in.args
		line := "reins " + strings.Join(args, " ")
		if seen[line] {
			continue
		}
		seen[line] = true
		// With -h last, every command parses its flags and stops.
		_, _, errOut := run(t, nil, append(append([]string(nil), args...), "-h")...)
		if strings.Contains(errOut, "unknown command") || strings.Contains(errOut, "flag provided but not defined") {
			t.Errorf("README.md shows %q: %s", line, firstLine(errOut))
			continue
		}
		if in.nameOnly || len(args) == 0 || !subcommands[args[0]] {
			continue
		}
		code, _, errOut := run(t, nil, append(append([]string(nil), args...), "--data-dir", dataDir(t), "--keyring", "file")...)
		if code == 2 || strings.Contains(errOut, "usage:") {
			t.Errorf("README.md shows %q, which reins refuses: %s", line, firstLine(errOut))
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
