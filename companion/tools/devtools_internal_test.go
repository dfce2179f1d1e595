package tools

import "testing"

func TestURLMatcher(t *testing.T) {
	for _, c := range []struct {
		pattern, url string
		want         bool
	}{
		{"/api/order", "http://127.0.0.1:1/api/order?x=1", true},
		{"/dt/api?", "http://127.0.0.1:1/dt/apipage", false}, // not a regexp: ? is text
		{"/dt/api?", "http://127.0.0.1:1/dt/api?code=1", true},
		{"a.b", "http://axb/", false},
		{`/orders/\d+$/`, "http://h/orders/42", true},
		{`/orders/\d+$/`, "http://h/orders/x", false},
		{"/(/", "http://h/(/", true}, // not a valid regexp: text
	} {
		if got := urlMatcher(c.pattern)(c.url); got != c.want {
			t.Errorf("urlMatcher(%q)(%q) = %v", c.pattern, c.url, got)
		}
	}
}

func TestCookieDomainMatching(t *testing.T) {
	for _, c := range []struct {
		host, domain string
		want         bool
	}{
		{"a.example.com", ".example.com", true},
		{"example.com", "example.com", true},
		{"badexample.com", "example.com", false},
		{"example.com", "a.example.com", false},
		{"", "example.com", false},
		{"example.com", "", false},
	} {
		if got := domainMatches(c.host, c.domain); got != c.want {
			t.Errorf("domainMatches(%q, %q) = %v", c.host, c.domain, got)
		}
	}
	if !sameCookieSite("http://127.0.0.1:1/x", "https://127.0.0.1:9/") || sameCookieSite("http://localhost/", "http://127.0.0.1/") || sameCookieSite("file:///etc/passwd", "file:///etc/") {
		t.Error("sameCookieSite")
	}
}
