package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
)

// Chromium names an extension by the first 128 bits of a SHA-256, written
// in hex with the digits 0-f replaced by the letters a-p.
func idFromHash(sum [sha256.Size]byte) string {
	h := hex.EncodeToString(sum[:16])
	var b strings.Builder
	for _, c := range h {
		if c >= 'a' {
			b.WriteByte(byte('a' + 10 + c - 'a'))
		} else {
			b.WriteByte(byte('a' + c - '0'))
		}
	}
	return b.String()
}

// unpackedID is the id Chromium gives an extension loaded unpacked from dir
// when its manifest has no "key": a hash of the absolute path. Chromium makes
// the path absolute and resolves symlinks first, so this does too; on Linux
// the path bytes are hashed as they are (Windows hashes UTF-16, not handled
// here because the tests run Chromium on Linux only).
func unpackedID(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	return idFromHash(sha256.Sum256([]byte(real))), nil
}

// keyID is the id that the manifest "key" (a base64 DER public key) pins.
func keyID(key string) (string, error) {
	der, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return "", fmt.Errorf("manifest key is not base64: %w", err)
	}
	return idFromHash(sha256.Sum256(der)), nil
}
