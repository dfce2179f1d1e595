//go:build !unix

package nativemsg

func getsid() (int, error) { return -1, nil }
