#!/usr/bin/env bash
# Authenticode-signs one PE file in place with osslsigncode.
#
#   SIGN_CERT=cert.pem SIGN_KEY=key.pem packaging/windows/sign.sh FILE
#
# makensis calls it for the uninstaller and the installer (!uninstfinalize,
# !finalize); build.sh calls it for reins.exe. Optional: SIGN_PASS_FILE (the
# key's passphrase, read from a file so it never shows in a process list),
# SIGN_TIMESTAMP_URL (an RFC 3161 server).
set -euo pipefail
f=${1:?usage: sign.sh FILE}
args=(sign -certs "${SIGN_CERT:?}" -key "${SIGN_KEY:?}" -h sha256 -n Reins -i https://github.com/reinshq/reins)
[ -z "${SIGN_PASS_FILE:-}" ] || args+=(-readpass "$SIGN_PASS_FILE")
[ -z "${SIGN_TIMESTAMP_URL:-}" ] || args+=(-ts "$SIGN_TIMESTAMP_URL")
osslsigncode "${args[@]}" -in "$f" -out "$f.signed" >/dev/null
mv -f "$f.signed" "$f"
