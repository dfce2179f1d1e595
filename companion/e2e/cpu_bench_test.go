package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// procTime is one process's role and CPU time so far (user + system, in
// clock ticks of 10 ms).
type procTime struct {
	role  string
	ticks int64
}

// procCPU reads the CPU time of the processes that matter from /proc, by
// pid: the bench itself, reins, and Chromium's processes with their
// --type as role (the extension's own renderer apart).
func procCPU(reinsPID int) map[int]procTime {
	out := map[int]procTime{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command name, which may hold spaces.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat)[i+2:])
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		var role string
		switch pid {
		case self:
			role = "bench client"
		case reinsPID:
			role = "reins"
		default:
			cmd, _ := os.ReadFile(d + "/cmdline")
			// Chromium's children rewrite their command line as one
			// space-separated string.
			args := strings.FieldsFunc(string(cmd), func(r rune) bool { return r == 0 || r == ' ' })
			if len(args) == 0 || !strings.Contains(args[0], "chrom") {
				continue
			}
			role = "chromium browser"
			for _, a := range args {
				if t, ok := strings.CutPrefix(a, "--type="); ok {
					role = "chromium " + t
				}
			}
			if slices.Contains(args, "--extension-process") {
				role = "chromium extension"
			}
			if role == "chromium utility" {
				for _, a := range args {
					if s, ok := strings.CutPrefix(a, "--utility-sub-type="); ok {
						role = "chromium " + s[strings.LastIndexByte(s, '.')+1:]
					}
				}
			}
		}
		out[pid] = procTime{role, ut + st}
	}
	return out
}

// cpuByRole sums the CPU time each role used between two readings, over
// the processes alive at both (one that exited would take its past time
// with it).
func cpuByRole(before, after map[int]procTime) map[string]int64 {
	out := map[string]int64{}
	for pid, a := range after {
		if b, ok := before[pid]; ok && b.role == a.role {
			out[a.role] += a.ticks - b.ticks
		}
	}
	return out
}
