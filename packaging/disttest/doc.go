// Package disttest checks the built installers the way a person meets them:
// it installs the .deb with dpkg and runs the installed binary, inspects
// and verifies the signed Windows installer, and loads the store build of
// the extension into real Chromium against a real companion.
//
// The tests install and remove system packages, so they only build with the
// disttest tag and only run from `make test-dist`, which builds the packages
// into REINS_DIST_DIR first (signed with a throwaway certificate).
package disttest
