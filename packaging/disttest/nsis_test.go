package disttest

// This file runs without the disttest tag too (`go test ./packaging/...`):
// it reads the installer's sources, it builds nothing.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// nsisExec matches the NSIS instructions and plug-in calls that start a
// program at install or uninstall time (not !system and !execute, which run
// on the build machine).
var nsisExec = regexp.MustCompile(`(?i)^\s*(Exec|ExecWait|ExecShell|ExecShellWait|nsExec::Exec|nsExec::ExecToLog|nsExec::ExecToStack|ExecDos::exec|ExecCmd::exec)\s+(.*)$`)

// fullPathPrefixes are where the installer may start programs from: the
// system directories and its own install dir, never a bare name that
// Windows looks up in the working directory and PATH first.
var fullPathPrefixes = []string{`$SYSDIR\`, `$WINDIR\`, `$INSTDIR\`, `$PLUGINSDIR\`}

// bareCommands returns the program of every line of an NSIS script that
// starts one by a bare name.
func bareCommands(script string) []string {
	var out []string
	for _, line := range strings.Split(script, "\n") {
		m := nsisExec.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		args := nsisArgs(m[2])
		if strings.HasPrefix(strings.ToLower(m[1]), "execshell") && len(args) > 0 {
			args = args[1:] // the verb
		}
		if len(args) == 0 {
			out = append(out, strings.TrimSpace(line))
			continue
		}
		prog := program(args[0])
		ok := false
		for _, p := range fullPathPrefixes {
			if len(prog) >= len(p) && strings.EqualFold(prog[:len(p)], p) {
				ok = true
			}
		}
		if !ok {
			out = append(out, prog)
		}
	}
	return out
}

// nsisArgs splits an instruction's arguments (quoted with ', " or `, or
// bare), leaving out switches such as /TIMEOUT=5000 and /OEM.
func nsisArgs(s string) []string {
	var args []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == ';' || s[0] == '#' {
			break // a comment ends the line
		}
		var arg string
		if q := s[0]; q == '\'' || q == '"' || q == '`' {
			end := closingQuote(s, q)
			if end < 0 {
				arg, s = s[1:], ""
			} else {
				arg, s = s[1:end], s[end+1:]
			}
		} else {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			arg, s = s[:end], s[end:]
			if strings.HasPrefix(arg, "/") {
				continue
			}
		}
		args = append(args, arg)
	}
	return args
}

// closingQuote is the index of the quote that ends the string s opens,
// skipping NSIS's escaped quotes ($\", $\' and $\`), or -1.
func closingQuote(s string, q byte) int {
	for i := 1; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "$\\") && i+2 < len(s) {
			i += 2
			continue
		}
		if s[i] == q {
			return i
		}
	}
	return -1
}

// program is the program a command line starts: its first word, or the
// quoted path it starts with ($\" is NSIS's escaped double quote).
func program(cmd string) string {
	cmd = strings.TrimSpace(strings.ReplaceAll(cmd, `$\"`, `"`))
	if strings.HasPrefix(cmd, `"`) {
		if end := strings.IndexByte(cmd[1:], '"'); end >= 0 {
			return cmd[1 : 1+end]
		}
		return cmd[1:]
	}
	if end := strings.IndexAny(cmd, " \t"); end >= 0 {
		return cmd[:end]
	}
	return cmd
}

// TestBareCommandsAreCaught is the check's own test: the line the
// installer used to run is caught, the fixed one passes.
func TestBareCommandsAreCaught(t *testing.T) {
	for line, bare := range map[string]string{
		`  nsExec::Exec 'taskkill /F /IM reins.exe'`:                  "taskkill",
		`  nsExec::ExecToLog /TIMEOUT=5000 "cmd /c del x"`:            "cmd",
		`ExecWait '"powershell.exe" -Command x' $0`:                   "powershell.exe",
		`ExecShell "open" "notepad.exe"`:                              "notepad.exe",
		`  nsExec::Exec '"$SYSDIR\taskkill.exe" /F /IM reins.exe'`:    "",
		`  ExecWait "$\"$INSTDIR\reins.exe$\" install-native-host"`:   "",
		`  Exec '"$WINDIR\System32\cmd.exe" /c exit' ; then carry on`: "",
		`  ; nsExec::Exec 'taskkill /F /IM reins.exe'`:                "",
	} {
		got := bareCommands(line)
		if bare == "" && len(got) != 0 || bare != "" && (len(got) != 1 || got[0] != bare) {
			t.Errorf("%s: found %q, want %q", line, got, bare)
		}
	}
}

// TestInstallerRunsNoBareCommand: the installer and the uninstaller start
// every program by its full path, in reins.nsi, in the macros nmhosts
// generates for it, and in the native host launcher.
func TestInstallerRunsNoBareCommand(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gen := t.TempDir()
	nmhosts := exec.Command("go", "run", "./packaging/cmd/nmhosts", "windows", "-path", "reins-native-host.cmd", "-out", gen)
	nmhosts.Dir = repo
	if out, err := nmhosts.CombinedOutput(); err != nil {
		t.Fatalf("generating nativehosts.nsh: %v\n%s", err, out)
	}
	scripts, _ := filepath.Glob(filepath.Join(repo, "packaging", "windows", "*.ns[ih]"))
	scripts = append(scripts, filepath.Join(gen, "nativehosts.nsh"))
	execs := 0
	for _, path := range scripts {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if nsisExec.MatchString(line) {
				execs++
			}
		}
		if bare := bareCommands(string(data)); len(bare) > 0 {
			t.Errorf("%s starts programs by a bare name: %q (use $SYSDIR\\name.exe)", filepath.Base(path), bare)
		}
	}
	if execs == 0 {
		t.Fatal("no Exec instruction found: the check is reading the wrong files")
	}

	// The launcher browsers start: every command is reins.exe beside it.
	cmds, _ := filepath.Glob(filepath.Join(repo, "packaging", "windows", "*.cmd"))
	if len(cmds) == 0 {
		t.Fatal("no .cmd launcher found")
	}
	for _, path := range cmds {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			l := strings.ToLower(strings.TrimSpace(line))
			if l == "" || l == "@echo off" || strings.HasPrefix(l, "rem ") || strings.HasPrefix(l, "::") {
				continue
			}
			if !strings.HasPrefix(l, `"%~dp0`) {
				t.Errorf("%s runs %q, not a program beside it by full path", filepath.Base(path), strings.TrimSpace(line))
			}
		}
	}
}
