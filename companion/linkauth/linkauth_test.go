package linkauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite companion/wire/testdata/link_auth.json")

func TestLoadOrCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	k, replaced, err := LoadOrCreate(dir)
	if err != nil || replaced {
		t.Fatalf("first start: %v, replaced %v", err, replaced)
	}
	if k.IsZero() {
		t.Fatal("a zero key")
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != KeySize {
		t.Fatalf("key file mode %04o size %d, want 0600 and %d", fi.Mode().Perm(), fi.Size(), KeySize)
	}
	di, _ := os.Stat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode %04o, want 0700", di.Mode().Perm())
	}
	again, replaced, err := LoadOrCreate(dir)
	if err != nil || replaced || again != k {
		t.Fatalf("second start: same key %v, replaced %v, %v", again == k, replaced, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}

func TestLoadOrCreateReplacesUnsafeKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  []byte
		mode  os.FileMode
		wantE error
	}{
		{"readable by the group", bytes.Repeat([]byte{7}, KeySize), 0o640, ErrKeyExposed},
		{"readable by everyone", bytes.Repeat([]byte{7}, KeySize), 0o644, ErrKeyExposed},
		{"too short", []byte("short"), 0o600, nil},
		{"too long", bytes.Repeat([]byte{7}, KeySize+1), 0o600, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, KeyFile)
			if err := os.WriteFile(path, tc.data, tc.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, tc.mode)
			_, err := Load(dir)
			if err == nil || (tc.wantE != nil && !errors.Is(err, tc.wantE)) {
				t.Fatalf("Load: %v, want %v", err, tc.wantE)
			}
			k, replaced, err := LoadOrCreate(dir)
			if err != nil || !replaced {
				t.Fatalf("LoadOrCreate: %v, replaced %v", err, replaced)
			}
			if bytes.Equal(k.Bytes(), tc.data) {
				t.Fatal("the unsafe key was kept")
			}
			fi, _ := os.Stat(path)
			if fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %04o", fi.Mode().Perm())
			}
		})
	}
}

// The app and a native host may create the key at the same moment; both
// must end up with the one on disk.
func TestLoadOrCreateConcurrent(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	keys := make([]Key, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, _, err := LoadOrCreate(dir)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	onDisk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if k != onDisk {
			t.Fatalf("process %d holds another key than the one on disk", i)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	if _, err := Load(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a dir without a key: %v", err)
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	k := NewKey()
	secretHex := fmt.Sprintf("%x", k.Bytes())
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "key", k)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "key", k)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s %x %q", k, k, k, k, k, k), fmt.Sprint(struct{ K Key }{k}), logs.String()} {
		if strings.Contains(s, secretHex) || strings.Contains(strings.ToLower(s), secretHex[:8]) {
			t.Fatalf("the key shows in %q", s)
		}
	}
}

func TestNormalizeCode(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"ABCDE-FGHJK", "ABCDEFGHJK", ""},
		{"abcde fghjk", "ABCDEFGHJK", ""},
		{" 0123456789 ", "0123456789", ""},
		{"oOiIlL-23456", "001111-23456", "characters"},
		{"OOIIL23456", "0011123456", ""},
		{"ABCDE-FGHJ", "", "10 characters"},
		{"ABCDE-FGHJKM", "", "10 characters"},
		{"ABCDE-FGHJU", "", "characters"},
		{"ABCDE_FGHJK", "", "characters"},
		{"ÄBCDE-FGHJK", "", "characters"},
		{"", "", "10 characters"},
	} {
		got, err := NormalizeCode(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NormalizeCode(%q) = %q, %v; want an error about %s", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeCode(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestCodeIssue(t *testing.T) {
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	c := NewCodes(clk.now)
	if ok, _ := c.Active(); ok {
		t.Fatal("a code is active before any was issued")
	}
	seen := map[string]bool{}
	for range 200 {
		code, exp := c.Issue()
		if len(code) != CodeLength+1 || code[5] != '-' {
			t.Fatalf("code %q is not two groups of five", code)
		}
		norm, err := NormalizeCode(code)
		if err != nil || FormatCode(norm) != code {
			t.Fatalf("code %q does not read back: %q %v", code, norm, err)
		}
		if !exp.Equal(clk.now().Add(CodeTTL)) {
			t.Fatalf("expiry %v", exp)
		}
		seen[code] = true
	}
	if len(seen) < 199 {
		t.Fatalf("only %d distinct codes in 200", len(seen))
	}
	if ok, exp := c.Active(); !ok || !exp.Equal(clk.now().Add(CodeTTL)) {
		t.Fatalf("Active = %v %v", ok, exp)
	}
}

const port = 47100

func nonce(b byte) []byte { return bytes.Repeat([]byte{b}, NonceSize) }

// run plays one handshake between s and cl and returns the error of the
// side that refused, if any.
func run(t *testing.T, s *Server, cl *Client, serverPort int) (Key, error) {
	t.Helper()
	v, mode, ne := cl.Hello()
	h, err := s.Begin(v, mode, serverPort, ne)
	if err != nil {
		return Key{}, fmt.Errorf("companion: %w", err)
	}
	nc, proof := h.Challenge()
	if _, _, ok := h.Delivery(); ok {
		t.Fatal("the key is available before the extension proved anything")
	}
	answer, err := cl.Answer(nc, proof)
	if err != nil {
		return Key{}, fmt.Errorf("extension: %w", err)
	}
	if err := h.Verify(answer); err != nil {
		return Key{}, fmt.Errorf("companion: %w", err)
	}
	wrapped, kp, ok := h.Delivery()
	if mode == ModeKey {
		if ok {
			t.Fatal("a key-mode handshake delivers the key")
		}
		return Key{}, nil
	}
	if !ok {
		t.Fatal("no key delivery after a proven code")
	}
	return cl.Receive(wrapped, kp)
}

func TestKeyHandshake(t *testing.T) {
	k := NewKey()
	s := NewServer(k, nil)
	if _, err := run(t, s, NewKeyClient(k, port), port); err != nil {
		t.Fatalf("the right key: %v", err)
	}
	// A fake companion (another key) is refused by the extension before
	// the extension proves anything; an extension with another key is
	// refused by the real companion's check of the same mismatch.
	_, err := run(t, NewServer(NewKey(), nil), NewKeyClient(k, port), port)
	if !errors.Is(err, ErrBadProof) || !strings.HasPrefix(err.Error(), "extension:") {
		t.Fatalf("a companion with another key: %v", err)
	}
	// A relay on another port: the extension dialled 47101, the companion
	// listens on 47100.
	if _, err := run(t, s, NewKeyClient(k, port+1), port); !errors.Is(err, ErrBadProof) {
		t.Fatalf("a relay on another port: %v", err)
	}
}

func TestKeyHandshakeRefusesForgedAndReplayedProofs(t *testing.T) {
	k := NewKey()
	s := NewServer(k, nil)
	// A recorded run: the attacker saw a real extension's proof.
	cl := NewKeyClient(k, port)
	v, mode, ne := cl.Hello()
	h1, _ := s.Begin(v, mode, port, ne)
	nc, proof := h1.Challenge()
	recorded, err := cl.Answer(nc, proof)
	if err != nil {
		t.Fatal(err)
	}
	// Replayed with the same extension nonce: the companion's nonce is new.
	h2, err := s.Begin(v, mode, port, ne)
	if err != nil {
		t.Fatal(err)
	}
	if nc2, _ := h2.Challenge(); bytes.Equal(nc, nc2) {
		t.Fatal("the companion reused its nonce")
	}
	if err := h2.Verify(recorded); !errors.Is(err, ErrBadProof) {
		t.Fatalf("replayed proof: %v", err)
	}
	// The companion's own proof reflected back as the extension's.
	h3, _ := s.Begin(v, mode, port, ne)
	_, reflected := h3.Challenge()
	if err := h3.Verify(reflected); !errors.Is(err, ErrBadProof) {
		t.Fatalf("reflected proof: %v", err)
	}
	for _, forged := range [][]byte{nil, {}, make([]byte, 32), bytes.Repeat([]byte{0xff}, 64)} {
		h, _ := s.Begin(v, mode, port, ne)
		if err := h.Verify(forged); !errors.Is(err, ErrBadProof) {
			t.Fatalf("forged proof %x: %v", forged, err)
		}
	}
}

func TestBeginRefusesBadHellos(t *testing.T) {
	s := NewServer(NewKey(), NewCodes(nil))
	for _, tc := range []struct {
		name  string
		v     int
		mode  string
		port  int
		nonce []byte
		want  error
	}{
		{"version 0", 0, ModeKey, port, nonce(1), ErrBadHello},
		{"version 2", 2, ModeKey, port, nonce(1), ErrBadHello},
		{"no nonce", 1, ModeKey, port, nil, ErrBadHello},
		{"short nonce", 1, ModeKey, port, nonce(1)[:16], ErrBadHello},
		{"unknown mode", 1, "token", port, nonce(1), ErrBadHello},
		{"no mode", 1, "", port, nonce(1), ErrBadHello},
		{"code without a code", 1, ModeCode, port, nonce(1), ErrNoCode},
	} {
		if _, err := s.Begin(tc.v, tc.mode, tc.port, tc.nonce); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := s.Begin(1, ModeKey, 0, nonce(1)); err == nil {
		t.Error("port 0 accepted")
	}
	if _, err := NewServer(NewKey(), nil).Begin(1, ModeCode, port, nonce(1)); !errors.Is(err, ErrNoCode) {
		t.Errorf("code mode without codes: %v", err)
	}
}

func TestCodeHandshake(t *testing.T) {
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	k := NewKey()
	codes := NewCodes(clk.now)
	s := NewServer(k, codes)

	t.Run("right code delivers the key", func(t *testing.T) {
		clk.add(CodeAttemptWindow) // a fresh rate window per case
		code, _ := codes.Issue()
		cl, err := NewCodeClient(strings.ToLower(strings.ReplaceAll(code, "-", " ")), port)
		if err != nil {
			t.Fatal(err)
		}
		got, err := run(t, s, cl, port)
		if err != nil || got != k {
			t.Fatalf("got the key %v, %v", got == k, err)
		}
		if ok, _ := codes.Active(); ok {
			t.Fatal("the code is still active after use")
		}
	})
	t.Run("single use", func(t *testing.T) {
		clk.add(CodeAttemptWindow) // a fresh rate window per case
		code, _ := codes.Issue()
		cl, _ := NewCodeClient(code, port)
		if _, err := run(t, s, cl, port); err != nil {
			t.Fatal(err)
		}
		again, _ := NewCodeClient(code, port)
		if _, err := run(t, s, again, port); !errors.Is(err, ErrNoCode) {
			t.Fatalf("second use: %v", err)
		}
	})
	t.Run("wrong code burns it", func(t *testing.T) {
		clk.add(CodeAttemptWindow) // a fresh rate window per case
		code, _ := codes.Issue()
		wrong := "0000000000"
		if strings.ReplaceAll(code, "-", "") == wrong {
			wrong = "1111111111"
		}
		cl, _ := NewCodeClient(wrong, port)
		// The companion proves the real code first: the extension sees the
		// mismatch and proves nothing.
		if _, err := run(t, s, cl, port); !errors.Is(err, ErrBadProof) || !strings.HasPrefix(err.Error(), "extension:") {
			t.Fatalf("wrong code: %v", err)
		}
		right, _ := NewCodeClient(code, port)
		if _, err := run(t, s, right, port); !errors.Is(err, ErrNoCode) {
			t.Fatalf("the code survived a failed attempt: %v", err)
		}
	})
	t.Run("an attacker who started the handshake gets no key", func(t *testing.T) {
		clk.add(CodeAttemptWindow) // a fresh rate window per case
		codes.Issue()
		h, err := s.Begin(Version, ModeCode, port, nonce(9))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Verify(make([]byte, 32)); !errors.Is(err, ErrBadProof) {
			t.Fatal(err)
		}
		if _, _, ok := h.Delivery(); ok {
			t.Fatal("the key was delivered without a proof")
		}
	})
	t.Run("expiry", func(t *testing.T) {
		clk.add(CodeAttemptWindow) // a fresh rate window per case
		code, _ := codes.Issue()
		clk.add(CodeTTL)
		cl, _ := NewCodeClient(code, port)
		if _, err := run(t, s, cl, port); !errors.Is(err, ErrNoCode) {
			t.Fatalf("expired code: %v", err)
		}
		code, _ = codes.Issue()
		clk.add(CodeTTL - time.Second)
		cl, _ = NewCodeClient(code, port)
		if _, err := run(t, s, cl, port); err != nil {
			t.Fatalf("a code one second before expiry: %v", err)
		}
	})
	t.Run("a newer code replaces the older", func(t *testing.T) {
		clk.add(CodeAttemptWindow) // a fresh rate window per case
		old, _ := codes.Issue()
		codes.Issue()
		cl, _ := NewCodeClient(old, port)
		if _, err := run(t, s, cl, port); !errors.Is(err, ErrBadProof) {
			t.Fatalf("the replaced code: %v", err)
		}
	})
	t.Run("relay on another port", func(t *testing.T) {
		clk.add(CodeAttemptWindow) // a fresh rate window per case
		code, _ := codes.Issue()
		cl, _ := NewCodeClient(code, port+1)
		if _, err := run(t, s, cl, port); !errors.Is(err, ErrBadProof) {
			t.Fatalf("relay: %v", err)
		}
	})
}

func TestCodeAttemptsAreRateLimited(t *testing.T) {
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	codes := NewCodes(clk.now)
	s := NewServer(NewKey(), codes)
	for i := range MaxCodeAttempts {
		if _, err := s.Begin(Version, ModeCode, port, nonce(byte(i))); !errors.Is(err, ErrNoCode) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	code, _ := codes.Issue()
	if _, err := s.Begin(Version, ModeCode, port, nonce(1)); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("attempt over the limit: %v", err)
	}
	// The refused attempt did not burn the person's code.
	if ok, _ := codes.Active(); !ok {
		t.Fatal("a rate-limited attempt burned the code")
	}
	// Key-mode handshakes are not counted.
	if _, err := s.Begin(Version, ModeKey, port, nonce(1)); err != nil {
		t.Fatal(err)
	}
	clk.add(CodeAttemptWindow)
	cl, _ := NewCodeClient(code, port)
	if _, err := run(t, s, cl, port); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// vectors are the shared contract with extension/lib/linkauth.js: the
// extension's node tests read the same file.
type vectors struct {
	Key            []byte `json:"key"`
	Port           int    `json:"port"`
	ExtensionNonce []byte `json:"extensionNonce"`
	CompanionNonce []byte `json:"companionNonce"`
	KeyMode        struct {
		CompanionProof []byte `json:"companionProof"`
		ExtensionProof []byte `json:"extensionProof"`
		// CompanionProofOtherPort is the proof a companion on Port+1
		// makes: a relay there never matches.
		CompanionProofOtherPort []byte `json:"companionProofOtherPort"`
	} `json:"keyMode"`
	CodeMode struct {
		Code           string   `json:"code"`
		Typed          []string `json:"typed"`
		Invalid        []string `json:"invalid"`
		CompanionProof []byte   `json:"companionProof"`
		ExtensionProof []byte   `json:"extensionProof"`
		WrappedKey     []byte   `json:"wrappedKey"`
		KeyProof       []byte   `json:"keyProof"`
	} `json:"codeMode"`
}

const vectorsPath = "../wire/testdata/link_auth.json"

func makeVectors() vectors {
	var v vectors
	v.Key = bytes.Repeat([]byte{0x42}, KeySize)
	for i := range v.Key {
		v.Key[i] = byte(i*7 + 3)
	}
	v.Port = 47100
	v.ExtensionNonce = nonce(0xe1)
	v.CompanionNonce = nonce(0xc2)
	v.KeyMode.CompanionProof = mac(v.Key, labelCompanion, v.Port, v.ExtensionNonce, v.CompanionNonce)
	v.KeyMode.ExtensionProof = mac(v.Key, labelExtension, v.Port, v.ExtensionNonce, v.CompanionNonce)
	v.KeyMode.CompanionProofOtherPort = mac(v.Key, labelCompanion, v.Port+1, v.ExtensionNonce, v.CompanionNonce)
	v.CodeMode.Code = "7K3QH-W2M9X"
	v.CodeMode.Typed = []string{"7K3QH-W2M9X", "7k3qh w2m9x", "7K3QHW2M9X", " 7k3qh-w2m9x "}
	v.CodeMode.Invalid = []string{"7K3QH-W2M9", "7K3QH-W2M9XX", "7K3QH-W2M9U", "7K3QH_W2M9X"}
	ck := codeKey("7K3QHW2M9X", v.Port, v.ExtensionNonce, v.CompanionNonce)
	v.CodeMode.CompanionProof = mac(ck, labelCompanion, v.Port, v.ExtensionNonce, v.CompanionNonce)
	v.CodeMode.ExtensionProof = mac(ck, labelExtension, v.Port, v.ExtensionNonce, v.CompanionNonce)
	v.CodeMode.WrappedKey = xor(v.Key, mac(ck, labelWrap, v.Port, v.ExtensionNonce, v.CompanionNonce))
	v.CodeMode.KeyProof = v.KeyMode.CompanionProof
	return v
}

func TestVectors(t *testing.T) {
	want := makeVectors()
	if *update {
		data, _ := json.MarshalIndent(want, "", "  ")
		if err := os.WriteFile(vectorsPath, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var got vectors
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if !bytes.Equal(wantJSON, gotJSON) {
		t.Fatalf("%s is out of date; run go test ./companion/linkauth -run TestVectors -update", vectorsPath)
	}
	// The vectors drive the real client and server code too.
	k, _ := KeyFromBytes(got.Key)
	cl := &Client{mode: ModeKey, port: got.Port, ne: got.ExtensionNonce, key: k}
	proof, err := cl.Answer(got.CompanionNonce, got.KeyMode.CompanionProof)
	if err != nil || !bytes.Equal(proof, got.KeyMode.ExtensionProof) {
		t.Fatalf("key mode: %x %v", proof, err)
	}
	for _, typed := range got.CodeMode.Typed {
		ccl, err := NewCodeClient(typed, got.Port)
		if err != nil {
			t.Fatalf("%q: %v", typed, err)
		}
		ccl.ne = got.ExtensionNonce
		proof, err := ccl.Answer(got.CompanionNonce, got.CodeMode.CompanionProof)
		if err != nil || !bytes.Equal(proof, got.CodeMode.ExtensionProof) {
			t.Fatalf("code mode %q: %v", typed, err)
		}
		rk, err := ccl.Receive(got.CodeMode.WrappedKey, got.CodeMode.KeyProof)
		if err != nil || rk != k {
			t.Fatalf("unwrapping: %v", err)
		}
	}
	for _, typed := range got.CodeMode.Invalid {
		if _, err := NormalizeCode(typed); err == nil {
			t.Fatalf("%q accepted", typed)
		}
	}
}
