// Package keychaintest owns the integration tests of companion/tokens
// against a real Secret Service (gnome-keyring). It has no code of its own.
//
// Run them on a private session bus with an unlocked keyring:
//
//	dbus-run-session -- sh -c 'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; go test ./companion/tokens/keychaintest/'
//
// (make test-keychain does this). Without a reachable Secret Service they
// fail: a keychain that silently isn't there is exactly the bug they guard.
package keychaintest
