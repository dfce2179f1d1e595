#!/usr/bin/env bash
# Cross-builds reins.exe with mingw-w64 and packs the per-user NSIS installer.
#
#   packaging/windows/build.sh OUTDIR
#
# Needs: x86_64-w64-mingw32-gcc, makensis, go-winres (GOWINRES, installed by
# `make dist` into bin/tools), and osslsigncode when signing.
# Signing happens when SIGN_CERT (PEM or DER certificate chain) and SIGN_KEY
# (its private key) are set; SIGN_PASS_FILE names a file holding the key's
# passphrase and SIGN_TIMESTAMP_URL an RFC 3161 server (release builds should
# use one so signatures outlive the certificate).
set -euo pipefail

out=${1:?usage: build.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
mkdir -p "$out"
out=$(cd "$out" && pwd)

gowinres=${GOWINRES:-$root/bin/tools/go-winres}
version=$(go run ./packaging/cmd/extpack version)
build=$(sed -n 's/^ *Build *= *\([0-9]*\).*/\1/p' FyneApp.toml)
# VIProductVersion and the PE version resource take exactly four numbers.
IFS=. read -r -a parts <<<"$version"
while [ "${#parts[@]}" -lt 4 ]; do parts+=(0); done
viversion=$(IFS=.; echo "${parts[*]:0:4}")

# The resource object (.syso) must sit beside a main package, and cmd/reins
# belongs to the app: build from a copy under dist/, inside the module (so
# imports resolve) and under a name starting with "_" (so ./... skips it).
work=$root/dist/_winbuild
rm -rf "$work"
mkdir -p "$work/reins" "$work/gen"
trap 'rm -rf "$work"' EXIT
find cmd/reins -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "$work/reins/" \;

go run ./packaging/cmd/mkico -o "$work/reins.ico" assets/icon.png
"$gowinres" simply --arch amd64 --out "$work/reins/rsrc" --manifest gui \
	--icon "$work/reins.ico" --product-name Reins --file-description Reins \
	--original-filename reins.exe --copyright "Reins authors" \
	--product-version "$viversion" --file-version "$viversion"

echo "cross-compiling reins.exe $version (mingw-w64, cgo; Fyne takes minutes on a cold cache)"
CC=x86_64-w64-mingw32-gcc CGO_ENABLED=1 GOOS=windows GOARCH=amd64 \
	go build -trimpath -ldflags "-H windowsgui -s -w -X github.com/reinshq/reins/app.Version=$version" \
	-o "$work/reins.exe" ./dist/_winbuild/reins

sign=()
if [ -n "${SIGN_CERT:-}" ] || [ -n "${SIGN_KEY:-}" ]; then
	: "${SIGN_CERT:?SIGN_KEY is set but SIGN_CERT is not}" "${SIGN_KEY:?SIGN_CERT is set but SIGN_KEY is not}"
	"$here/sign.sh" "$work/reins.exe"
	sign=(-DSIGN="$here/sign.sh")
fi

go run ./packaging/cmd/nmhosts windows -path reins-native-host.cmd -out "$work/gen"
cp "$here/reins-native-host.cmd" "$work/gen/"
go run ./packaging/cmd/extpack copy -o "$work/extension" >/dev/null

installer=$out/Reins-$version-windows-amd64-setup.exe
makensis -V2 -WX -NOCD \
	-DVERSION="$version" -DVIVERSION="$viversion" -DEXE="$work/reins.exe" \
	-DICON="$work/reins.ico" -DEXTDIR="$work/extension" -DGENERATED="$work/gen" \
	-DOUTFILE="$installer" "${sign[@]}" "$here/reins.nsi"
echo "built $installer ($(du -h "$installer" | cut -f1)), reins.exe $(du -h "$work/reins.exe" | cut -f1)${sign:+, signed}"
