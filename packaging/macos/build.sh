#!/usr/bin/env bash
# Builds Reins.app and a drag-to-Applications .dmg. Runs on a Mac only:
# Fyne needs cgo against Apple's frameworks, and codesign, notarytool and
# hdiutil exist nowhere else. The Linux CI does not run this script.
#
#   packaging/macos/build.sh [OUTDIR]          (default: dist)
#
# Needs: macOS 12 or later, Xcode command-line tools (clang, codesign,
# xcrun), Go as in go.mod. The fyne CLI is installed into bin/tools at the
# version the Makefile pins.
#
# Signing and notarization happen when these are set:
#   MACOS_SIGN_IDENTITY   "Developer ID Application: Your Name (TEAMID)", a
#                         certificate in the login keychain
#   MACOS_NOTARY_PROFILE  a notarytool keychain profile, made once with
#                         xcrun notarytool store-credentials PROFILE \
#                           --apple-id you@example.com --team-id TEAMID
# Without them the app is ad-hoc signed: it runs on the Mac that built it,
# and elsewhere only after right-click > Open.
set -euo pipefail

[ "$(uname -s)" = Darwin ] || { echo "packaging/macos/build.sh runs on macOS only" >&2; exit 1; }

out=${1:-dist}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
mkdir -p "$out"
out=$(cd "$out" && pwd)

go run ./packaging/cmd/extpack check
version=$(go run ./packaging/cmd/extpack version)
build=$(sed -n 's/^ *Build *= *\([0-9]*\).*/\1/p' FyneApp.toml)
app_id=$(sed -n 's/^ *ID *= *"\(.*\)"/\1/p' FyneApp.toml)
fyne_version=$(sed -n 's/^FYNE_CLI_VERSION := //p' Makefile)
fyne=$root/bin/tools/fyne-$fyne_version/fyne
[ -x "$fyne" ] || GOBIN=$(dirname "$fyne") go install "fyne.io/tools/cmd/fyne@$fyne_version"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One universal binary: Apple silicon and Intel Macs both run the same .app.
# 11.0 is the oldest macOS the Go toolchain in go.mod still supports.
export MACOSX_DEPLOYMENT_TARGET=11.0
ldflags="-s -w -X github.com/reinshq/reins/app.Version=$version"
for arch in arm64 amd64; do
	clang_arch=$arch
	[ "$arch" = amd64 ] && clang_arch=x86_64
	CGO_ENABLED=1 GOOS=darwin GOARCH=$arch CC="clang -arch $clang_arch" \
		go build -trimpath -ldflags "$ldflags" -o "$work/reins-$arch" ./cmd/reins
done
lipo -create -output "$work/reins" "$work/reins-arm64" "$work/reins-amd64"

(cd "$work" && "$fyne" package --os darwin --src "$root/cmd/reins" --exe "$work/reins" --name Reins \
	--app-id "$app_id" --app-version "$version" --app-build "$build" --icon "$root/assets/icon.png" --release)
app=$work/Reins.app
plist=$app/Contents/Info.plist
# Reins lives in the menu bar: no Dock icon, no app menu (LSUIElement).
/usr/libexec/PlistBuddy -c "Add :LSUIElement bool true" "$plist" 2>/dev/null ||
	/usr/libexec/PlistBuddy -c "Set :LSUIElement true" "$plist"
# The extension folder, for "Load unpacked" in Chromium browsers.
go run ./packaging/cmd/extpack copy -o "$app/Contents/Resources/extension" >/dev/null

identity=${MACOS_SIGN_IDENTITY:--}
if [ "$identity" = - ]; then
	echo "MACOS_SIGN_IDENTITY is not set: ad-hoc signing (runs here; Gatekeeper blocks it elsewhere)"
fi
# Hardened runtime (--options runtime) is required for notarization. A Go
# binary needs no entitlements under it: no JIT, no unsigned libraries,
# and the keychain is reached through Security.framework as any app does.
# Sign inside out: the executable, then the bundle.
codesign --force --options runtime --timestamp --sign "$identity" "$app/Contents/MacOS/reins"
codesign --force --options runtime --timestamp --sign "$identity" "$app"
codesign --verify --strict --verbose=2 "$app"

dmg=$out/Reins-$version-macos-universal.dmg
stage=$work/dmg
mkdir -p "$stage"
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
hdiutil create -volname "Reins $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$dmg"
[ "$identity" = - ] || codesign --force --timestamp --sign "$identity" "$dmg"

if [ -n "${MACOS_NOTARY_PROFILE:-}" ]; then
	[ "$identity" != - ] || { echo "notarization needs MACOS_SIGN_IDENTITY (a Developer ID certificate)" >&2; exit 1; }
	# Apple notarizes the .dmg and everything in it; stapling attaches the
	# ticket so Gatekeeper accepts the download offline too.
	xcrun notarytool submit "$dmg" --keychain-profile "$MACOS_NOTARY_PROFILE" --wait
	xcrun stapler staple "$dmg"
	xcrun stapler validate "$dmg"
	spctl --assess --type open --context context:primary-signature --verbose=2 "$dmg"
fi
echo "built $dmg ($(du -h "$dmg" | cut -f1))"
