package admin

import (
	"errors"
	"fmt"
	"testing"
)

func TestLiveViewURLOverTheChannel(t *testing.T) {
	dir := shortDir(t)
	var asked []int
	serve(t, dir, Options{LiveViewURL: func(tab int) (string, error) {
		asked = append(asked, tab)
		if tab == 9 {
			return "", errors.New("tab 9 is not shared with Reins")
		}
		return fmt.Sprintf("http://127.0.0.1:47100/live/%d?ticket=T", tab), nil
	}})
	c := NewClient(dir)
	defer c.Close()
	u, err := c.LiveViewURL(ctx(t), 7)
	if err != nil || u != "http://127.0.0.1:47100/live/7?ticket=T" {
		t.Fatalf("LiveViewURL(7) = %q, %v", u, err)
	}
	_, err = c.LiveViewURL(ctx(t), 9)
	if !errors.Is(err, ErrBadRequest) || err.Error() == "" {
		t.Fatalf("unshared tab: %v, want a bad request naming the reason", err)
	}
	if len(asked) != 2 {
		t.Fatalf("companion asked %v", asked)
	}
}

func TestLiveViewURLNeedsACompanionThatHasIt(t *testing.T) {
	dir := shortDir(t)
	serve(t, dir, Options{})
	c := NewClient(dir)
	defer c.Close()
	if _, err := c.LiveViewURL(ctx(t), 7); !errors.Is(err, ErrNotImplemented) {
		t.Fatalf("got %v, want not implemented", err)
	}
}

func TestLiveViewOpenURLOverTheChannel(t *testing.T) {
	dir := shortDir(t)
	serve(t, dir, Options{
		LiveViewURL:     func(tab int) (string, error) { return fmt.Sprintf("http://127.0.0.1:47100/live/%d?ticket=T", tab), nil },
		LiveViewOpenURL: func(tab int) (string, error) { return fmt.Sprintf("file:///data/live/live-%d.html", tab), nil },
	})
	c := NewClient(dir)
	defer c.Close()
	u, err := c.LiveViewOpenURL(ctx(t), 7)
	if err != nil || u != "file:///data/live/live-7.html" {
		t.Fatalf("LiveViewOpenURL(7) = %q, %v", u, err)
	}
	if u, err := c.LiveViewURL(ctx(t), 7); err != nil || u != "http://127.0.0.1:47100/live/7?ticket=T" {
		t.Fatalf("LiveViewURL(7) = %q, %v", u, err)
	}
	var out LiveView
	if err := c.do(ctx(t), "POST", "/v1/live/7?as=qr", nil, &out); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("an unknown form: %v, want a bad request", err)
	}
}
