//go:build !unix

package devbrowser

func setuidRoot(string) bool { return false }
