//go:build windows

package admin

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// The pipe name depends on the user: another user's companion (or a
// squatter guessing a fixed name) is on another pipe.
func TestPipeNameIsPerUser(t *testing.T) {
	a := pipeName("S-1-5-21-1-2-3-1001", `C:\data`)
	b := pipeName("S-1-5-21-1-2-3-1002", `C:\data`)
	if a == b || !strings.HasPrefix(a, `\\.\pipe\reins-admin-`) {
		t.Fatalf("pipe names %s and %s", a, b)
	}
	if pipeName("S-1-5-21-1-2-3-1001", `C:\DATA`) != a {
		t.Fatal("the data dir's case changed the pipe name")
	}
}

// A pipe owned by anyone else (here SYSTEM) is a squatter's.
func TestOwnedByRefusesAnotherOwner(t *testing.T) {
	me, err := userSID()
	if err != nil {
		t.Fatal(err)
	}
	mine, err := windows.SecurityDescriptorFromString(pipeSDDL(me.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := ownedBy(mine, me); err != nil {
		t.Fatalf("our own descriptor: %v", err)
	}
	theirs, err := windows.SecurityDescriptorFromString(pipeSDDL("S-1-5-18"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ownedBy(theirs, me); !errors.Is(err, ErrSquatted) {
		t.Fatalf("a SYSTEM-owned pipe: %v, want ErrSquatted", err)
	}
}

// Listen creates the pipe exclusively: a second Listen on the same data dir
// finds the first and says so, and a client reaches it and checks its owner.
func TestListenIsExclusiveAndOwned(t *testing.T) {
	dir := t.TempDir()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Listen(dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Listen: %v, want ErrAlreadyRunning", err)
	}
	c, err := dial(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
