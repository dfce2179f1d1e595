package tokens

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// go-keyring's mock replaces the process-wide provider for good, which is
	// why it lives only in this package's tests.
	keyring.MockInit()
	goleak.VerifyTestMain(m)
}

// stores runs a test against both Store kinds Open offers.
var stores = []string{KeyringOS, KeyringFile}

func open(t *testing.T, dir, kind string) *Manager {
	t.Helper()
	m, err := Open(dir, kind)
	if err != nil {
		t.Fatalf("Open(%q): %v", kind, err)
	}
	return m
}

// uniqueName gives each os-kind test its own names: the mock keychain is
// shared by the whole test binary.
func uniqueName(t *testing.T, base string) string {
	t.Helper()
	return fmt.Sprintf("%s-%d", base, time.Now().UnixNano())
}

func TestIssueListVerifyRevoke(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			m := open(t, t.TempDir(), kind)
			a, b := uniqueName(t, "claude"), uniqueName(t, "cursor")
			ta, err := m.Issue(a)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := m.Issue(b)
			if err != nil {
				t.Fatal(err)
			}
			if ta == tb {
				t.Fatal("two issues returned the same token")
			}
			for _, tok := range []string{ta, tb} {
				if !strings.HasPrefix(tok, TokenPrefix) || len(tok) != len(TokenPrefix)+43 {
					t.Errorf("token %q: want %q and 43 base64url chars (32 bytes)", tok, TokenPrefix)
				}
			}

			list, err := m.List()
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 || list[0].Name != a || list[1].Name != b {
				t.Fatalf("List = %+v, want %s and %s", list, a, b)
			}
			for _, in := range list {
				if in.Kind != KindAgent || in.Created.IsZero() || time.Since(in.Created) > time.Minute {
					t.Errorf("bad info %+v", in)
				}
			}

			if _, n, ok := m.Verify(ta); !ok || n != a {
				t.Errorf("Verify(a) = %q, %v", n, ok)
			}
			if _, n, ok := m.Verify(tb); !ok || n != b {
				t.Errorf("Verify(b) = %q, %v", n, ok)
			}
			for _, bad := range []string{"", "reins_", ta + "x", ta[:len(ta)-1], strings.ToUpper(ta)} {
				if _, n, ok := m.Verify(bad); ok {
					t.Errorf("Verify(%q) matched %q", bad, n)
				}
			}

			if err := m.Revoke(a); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := m.Verify(ta); ok {
				t.Error("revoked token still verifies")
			}
			if _, _, ok := m.Verify(tb); !ok {
				t.Error("revoking a broke b")
			}
			list, _ = m.List()
			if len(list) != 1 || list[0].Name != b {
				t.Errorf("List after revoke = %+v", list)
			}
			// A revoked name can be issued again, with a new token.
			ta2, err := m.Issue(a)
			if err != nil {
				t.Fatal(err)
			}
			if ta2 == ta {
				t.Error("reissue returned the old token")
			}
			if _, _, ok := m.Verify(ta); ok {
				t.Error("old token verifies after reissue")
			}
			if _, n, ok := m.Verify(ta2); !ok || n != a {
				t.Errorf("Verify(reissued) = %q, %v", n, ok)
			}
		})
	}
}

func TestSecretInKeychainNotIndex(t *testing.T) {
	dir := t.TempDir()
	m := open(t, dir, KeyringOS)
	name := uniqueName(t, "agent")
	tok, err := m.Issue(name)
	if err != nil {
		t.Fatal(err)
	}
	got, err := keyring.Get(Service, "agent:"+name)
	if err != nil || got != tok {
		t.Fatalf("keychain Get = %q, %v; want the token", got, err)
	}
	idx, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(idx), tok) {
		t.Fatal("index holds the token")
	}
	if _, err := os.Stat(filepath.Join(dir, SecretsFile)); !os.IsNotExist(err) {
		t.Fatalf("os keyring wrote a secrets file (err %v)", err)
	}
	if err := m.Revoke(name); err != nil {
		t.Fatal(err)
	}
	if _, err := keyring.Get(Service, "agent:"+name); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("keychain Get after revoke: %v, want ErrNotFound", err)
	}
}

func TestNameValidation(t *testing.T) {
	m := open(t, t.TempDir(), KeyringFile)
	cases := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"claude-code", true},
		{"Cursor_2.1", true},
		{strings.Repeat("x", 64), true},
		{"", false},
		{strings.Repeat("x", 65), false},
		{"has space", false},
		{"slash/name", false},
		{"colon:name", false},
		{"naïve", false},
		{"new\nline", false},
	}
	for _, c := range cases {
		_, err := m.Issue(c.name)
		if c.ok && err != nil {
			t.Errorf("Issue(%q): %v", c.name, err)
		}
		if !c.ok {
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("Issue(%q) = %v, want ErrInvalidName", c.name, err)
				continue
			}
			if !strings.Contains(err.Error(), "1 to 64 characters of A-Z, a-z, 0-9") {
				t.Errorf("error does not state the rule: %v", err)
			}
		}
	}
	if err := m.Revoke("bad name"); err == nil {
		t.Error("Revoke of an invalid name succeeded")
	}
}

func TestDuplicateIssue(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			m := open(t, t.TempDir(), kind)
			name := uniqueName(t, "dup")
			tok, err := m.Issue(name)
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Issue(name)
			if !errors.Is(err, ErrNameInUse) || !strings.Contains(err.Error(), "revoke it first") {
				t.Fatalf("second Issue = %v, want ErrNameInUse saying to revoke first", err)
			}
			if _, _, ok := m.Verify(tok); !ok {
				t.Fatal("a refused duplicate issue broke the first token")
			}
		})
	}
}

func TestRevokeUnknown(t *testing.T) {
	m := open(t, t.TempDir(), KeyringFile)
	err := m.Revoke("nobody")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `no agent token named "nobody"`) {
		t.Fatalf("Revoke(unknown) = %v", err)
	}
}

func TestFilePermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Log("windows has no unix modes; the ACL is the user's profile")
		return
	}
	dir := filepath.Join(t.TempDir(), "nested", "reins")
	m := open(t, dir, KeyringFile)
	tok, err := m.Issue("perm")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetBackend("acme", "backend-secret"); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	if got := mode(dir); got != 0o700 {
		t.Errorf("data dir mode %04o, want 0700", got)
	}
	for _, f := range []string{IndexFile, SecretsFile} {
		if got := mode(filepath.Join(dir, f)); got != 0o600 {
			t.Errorf("%s mode %04o, want 0600", f, got)
		}
	}
	secrets, _ := os.ReadFile(filepath.Join(dir, SecretsFile))
	if !strings.Contains(string(secrets), tok) {
		t.Error("file store does not hold the token")
	}
	idx, _ := os.ReadFile(filepath.Join(dir, IndexFile))
	if strings.Contains(string(idx), tok) || strings.Contains(string(idx), "backend-secret") {
		t.Error("index holds a secret")
	}
	// No temp files are left behind by atomic writes.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("leftover temp file %s", e.Name())
		}
	}

	// A secrets file opened up to others is refused, not used.
	if err := os.Chmod(filepath.Join(dir, SecretsFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, KeyringFile); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("Open with a 0644 secrets file = %v, want a chmod 600 hint", err)
	}
}

func TestReloadAcrossManagers(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			m1 := open(t, dir, kind)
			name := uniqueName(t, "shared")
			tok, err := m1.Issue(name)
			if err != nil {
				t.Fatal(err)
			}
			// As after a restart: a fresh Manager loads what the first wrote.
			m2 := open(t, dir, kind)
			id1, n, ok := m2.Verify(tok)
			if !ok || n != name {
				t.Fatalf("second manager Verify = %q, %v", n, ok)
			}
			// The id is the agent's identity: the same on every load.
			if first, _, _ := m1.Verify(tok); id1 == "" || first != id1 {
				t.Fatalf("token id %q after a reload, %q when issued", id1, first)
			}
			var events []Event
			m2.OnChange(func(e Event) { events = append(events, e) })

			if err := m1.Revoke(name); err != nil {
				t.Fatal(err)
			}
			// m2 still trusts its cache until it reloads; that is why the
			// companion calls Reload (or runs Watch).
			if err := m2.Reload(); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := m2.Verify(tok); ok {
				t.Fatal("token revoked elsewhere still verifies after Reload")
			}
			tok2, err := m1.Issue(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := m2.Reload(); err != nil {
				t.Fatal(err)
			}
			if _, n, ok := m2.Verify(tok2); !ok || n != name {
				t.Fatalf("reissued token: Verify = %q, %v", n, ok)
			}
			want := []Event{{Kind: KindAgent, Name: name, Op: OpRemoved}, {Kind: KindAgent, Name: name, Op: OpAdded}}
			if fmt.Sprint(withoutIDs(events)) != fmt.Sprint(want) {
				t.Errorf("events = %v, want %v", events, want)
			}
			// The re-issued token is another principal: the event that ends
			// the old one names the old id, the new one a fresh id.
			if len(events) == 2 && (events[0].ID != id1 || events[1].ID == "" || events[1].ID == id1) {
				t.Errorf("event ids %q then %q; the first token's id was %q", events[0].ID, events[1].ID, id1)
			}
			// A Reload with nothing new says nothing.
			if err := m2.Reload(); err != nil {
				t.Fatal(err)
			}
			if len(events) != 2 {
				t.Errorf("idle Reload emitted %v", events[2:])
			}
		})
	}
}

func TestVerifyComparesEveryToken(t *testing.T) {
	m := open(t, t.TempDir(), KeyringFile)
	var toks []string
	for i := range 5 {
		tok, err := m.Issue(fmt.Sprintf("agent%d", i))
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	calls := 0
	m.compare = func(a, b []byte) int {
		calls++
		if len(a) != len(b) {
			t.Errorf("compared digests of different lengths %d and %d", len(a), len(b))
		}
		return compareCT(a, b)
	}
	for i, tok := range append(toks, "reins_wrong", "") {
		calls = 0
		_, n, ok := m.Verify(tok)
		if calls != 5 {
			t.Errorf("Verify #%d compared %d tokens, want all 5 whatever matched", i, calls)
		}
		if i < 5 && (!ok || n != fmt.Sprintf("agent%d", i)) {
			t.Errorf("Verify #%d = %q, %v", i, n, ok)
		}
		if i >= 5 && ok {
			t.Errorf("Verify(%q) matched", tok)
		}
	}
}

func TestOnChange(t *testing.T) {
	m := open(t, t.TempDir(), KeyringFile)
	var mu sync.Mutex
	var got []Event
	var tokAtRevoke string
	var verifiedInCallback bool
	cancel := m.OnChange(func(e Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
		if e.Op == OpRemoved && e.Kind == KindAgent {
			// The cache is already updated when listeners hear of a revoke,
			// so a request racing the callback fails too.
			_, _, verifiedInCallback = m.Verify(tokAtRevoke)
		}
	})
	tok, err := m.Issue("bot")
	if err != nil {
		t.Fatal(err)
	}
	tokAtRevoke = tok
	if err := m.Revoke("bot"); err != nil {
		t.Fatal(err)
	}
	if verifiedInCallback {
		t.Error("revoked token verified inside the change callback")
	}
	if err := m.SetBackend("acme", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := m.SetBackend("acme", "s2"); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteBackend("acme"); err != nil {
		t.Fatal(err)
	}
	// Failed operations say nothing.
	_, _ = m.Issue("bad name")
	_ = m.Revoke("nobody")
	cancel()
	if _, err := m.Issue("after-cancel"); err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Kind: KindAgent, Name: "bot", Op: OpAdded}, {Kind: KindAgent, Name: "bot", Op: OpRemoved},
		{Kind: KindBackend, Name: "acme", Op: OpAdded}, {Kind: KindBackend, Name: "acme", Op: OpReplaced}, {Kind: KindBackend, Name: "acme", Op: OpRemoved},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 1 && (got[0].ID == "" || got[1].ID != got[0].ID) {
		t.Errorf("the agent's events carry ids %q and %q, want its one token id twice", got[0].ID, got[1].ID)
	}
	if fmt.Sprint(withoutIDs(got)) != fmt.Sprint(want) {
		t.Errorf("events\n got %v\nwant %v", got, want)
	}
}

func TestBackendSecrets(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			m := open(t, dir, kind)
			id := uniqueName(t, "acme.example")
			if _, err := m.Backend(id); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Backend(unknown) = %v", err)
			}
			if err := m.SetBackend(id, "tok-1"); err != nil {
				t.Fatal(err)
			}
			if err := m.SetBackend(id, "tok-2"); err != nil {
				t.Fatal(err)
			}
			if got, err := m.Backend(id); err != nil || got != "tok-2" {
				t.Fatalf("Backend = %q, %v", got, err)
			}
			if kind == KeyringOS {
				if got, err := keyring.Get(Service, "backend:"+id); err != nil || got != "tok-2" {
					t.Fatalf("keychain Get backend = %q, %v", got, err)
				}
			}
			bs, err := m.Backends()
			if err != nil || len(bs) != 1 || bs[0].Name != id || bs[0].Kind != KindBackend {
				t.Fatalf("Backends = %+v, %v", bs, err)
			}
			if as, _ := m.List(); len(as) != 0 {
				t.Errorf("backend shows in agent List: %+v", as)
			}
			if _, _, ok := m.Verify("tok-2"); ok {
				t.Error("a backend secret verifies as an agent token")
			}
			// Another Manager sees it.
			if got, err := open(t, dir, kind).Backend(id); err != nil || got != "tok-2" {
				t.Fatalf("second manager Backend = %q, %v", got, err)
			}
			if err := m.DeleteBackend(id); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Backend(id); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Backend after delete = %v", err)
			}
			if err := m.DeleteBackend(id); !errors.Is(err, ErrNotFound) {
				t.Fatalf("second DeleteBackend = %v", err)
			}
			if err := m.SetBackend("bad/id", "x"); !errors.Is(err, ErrInvalidName) {
				t.Errorf("SetBackend(bad id) = %v", err)
			}
			if err := m.SetBackend(id, ""); err == nil {
				t.Error("SetBackend accepted an empty token")
			}
		})
	}
}

// brokenKeyring fails every call the way go-keyring does with no Secret
// Service on the bus.
type brokenKeyring struct{ err error }

func (b brokenKeyring) Set(string, string, string) error   { return b.err }
func (b brokenKeyring) Get(string, string) (string, error) { return "", b.err }
func (b brokenKeyring) Delete(string, string) error        { return b.err }

func TestKeychainUnreachable(t *testing.T) {
	dir := t.TempDir()
	cause := errors.New("The name org.freedesktop.secrets was not provided by any .service files")
	m, err := New(dir, NewKeychainStore(brokenKeyring{cause}, 0))
	if err != nil {
		t.Fatalf("New with an empty index should not need the keychain: %v", err)
	}
	const hint = "start with --keyring file to keep tokens in a 0600 file in the data dir instead"
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s succeeded against a broken keychain", what)
		}
		if !errors.Is(err, ErrKeychainUnavailable) || !errors.Is(err, cause) {
			t.Errorf("%s: %v does not wrap ErrKeychainUnavailable and the cause", what, err)
		}
		if !strings.Contains(err.Error(), "the OS keychain is not reachable ("+cause.Error()+")") || !strings.Contains(err.Error(), hint) {
			t.Errorf("%s: %q lacks the cause or the --keyring file hint", what, err)
		}
	}
	check("CheckKeychain", m.CheckKeychain())
	_, err = m.Issue("agent")
	check("Issue", err)
	check("SetBackend", m.SetBackend("acme", "x"))

	// Nothing fell back to plaintext, and the failed issue left no entry.
	if _, err := os.Stat(filepath.Join(dir, SecretsFile)); !os.IsNotExist(err) {
		t.Errorf("a secrets file appeared: %v", err)
	}
	if list, _ := m.List(); len(list) != 0 {
		t.Errorf("failed Issue left %+v in the index", list)
	}

	// A data dir whose index names tokens cannot be opened without the
	// keychain, and says why.
	good := open(t, dir, KeyringFile)
	if _, err := good.Issue("agent"); err != nil {
		t.Fatal(err)
	}
	_, err = New(dir, NewKeychainStore(brokenKeyring{cause}, 0))
	check("New", err)
}

// stuckKeyring never answers, like Secret Service waiting on an unlock
// prompt nobody can see.
type stuckKeyring struct{ release chan struct{} }

func (s stuckKeyring) Set(string, string, string) error   { <-s.release; return nil }
func (s stuckKeyring) Get(string, string) (string, error) { <-s.release; return "", nil }
func (s stuckKeyring) Delete(string, string) error        { <-s.release; return nil }

func TestKeychainTimeout(t *testing.T) {
	kr := stuckKeyring{make(chan struct{})}
	t.Cleanup(func() { close(kr.release) })
	m, err := New(t.TempDir(), NewKeychainStore(kr, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	err = m.CheckKeychain()
	if !errors.Is(err, ErrKeychainUnavailable) || !strings.Contains(err.Error(), "no answer within 50ms") || !strings.Contains(err.Error(), "--keyring file") {
		t.Fatalf("CheckKeychain on a stuck keychain = %v", err)
	}
}

func TestProbeMismatch(t *testing.T) {
	m, err := New(t.TempDir(), NewKeychainStore(liarKeyring{}, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckKeychain(); !errors.Is(err, ErrKeychainUnavailable) || !strings.Contains(err.Error(), "--keyring file") {
		t.Fatalf("CheckKeychain on a keychain that reads back garbage = %v", err)
	}
}

type liarKeyring struct{}

func (liarKeyring) Set(string, string, string) error   { return nil }
func (liarKeyring) Get(string, string) (string, error) { return "something else", nil }
func (liarKeyring) Delete(string, string) error        { return nil }

func TestOpenUnknownKeyring(t *testing.T) {
	if _, err := Open(t.TempDir(), "plaintext"); err == nil || !strings.Contains(err.Error(), `unknown keyring "plaintext"`) {
		t.Fatalf("Open(plaintext) = %v", err)
	}
}

// failDelete is a store whose deletes fail after the token was issued.
type failDelete struct {
	Store
	fail bool
}

func (f *failDelete) Delete(account string) error {
	if f.fail {
		return &UnavailableError{Cause: errors.New("locked")}
	}
	return f.Store.Delete(account)
}

func TestRevokeWhenKeychainDeleteFails(t *testing.T) {
	dir := t.TempDir()
	fs, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := &failDelete{Store: fs}
	m, err := New(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := m.Issue("x")
	if err != nil {
		t.Fatal(err)
	}
	st.fail = true
	err = m.Revoke("x")
	if err == nil || !strings.Contains(err.Error(), "could not be deleted") {
		t.Fatalf("Revoke = %v, want an error about the leftover secret", err)
	}
	if _, _, ok := m.Verify(tok); ok {
		t.Fatal("token verifies after a revoke whose delete failed")
	}
	m2, err := New(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := m2.Verify(tok); ok {
		t.Fatal("a new manager trusts a leftover secret with no index entry")
	}
	// Issuing the name again overwrites the leftover.
	st.fail = false
	tok2, err := m.Issue("x")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := m.Verify(tok2); !ok {
		t.Fatal("reissue after failed delete does not verify")
	}
}

func TestConcurrentManagers(t *testing.T) {
	dir := t.TempDir()
	ms := []*Manager{open(t, dir, KeyringFile), open(t, dir, KeyringFile)}
	var wg sync.WaitGroup
	const each = 15
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				if _, err := m.Issue(fmt.Sprintf("m%d-%d", i, j)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	list, err := ms[0].List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2*each {
		t.Fatalf("after concurrent issues from two managers the index has %d entries, want %d", len(list), 2*each)
	}
	// Every secret survived too, not only every index line.
	if err := ms[0].Reload(); err != nil {
		t.Fatal(err)
	}
	fresh := open(t, dir, KeyringFile)
	if len(fresh.agents) != 2*each {
		t.Fatalf("a fresh manager loaded %d tokens, want %d", len(fresh.agents), 2*each)
	}
}

func TestTokenNeverInErrors(t *testing.T) {
	m := open(t, t.TempDir(), KeyringFile)
	tok, err := m.Issue("a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Issue("a")
	if err == nil || strings.Contains(err.Error(), tok) {
		t.Fatalf("duplicate error %v", err)
	}
	err = m.SetBackend("bad id", "very-secret-value")
	if err == nil || strings.Contains(err.Error(), "very-secret-value") {
		t.Fatalf("SetBackend error %v", err)
	}
}

// withoutIDs returns events with their token ids cleared, to compare the
// rest.
func withoutIDs(events []Event) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		e.ID = ""
		out[i] = e
	}
	return out
}

// An index written before tokens had ids (version 1 entries without "id")
// loads: each agent token gets a fresh id, written back to the index, and
// the next load finds the same id, so the agent stays one principal across
// restarts. Backends get none.
func TestIndexWithoutIDsIsMigrated(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			a, b := uniqueName(t, "old-a"), uniqueName(t, "old-b")
			tokA, tokB := "reins_legacy-a-"+a, "reins_legacy-b-"+b
			var store Store
			if kind == KeyringFile {
				fs, err := NewFileStore(dir)
				if err != nil {
					t.Fatal(err)
				}
				store = fs
			} else {
				store = NewKeychainStore(SystemKeyring(), 0)
			}
			for name, tok := range map[string]string{a: tokA, b: tokB} {
				if err := store.Set(account(KindAgent, name), tok); err != nil {
					t.Fatal(err)
				}
			}
			legacy := fmt.Sprintf(`{"version": 1, "entries": [
				{"name": %q, "kind": "agent", "created": "2024-05-01T10:00:00Z"},
				{"name": %q, "kind": "agent", "created": "2024-05-02T10:00:00Z"},
				{"name": "acme", "kind": "backend", "created": "2024-05-03T10:00:00Z"}]}`, a, b)
			if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(legacy), 0o600); err != nil {
				t.Fatal(err)
			}

			m := open(t, dir, kind)
			idA, nameA, okA := m.Verify(tokA)
			idB, nameB, okB := m.Verify(tokB)
			if !okA || !okB || nameA != a || nameB != b {
				t.Fatalf("legacy tokens: Verify = (%q, %v), (%q, %v)", nameA, okA, nameB, okB)
			}
			if idA == "" || idB == "" || idA == idB {
				t.Fatalf("legacy tokens got ids %q and %q, want two distinct ids", idA, idB)
			}
			onDisk, err := readIndex(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range onDisk {
				switch {
				case in.Kind == KindBackend && in.ID != "":
					t.Errorf("backend %s got id %q", in.Name, in.ID)
				case in.Name == a && in.ID != idA, in.Name == b && in.ID != idB:
					t.Errorf("index holds id %q for %s, Verify said otherwise", in.ID, in.Name)
				case in.Kind == KindAgent && in.Created.Year() != 2024:
					t.Errorf("migration changed %s's creation time to %s", in.Name, in.Created)
				}
			}
			// As after a restart: the ids stay.
			if id, _, _ := open(t, dir, kind).Verify(tokA); id != idA {
				t.Fatalf("after a restart %s has id %q, was %q", a, id, idA)
			}
			list, err := m.List()
			if err != nil || len(list) != 2 || list[0].ID == "" || list[1].ID == "" {
				t.Fatalf("List after migration = %+v, %v", list, err)
			}
		})
	}
}

// An agent entry without an id is never loaded as a principal: if the
// index cannot be given ids, those tokens do not verify rather than all
// sharing the empty id.
func TestEntryWithoutIDDoesNotVerify(t *testing.T) {
	dir := t.TempDir()
	m := open(t, dir, KeyringFile)
	tok, err := m.Issue("keeper")
	if err != nil {
		t.Fatal(err)
	}
	m.opMu.Lock()
	events, _ := m.refresh([]Info{{Name: "keeper", Kind: KindAgent, Created: time.Now()}}, nil)
	m.opMu.Unlock()
	if _, _, ok := m.Verify(tok); ok {
		t.Fatal("a token whose index entry has no id verifies")
	}
	if len(events) != 1 || events[0].Op != OpRemoved {
		t.Fatalf("events %v, want the principal removed", events)
	}
}
