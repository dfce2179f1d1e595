package nativemsg

import (
	"fmt"
	"net"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary play the reins app that Launch starts: it
// reports its pid and session id to the test over TCP and exits.
const helperEnv = "REINS_NATIVEMSG_TEST_APP"

func TestMain(m *testing.M) {
	if addr := os.Getenv(helperEnv); addr != "" {
		os.Exit(helperApp(addr, len(os.Args)))
	}
	goleak.VerifyTestMain(m)
}

func helperApp(addr string, nargs int) int {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 1
	}
	defer c.Close()
	sid, _ := getsid()
	fmt.Fprintf(c, "pid=%d sid=%d args=%d\n", os.Getpid(), sid, nargs-1)
	return 0
}
