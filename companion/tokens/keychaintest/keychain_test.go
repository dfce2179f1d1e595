package keychaintest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/tokens"
	"github.com/zalando/go-keyring"
)

const howToRun = `these tests need a real, unlocked Secret Service on the session D-Bus; run them as
  dbus-run-session -- sh -c 'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; go test ./companion/tokens/keychaintest/'
(or make test-keychain); on Debian/Ubuntu: apt-get install dbus dbus-x11 gnome-keyring.
If the probe says the collection could not be unlocked, a login keyring left by an earlier run
has another password: point XDG_DATA_HOME at an empty dir for the run.`

var (
	probeOnce sync.Once
	probeErr  error
)

// requireKeychain fails, never skips, when no Secret Service answers.
func requireKeychain(t *testing.T) {
	t.Helper()
	probeOnce.Do(func() {
		if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
			probeErr = errors.New("DBUS_SESSION_BUS_ADDRESS is unset: there is no session bus")
			return
		}
		probeErr = tokens.Check(tokens.NewKeychainStore(tokens.SystemKeyring(), 20*time.Second))
	})
	if probeErr != nil {
		t.Fatalf("Secret Service not reachable: %v\n%s", probeErr, howToRun)
	}
}

// unique keeps runs apart: gnome-keyring keeps the login keyring on disk, so
// entries from an earlier run may still be there.
func unique(t *testing.T, base string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := base + "-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		_ = keyring.Delete(tokens.Service, "agent:"+name)
		_ = keyring.Delete(tokens.Service, "backend:"+name)
	})
	return name
}

func open(t *testing.T, dir string) *tokens.Manager {
	t.Helper()
	m, err := tokens.Open(dir, tokens.KeyringOS)
	if err != nil {
		t.Fatalf("Open(os): %v", err)
	}
	return m
}

func TestCheckKeychain(t *testing.T) {
	requireKeychain(t)
	if err := open(t, t.TempDir()).CheckKeychain(); err != nil {
		t.Fatal(err)
	}
}

func TestIssueSurvivesRestart(t *testing.T) {
	requireKeychain(t)
	dir := t.TempDir()
	name := unique(t, "agent")
	tok, err := open(t, dir).Issue(name)
	if err != nil {
		t.Fatal(err)
	}

	got, err := keyring.Get(tokens.Service, "agent:"+name)
	if err != nil {
		t.Fatalf("the token is not in the keychain: %v", err)
	}
	if got != tok {
		t.Fatal("the keychain holds a different secret than the issued token")
	}

	// A second Manager on the same data dir, as after a restart, verifies
	// from the keychain alone.
	m2 := open(t, dir)
	if _, n, ok := m2.Verify(tok); !ok || n != name {
		t.Fatalf("after restart Verify = %q, %v", n, ok)
	}
	list, err := m2.List()
	if err != nil || len(list) != 1 || list[0].Name != name {
		t.Fatalf("after restart List = %+v, %v", list, err)
	}
}

// A token issued before tokens had ids, its secret in the real keychain and
// its index entry without an id, is given an id on the first load; the id is
// written to the index and is the same after a restart.
func TestLegacyIndexGetsIDs(t *testing.T) {
	requireKeychain(t)
	dir := t.TempDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	name := unique(t, "legacy")
	tok := "reins_legacy-" + name
	if err := keyring.Set(tokens.Service, "agent:"+name, tok); err != nil {
		t.Fatal(err)
	}
	legacy := `{"version": 1, "entries": [{"name": "` + name + `", "kind": "agent", "created": "2024-05-01T10:00:00Z"}]}`
	if err := os.WriteFile(filepath.Join(dir, tokens.IndexFile), []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	id, n, ok := open(t, dir).Verify(tok)
	if !ok || n != name || id == "" {
		t.Fatalf("legacy token: Verify = %q, %q, %v", id, n, ok)
	}
	raw, err := os.ReadFile(filepath.Join(dir, tokens.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"id": "`+id+`"`) {
		t.Fatalf("the index was not given the id %s:\n%s", id, raw)
	}
	if again, _, _ := open(t, dir).Verify(tok); again != id {
		t.Fatalf("after a restart the token's id is %q, was %q", again, id)
	}
}

func TestRevokeRemovesFromKeychain(t *testing.T) {
	requireKeychain(t)
	dir := t.TempDir()
	name := unique(t, "revoke")
	m := open(t, dir)
	tok, err := m.Issue(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Revoke(name); err != nil {
		t.Fatal(err)
	}
	if _, err := keyring.Get(tokens.Service, "agent:"+name); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("keychain Get after revoke = %v, want ErrNotFound", err)
	}
	if _, _, ok := m.Verify(tok); ok {
		t.Fatal("revoked token verifies")
	}
	if _, _, ok := open(t, dir).Verify(tok); ok {
		t.Fatal("revoked token verifies after restart")
	}
	if err := m.Revoke(name); !errors.Is(err, tokens.ErrNotFound) {
		t.Fatalf("second revoke = %v, want ErrNotFound", err)
	}
}

func TestBackendSecret(t *testing.T) {
	requireKeychain(t)
	dir := t.TempDir()
	id := unique(t, "backend")
	m := open(t, dir)
	for _, secret := range []string{"first-secret", "second-secret"} {
		if err := m.SetBackend(id, secret); err != nil {
			t.Fatal(err)
		}
		got, err := keyring.Get(tokens.Service, "backend:"+id)
		if err != nil || got != secret {
			t.Fatalf("keychain Get backend = %q, %v; want %q", got, err, secret)
		}
	}
	if got, err := open(t, dir).Backend(id); err != nil || got != "second-secret" {
		t.Fatalf("after restart Backend = %q, %v", got, err)
	}
	if err := m.DeleteBackend(id); err != nil {
		t.Fatal(err)
	}
	if _, err := keyring.Get(tokens.Service, "backend:"+id); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("keychain Get after DeleteBackend = %v, want ErrNotFound", err)
	}
}

// A running companion hears of a token issued by another process (the CLI)
// and verifies it at once.
func TestWatchPicksUpOtherManager(t *testing.T) {
	requireKeychain(t)
	dir := t.TempDir()
	daemon, cli := open(t, dir), open(t, dir)
	added := make(chan string, 4)
	daemon.OnChange(func(e tokens.Event) {
		if e.Op == tokens.OpAdded {
			added <- e.Name
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Watch(ctx, func(err error) { t.Errorf("reload: %v", err) }) }()
	t.Cleanup(func() { cancel(); <-done })

	name := unique(t, "watched")
	tok, err := cli.Issue(name)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case n := <-added:
			if n != name {
				continue
			}
			if _, got, ok := daemon.Verify(tok); !ok || got != name {
				t.Fatalf("Verify after event = %q, %v", got, ok)
			}
			return
		case <-deadline.C:
			t.Fatal("no change event within 20s")
		}
	}
}
