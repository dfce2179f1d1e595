package main

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CRX3 is the packed format Chromium installs from a file: "Cr24", the
// format version 3, the length of a protobuf CrxFileHeader, the header,
// then the zip archive. The header carries one RSA key proof (public key
// and a SHA-256 PKCS #1 v1.5 signature) and the signed data, which names
// the extension id. The signature covers a fixed prefix, the signed data
// and the whole archive. (components/crx_file/crx3.proto in Chromium.)
const (
	crxMagic   = "Cr24"
	crxVersion = 3
	// crxSignContext is what Chromium's verifier prepends to the signed
	// bytes, NUL included.
	crxSignContext = "CRX3 SignedData\x00"
	// Field numbers of CrxFileHeader and SignedData.
	fieldSHA256WithRSA   = 2
	fieldSignedHeader    = 10000
	fieldProofPublicKey  = 1
	fieldProofSignature  = 2
	fieldSignedDataCrxID = 1
)

// CRXKeyEnv names the environment variable that holds the path of the
// release signing key (PEM, PKCS #8 or PKCS #1). The key never enters the
// repository; tests make a throwaway one.
const CRXKeyEnv = "REINS_CRX_KEY"

// crxID is the extension id of a CRX signed with pub (DER SPKI): the first
// 16 bytes of its SHA-256, which is also what the signed data carries.
func crxID(pubDER []byte) (id string, raw []byte) {
	sum := sha256.Sum256(pubDER)
	return idFromHash(sum), sum[:16]
}

// buildCRX signs archive with key and returns the CRX3 file and the id.
func buildCRX(archive []byte, key *rsa.PrivateKey) ([]byte, string, error) {
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, "", err
	}
	id, rawID := crxID(pub)
	signed := protoBytes(nil, fieldSignedDataCrxID, rawID)

	var msg bytes.Buffer
	msg.WriteString(crxSignContext)
	binary.Write(&msg, binary.LittleEndian, uint32(len(signed)))
	msg.Write(signed)
	msg.Write(archive)
	digest := sha256.Sum256(msg.Bytes())
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		return nil, "", err
	}

	proof := protoBytes(nil, fieldProofPublicKey, pub)
	proof = protoBytes(proof, fieldProofSignature, sig)
	header := protoBytes(nil, fieldSHA256WithRSA, proof)
	header = protoBytes(header, fieldSignedHeader, signed)

	var out bytes.Buffer
	out.WriteString(crxMagic)
	binary.Write(&out, binary.LittleEndian, uint32(crxVersion))
	binary.Write(&out, binary.LittleEndian, uint32(len(header)))
	out.Write(header)
	out.Write(archive)
	return out.Bytes(), id, nil
}

// protoBytes appends a length-delimited protobuf field (wire type 2).
func protoBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// loadKey reads an RSA private key from a PEM file.
func loadKey(path string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the CRX key: %w", err)
	}
	blk, _ := pem.Decode(data)
	if blk == nil {
		return nil, fmt.Errorf("%s holds no PEM block", path)
	}
	if k, err := x509.ParsePKCS1PrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: not an RSA private key: %w", path, err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an RSA key; Chromium ids come from RSA keys", path, k)
	}
	return rk, nil
}

// writeKey makes a new 2048-bit RSA key in PEM (PKCS #8) at path, 0600.
func writeKey(path string) (string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if err := errors.Join(pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}), f.Close()); err != nil {
		return "", err
	}
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	id, _ := crxID(pub)
	return id, nil
}

// keyPath is -key, else $REINS_CRX_KEY.
func keyPath(flagValue string, getenv func(string) string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p := strings.TrimSpace(getenv(CRXKeyEnv)); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("no signing key: set %s to the release key's PEM file (or pass -key; `extpack newkey -o FILE` makes a throwaway one for tests)", CRXKeyEnv)
}

// ExternalPrefs is the external-extensions preference file a Linux package
// puts at DIR/<id>.json: Chromium-family browsers offer the extension from
// the named .crx at their next start, with no store and no developer mode.
type ExternalPrefs struct {
	CRX     string `json:"external_crx"`
	Version string `json:"external_version"`
}
