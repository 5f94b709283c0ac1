package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Modes of the layer's entries: whatever the files' modes on disk, so
// that a checkout's umask does not change the digest.
const (
	binaryMode = 0o755
	certsMode  = 0o644
	dirMode    = 0o755
)

// file is one regular file of the layer.
type file struct {
	name string // in the image, absolute
	mode int64
	data []byte
}

// files reads the spec's files and checks them: the binary must run on
// an empty base, the CA bundle must hold certificates.
func (s Spec) files(c checked) ([]file, error) {
	bin, err := readFile("binary", s.Binary)
	if err != nil {
		return nil, err
	}
	if err := checkExecutable(s.Binary, bin, c.platform.Architecture); err != nil {
		return nil, err
	}
	files := []file{{name: c.path, mode: binaryMode, data: bin}}
	if s.Certs == "" {
		return files, nil
	}
	pem, err := readFile("certs", s.Certs)
	if err != nil {
		return nil, err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("certs %s: no PEM certificate in it: want a CA bundle such as /etc/ssl/certs/ca-certificates.crt", s.Certs)
	}
	return append(files, file{name: CertsPath, mode: certsMode, data: pem}), nil
}

// readFile reads a regular, non-empty file named by the spec's field.
func readFile(field, name string) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s: not a regular file", field, name)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%s %s: empty file", field, name)
	}
	return b, nil
}

// newLayer packs the files, with a directory entry for each of their
// parents, into a gzip-compressed layer whose bytes depend on nothing but
// the files' names, modes and contents.
func newLayer(files []file) (v1.Layer, error) {
	raw, err := layerTar(files)
	if err != nil {
		return nil, err
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	l, err := tarball.LayerFromOpener(open, tarball.WithCompressionLevel(gzip.DefaultCompression), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("compressing the layer: %w", err)
	}
	return l, nil
}

// layerTar writes the layer's tar: entries sorted by name, directories
// before what they hold, relative names as docker build writes them.
func layerTar(files []file) ([]byte, error) {
	entries, err := tarEntries(files)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := tw.WriteHeader(&e.hdr); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.hdr.Name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.hdr.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

type tarEntry struct {
	hdr  tar.Header
	data []byte
}

// tarEntries lists the files and their parent directories, sorted; a
// name that is both a file and a directory is an error.
func tarEntries(files []file) ([]tarEntry, error) {
	byName := map[string]tarEntry{}
	for _, f := range files {
		for dir := path.Dir(f.name); dir != "/"; dir = path.Dir(dir) {
			byName[dir+"/"] = tarEntry{hdr: header(dir+"/", tar.TypeDir, dirMode, 0)}
		}
	}
	for _, f := range files {
		if _, dup := byName[f.name+"/"]; dup {
			return nil, fmt.Errorf("layer: %s is a file and a directory", f.name)
		}
		if _, dup := byName[f.name]; dup {
			return nil, fmt.Errorf("layer: %s twice", f.name)
		}
		byName[f.name] = tarEntry{hdr: header(f.name, tar.TypeReg, f.mode, int64(len(f.data))), data: f.data}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	entries := make([]tarEntry, len(names))
	for i, n := range names {
		entries[i] = byName[n]
	}
	return entries, nil
}

// header is a tar header owned by 0:0 at the epoch, in the USTAR format
// where the name fits (no PAX records with access times).
func header(name string, typ byte, mode, size int64) tar.Header {
	return tar.Header{
		Typeflag: typ,
		Name:     strings.TrimPrefix(name, "/"),
		Mode:     mode,
		Size:     size,
		ModTime:  epoch,
		Format:   tar.FormatUSTAR,
	}
}
