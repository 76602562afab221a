/*
Copyright 2026 The capo-multiaz Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package ociarchive reads the container image archives `make image` builds (an OCI image
// layout in a tar file, as buildah writes with oci-archive:): the manifest's digest, the image
// configuration, and the files of its layers. The local management plane unpacks the image into
// a runc bundle with it; the image test inspects it.
package ociarchive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Image is one image of an archive.
type Image struct {
	// ManifestDigest is the image's digest ("sha256:..."), as a registry names it.
	ManifestDigest string
	Architecture   string
	OS             string
	Config         Config
	layers         []layer
}

// Config is the part of the image configuration a runtime uses.
type Config struct {
	User       string            `json:"User"`
	Entrypoint []string          `json:"Entrypoint"`
	Cmd        []string          `json:"Cmd"`
	Env        []string          `json:"Env"`
	WorkingDir string            `json:"WorkingDir"`
	Labels     map[string]string `json:"Labels"`
}

type layer struct {
	mediaType string
	data      []byte
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

// Read reads the archive at path, which must hold exactly one image.
func Read(path string) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		files[strings.TrimPrefix(h.Name, "./")] = data
	}
	blob := func(digest string) ([]byte, error) {
		algorithm, hex, ok := strings.Cut(digest, ":")
		data, found := files["blobs/"+algorithm+"/"+hex]
		if !ok || !found {
			return nil, fmt.Errorf("%s: no blob %s", path, digest)
		}
		return data, nil
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		return nil, fmt.Errorf("%s: index.json: %w", path, err)
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("%s: %d images, want one", path, len(index.Manifests))
	}
	img := &Image{ManifestDigest: index.Manifests[0].Digest}
	data, err := blob(img.ManifestDigest)
	if err != nil {
		return nil, err
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		return nil, fmt.Errorf("%s: manifest: %w", path, err)
	}
	if data, err = blob(manifest.Config.Digest); err != nil {
		return nil, err
	}
	var config struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       Config `json:"config"`
	}
	if err := json.Unmarshal(data, &config); err != nil {
		return nil, fmt.Errorf("%s: image configuration: %w", path, err)
	}
	img.Architecture, img.OS, img.Config = config.Architecture, config.OS, config.Config
	for _, l := range manifest.Layers {
		data, err := blob(l.Digest)
		if err != nil {
			return nil, err
		}
		img.layers = append(img.layers, layer{mediaType: l.MediaType, data: data})
	}
	return img, nil
}

// File is one file of the image's layers.
type File struct {
	Header *tar.Header
	Data   []byte
}

// Files are the files of the image, by path without a leading slash, the upper layer's winning.
func (img *Image) Files() (map[string]File, error) {
	out := map[string]File{}
	err := img.walk(func(h *tar.Header, r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		out[clean(h.Name)] = File{Header: h, Data: data}
		return nil
	})
	return out, err
}

// Unpack writes the image's files under dir, as the root file system of a container.
func (img *Image) Unpack(dir string) error {
	return img.walk(func(h *tar.Header, r io.Reader) error {
		name := clean(h.Name)
		if name == "" {
			return nil
		}
		target := filepath.Join(dir, name)
		if !strings.HasPrefix(target, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("%s leaves the root file system", h.Name)
		}
		mode := os.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			return os.MkdirAll(target, mode|0o700)
		case tar.TypeSymlink:
			_ = os.Remove(target)
			return os.Symlink(h.Linkname, target)
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, r); err != nil {
				_ = f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			return os.Chmod(target, mode)
		}
		return nil
	})
}

func clean(name string) string {
	return strings.TrimPrefix(strings.TrimPrefix(filepath.Clean("/"+name), "/"), "/")
}

func (img *Image) walk(visit func(*tar.Header, io.Reader) error) error {
	for i, l := range img.layers {
		var r io.Reader = bytes.NewReader(l.data)
		if strings.HasSuffix(l.mediaType, "+gzip") || strings.HasSuffix(l.mediaType, ".gzip") {
			gz, err := gzip.NewReader(r)
			if err != nil {
				return fmt.Errorf("layer %d: %w", i, err)
			}
			r = gz
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("layer %d: %w", i, err)
			}
			if err := visit(h, tr); err != nil {
				return fmt.Errorf("layer %d, %s: %w", i, h.Name, err)
			}
		}
	}
	return nil
}
