package main

import (
	"archive/zip"
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readProto splits a protobuf message into its length-delimited fields,
// the way Chromium's verifier reads CrxFileHeader; any other wire type is
// an error here, because a CRX header has none.
func readProto(t *testing.T, b []byte) map[uint64][][]byte {
	t.Helper()
	out := map[uint64][][]byte{}
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 || tag&7 != 2 {
			t.Fatalf("bad tag %d", tag)
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			t.Fatalf("bad length")
		}
		out[tag>>3] = append(out[tag>>3], b[n:n+int(l)])
		b = b[n+int(l):]
	}
	return out
}

// verifyCRX checks a CRX3 file as Chromium does and returns its id and
// archive.
func verifyCRX(t *testing.T, crx []byte) (string, []byte) {
	t.Helper()
	if string(crx[:4]) != crxMagic || binary.LittleEndian.Uint32(crx[4:8]) != 3 {
		t.Fatalf("not a CRX3: % x", crx[:8])
	}
	hl := binary.LittleEndian.Uint32(crx[8:12])
	header, archive := crx[12:12+hl], crx[12+hl:]
	fields := readProto(t, header)
	if len(fields[fieldSHA256WithRSA]) != 1 || len(fields[fieldSignedHeader]) != 1 {
		t.Fatalf("header fields: %v", fields)
	}
	proof := readProto(t, fields[fieldSHA256WithRSA][0])
	pubDER, sig := proof[fieldProofPublicKey][0], proof[fieldProofSignature][0]
	signed := fields[fieldSignedHeader][0]
	id, raw := crxID(pubDER)
	if got := readProto(t, signed)[fieldSignedDataCrxID][0]; !bytes.Equal(got, raw) {
		t.Fatalf("signed crx_id %x, want %x", got, raw)
	}
	pub, err := x509.ParsePKIXPublicKey(pubDER)
	if err != nil {
		t.Fatal(err)
	}
	var msg bytes.Buffer
	msg.WriteString("CRX3 SignedData\x00")
	binary.Write(&msg, binary.LittleEndian, uint32(len(signed)))
	msg.Write(signed)
	msg.Write(archive)
	sum := sha256.Sum256(msg.Bytes())
	if err := rsa.VerifyPKCS1v15(pub.(*rsa.PublicKey), crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("signature: %v", err)
	}
	return id, archive
}

// A throwaway key makes a CRX3 that verifies, whose id is the key's, and
// whose archive is the Chrome package (no manifest "key", no tests).
func TestCRX(t *testing.T) {
	root := sampleRoot(t, map[string]string{
		"extension/background.js":   "// worker",
		"extension/test/x.test.js":  "test",
		"extension/icons/icon.png":  "png",
		"extension/lib/core.js":     "export {}",
		"companion/tools/page.js":   "(() => {})();",
		"extension/lib/sub/deep.js": "x",
	})
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	var stdout, stderr bytes.Buffer
	env := func(string) string { return "" }
	if code := run([]string{"newkey", "-o", keyFile}, &stdout, &stderr, env); code != 0 {
		t.Fatalf("newkey: %s", stderr.String())
	}
	newID := strings.TrimSpace(stdout.String())
	if fi, _ := os.Stat(keyFile); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file is %v", fi.Mode().Perm())
	}
	// The key comes from the environment, as for a release.
	out := filepath.Join(root, "dist", "reins.crx")
	stdout.Reset()
	envKey := func(k string) string {
		if k == CRXKeyEnv {
			return keyFile
		}
		return ""
	}
	if code := run([]string{"crx", "-root", root, "-o", out}, &stdout, &stderr, envKey); code != 0 {
		t.Fatalf("crx: %s", stderr.String())
	}
	printed := strings.TrimSpace(stdout.String())
	crx, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	id, archive := verifyCRX(t, crx)
	if id != printed || id != newID {
		t.Errorf("ids: crx %s, printed %s, newkey %s", id, printed, newID)
	}
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == "manifest.json" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			if strings.Contains(string(b), `"key"`) {
				t.Error("the packed manifest keeps the unpacked folder's key; Chromium sets it from the CRX")
			}
		}
	}
	if strings.Join(names, ",") != "background.js,icons/icon.png,lib/core.js,lib/sub/deep.js,manifest.json" {
		t.Errorf("archive holds %v", names)
	}

	// Signing with the manifest's own key gives the id the manifest pins.
	k, err := loadKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if kid, _ := keyID(base64.StdEncoding.EncodeToString(der)); kid != id {
		t.Errorf("keyID of the same public key = %s, crx id %s", kid, id)
	}

	// Tampering with one byte of the archive breaks the signature.
	bad := bytes.Clone(crx)
	bad[len(bad)-10] ^= 1
	hl := binary.LittleEndian.Uint32(bad[8:12])
	fields := readProto(t, bad[12:12+hl])
	proof := readProto(t, fields[fieldSHA256WithRSA][0])
	var msg bytes.Buffer
	msg.WriteString(crxSignContext)
	binary.Write(&msg, binary.LittleEndian, uint32(len(fields[fieldSignedHeader][0])))
	msg.Write(fields[fieldSignedHeader][0])
	msg.Write(bad[12+hl:])
	sum := sha256.Sum256(msg.Bytes())
	if rsa.VerifyPKCS1v15(&k.PublicKey, crypto.SHA256, sum[:], proof[fieldProofSignature][0]) == nil {
		t.Error("a tampered archive still verifies")
	}
}

func TestCRXNeedsAKey(t *testing.T) {
	root := sampleRoot(t, map[string]string{})
	var stdout, stderr bytes.Buffer
	if code := run([]string{"crx", "-root", root, "-o", filepath.Join(root, "x.crx")}, &stdout, &stderr, func(string) string { return "" }); code == 0 || !strings.Contains(stderr.String(), CRXKeyEnv) {
		t.Fatalf("crx without a key: exit %d, %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(root, "x.crx")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a .crx was written without a key: %v", err)
	}
}

func TestExternalPrefs(t *testing.T) {
	root := writeTree(t, map[string]string{"FyneApp.toml": "[Details]\n  Version = \"1.2.3\"\n"})
	var stdout, stderr bytes.Buffer
	if code := run([]string{"external-prefs", "-root", root, "-crx", "/usr/share/reins/reins.crx"}, &stdout, &stderr, func(string) string { return "" }); code != 0 {
		t.Fatal(stderr.String())
	}
	var p ExternalPrefs
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil || p.CRX != "/usr/share/reins/reins.crx" || p.Version != "1.2.3" {
		t.Errorf("prefs %s: %+v %v", stdout.String(), p, err)
	}
	if code := run([]string{"external-prefs", "-root", root, "-crx", "reins.crx"}, &stdout, &stderr, func(string) string { return "" }); code == 0 {
		t.Error("a relative .crx path was accepted; browsers need an absolute one")
	}
}
