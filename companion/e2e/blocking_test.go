package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
)

// reinsCLI runs the real reins binary against the stack's companion.
func reinsCLI(ctx context.Context, t *testing.T, s *harness.Stack, args ...string) string {
	t.Helper()
	bin, err := harness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append(args, "--data-dir", s.Reins.DataDir)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("reins %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// The person blocks the real extension's profile: the companion drops it,
// the extension's popup says why, and once unblocked the extension comes
// back on its own with the same browser id.
func TestBlockingTheRealExtension(t *testing.T) {
	s := newStack(t)
	ctx := within(t, setupTimeout)
	id, instance := s.Browser.ID, s.Browser.Hello.InstanceID
	if instance == "" {
		t.Fatal("the extension's hello has no instanceId")
	}

	reinsCLI(ctx, t, s, "browsers", "block", id)
	if _, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool { return len(snap.Browsers) == 0 }); err != nil {
		t.Fatalf("the blocked browser stayed connected: %v", err)
	}
	msg, err := s.Chrome.WaitConnectionError(ctx, hub.ReasonBlocked)
	if err != nil {
		t.Fatalf("the extension never showed why it was refused: %v", err)
	}
	t.Logf("the extension's popup says: %s", msg)
	if out := reinsCLI(ctx, t, s, "browsers"); !strings.Contains(out, "BLOCKED") || !strings.Contains(out, instance) {
		t.Fatalf("reins browsers after blocking:\n%s", out)
	}

	reinsCLI(ctx, t, s, "browsers", "unblock", instance)
	snap, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool { return len(snap.Browsers) == 1 })
	if err != nil {
		t.Fatalf("the unblocked extension never came back: %v", err)
	}
	if got := snap.Browsers[0]; got.ID != id || got.Hello.InstanceID != instance {
		t.Fatalf("came back as %s (%s), want %s (%s)", got.ID, got.Hello.InstanceID, id, instance)
	}
}
