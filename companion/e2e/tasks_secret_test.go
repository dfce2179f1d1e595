package e2e

import (
	"crypto/rand"
	"strings"
	"sync"
)

// secret is a value a task's server makes up for each run of the suite,
// for its page to hand out in a way only the capability under test can
// reach, and for its handler to check.
type secret struct {
	mu sync.Mutex
	v  string
}

// renew makes a new value: prefix and ten random letters and digits.
func (s *secret) renew(prefix string) {
	s.mu.Lock()
	s.v = prefix + strings.ToUpper(rand.Text()[:10])
	s.mu.Unlock()
}

func (s *secret) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v
}

// is reports whether v is the value, which is never empty.
func (s *secret) is(v string) bool {
	want := s.get()
	return want != "" && v == want
}
