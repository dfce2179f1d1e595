package tokens

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWatchSeesOtherProcess(t *testing.T) {
	dir := t.TempDir()
	cli := open(t, dir, KeyringFile)    // as `reins token issue` would
	daemon := open(t, dir, KeyringFile) // the running companion

	events := make(chan Event, 16)
	daemon.OnChange(func(e Event) { events <- e })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Watch(ctx, func(err error) { t.Errorf("reload: %v", err) }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v, want context.Canceled", err)
		}
	})

	wait := func(want Event) {
		t.Helper()
		deadline := time.NewTimer(10 * time.Second)
		defer deadline.Stop()
		for {
			select {
			case e := <-events:
				if e.Kind == want.Kind && e.Name == want.Name && e.Op == want.Op {
					return
				}
			case <-deadline.C:
				t.Fatalf("no %v event within 10s", want)
			}
		}
	}

	tok, err := cli.Issue("remote")
	if err != nil {
		t.Fatal(err)
	}
	wait(Event{Kind: KindAgent, Name: "remote", Op: OpAdded})
	if _, n, ok := daemon.Verify(tok); !ok || n != "remote" {
		t.Fatalf("daemon Verify after watch event = %q, %v", n, ok)
	}
	if err := cli.Revoke("remote"); err != nil {
		t.Fatal(err)
	}
	wait(Event{Kind: KindAgent, Name: "remote", Op: OpRemoved})
	if _, _, ok := daemon.Verify(tok); ok {
		t.Fatal("token revoked by another process still verifies after the event")
	}
}
