#!/usr/bin/env bash
# Builds dist/reins_VERSION_ARCH.deb from an already built binary.
#
#   packaging/linux/build-deb.sh BINARY OUTDIR
#
# Only dpkg-deb and dpkg-shlibdeps (dpkg-dev) are needed: no debhelper, no
# source package. The layout:
#   /usr/bin/reins                              the app (tray, CLI, host)
#   /usr/lib/reins/reins-native-host            what browser manifests name
#   /usr/share/applications/reins.desktop
#   /usr/share/icons/hicolor/NxN/apps/reins.png from assets/
#   /usr/share/reins/extension/                 the extension, for "Load unpacked"
#   /usr/share/reins/reins.crx                  the packed extension (with REINS_CRX_KEY)
#   /usr/share/chromium/extensions/ID.json, …   external-extensions files: Chromium,
#                                               Chrome, Edge, Brave and Vivaldi offer
#                                               Reins from the .crx at their next start
#   /etc/opt/chrome/…, /etc/chromium/…, /etc/opt/edge/…, … native messaging
#   /usr/lib/mozilla/native-messaging-hosts/    manifests (conffiles)
set -euo pipefail

bin=${1:?usage: build-deb.sh BINARY OUTDIR}
out=${2:?usage: build-deb.sh BINARY OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

version=$(go run ./packaging/cmd/extpack version)
arch=$(dpkg --print-architecture)
[ -x "$bin" ] || { echo "build-deb: $bin is not an executable" >&2; exit 1; }

# The stage sits in a debian/ tree so dpkg-shlibdeps finds the binary where
# it expects a package's files and does not warn.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debian"
stage="$work/debian/reins"
umask 022

install -D -m 0755 "$bin" "$stage/usr/bin/reins"
install -D -m 0755 "$here/reins-native-host" "$stage/usr/lib/reins/reins-native-host"
install -D -m 0644 "$here/reins.desktop" "$stage/usr/share/applications/reins.desktop"

# Icons go to the hicolor size their pixels say, so adding a size to assets/
# needs no change here.
for png in assets/icon.png assets/icon_[0-9]*.png; do
	[ -f "$png" ] || continue
	size=$(od -An -tu1 -j16 -N8 "$png" | awk '{print $3*256+$4 "x" $7*256+$8}')
	install -D -m 0644 "$png" "$stage/usr/share/icons/hicolor/$size/apps/reins.png"
done

# The unpacked extension keeps its manifest "key", so Chromium gives it the
# same id as the store build and the native host manifests allow it.
go run ./packaging/cmd/extpack copy -o "$stage/usr/share/reins/extension"

# The packed extension, signed with the key whose path REINS_CRX_KEY holds
# (the release key is never in the repository; `make test-dist` makes a
# throwaway one). Each Chromium-family browser reads ID.json files in its
# external-extensions dir and offers the extension from the .crx they name
# at its next start. Without a key the package ships no .crx, and the
# first-run guide falls back to "Load unpacked" with the folder above.
crx_id=""
if [ -n "${REINS_CRX_KEY:-}" ]; then
	crx_id=$(go run ./packaging/cmd/extpack crx -o "$stage/usr/share/reins/reins.crx")
	prefs=$(go run ./packaging/cmd/extpack external-prefs -crx /usr/share/reins/reins.crx)
	for dir in $(go run ./packaging/cmd/extpack external-dirs); do
		install -d -m 0755 "$stage$dir"
		printf '%s\n' "$prefs" >"$stage$dir/$crx_id.json"
		chmod 0644 "$stage$dir/$crx_id.json"
	done
	echo "build-deb: packed extension $crx_id"
else
	echo "build-deb: REINS_CRX_KEY is not set: no packed extension (browsers will need Load unpacked)" >&2
fi

# dpkg removes files under /etc on purge only when they are conffiles, and
# policy wants every shipped /etc file listed: a person who edits one (to
# allow a second extension id, say) keeps the edit across upgrades. A .crx
# signed with another key than the release one has another id, which the
# manifests must allow too.
mkdir -p "$stage/DEBIAN"
allow=()
pinned=$(go run ./packaging/cmd/extpack keyid)
if [ -n "$crx_id" ] && [ "$crx_id" != "$pinned" ]; then
	echo "build-deb: the .crx key is not the release key ($crx_id, not $pinned): allowing it in the host manifests" >&2
	allow=(-allow-extension "$crx_id")
fi
go run ./packaging/cmd/nmhosts linux -path /usr/lib/reins/reins-native-host -root "$stage" "${allow[@]}" \
	| grep '^/etc/' >"$stage/DEBIAN/conffiles" || true

depends=$(cd "$work" && printf 'Source: reins\n\nPackage: reins\nArchitecture: any\n' >debian/control &&
	dpkg-shlibdeps -O -e"$stage/usr/bin/reins" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

# GLFW, Fyne's window layer, dlopens these X11 libraries rather than linking
# them, so they are missing from NEEDED and dpkg-shlibdeps cannot see them;
# without them the tray app loses cursors, multi-monitor layout, input and
# gamma. The binary names each one it may load, so only those are added.
for so in libXcursor.so.1 libXrandr.so.2 libXinerama.so.1 libXi.so.6 libXxf86vm.so.1; do
	grep -qaF "$so" "$stage/usr/bin/reins" || continue
	pkg=$(dpkg -S "*/$so" 2>/dev/null | head -n1 | cut -d: -f1)
	[ -n "$pkg" ] || { echo "build-deb: the binary may dlopen $so, but no installed package ships it" >&2; exit 1; }
	case ", $depends," in *", $pkg,"* | *", $pkg "*) ;; *) depends="$depends, $pkg" ;; esac
done

website=$(sed -n 's/^ *Website *= *"\(.*\)"/\1/p' FyneApp.toml)
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: reins
Version: $version
Architecture: $arch
Maintainer: Reins <reins@reins.dev>
Installed-Size: $size
Depends: $depends
Recommends: gnome-keyring
Suggests: chromium | google-chrome-stable | firefox-esr | firefox
Section: net
Priority: optional
Homepage: $website
Description: let AI agents drive your logged-in browser, with you in control
 Reins is a tray app that runs a local companion on 127.0.0.1. The Reins
 browser extension connects to it from every browser profile, and AI
 agents (Claude Code, Cursor, Claude Desktop, any MCP client) reach it
 with a token you issue. You can pause every agent from the tray, see who
 is connected and watch or take over any shared tab.
 .
 Tokens are kept in the desktop keychain (Secret Service), hence the
 recommendation of gnome-keyring; KWallet works too.
EOF

(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/"*

mkdir -p "$out"
deb="$out/reins_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "built $deb ($(du -h "$deb" | cut -f1)), Depends: $depends"
