//go:build image

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

// Package image checks what the manager's container image holds, as `make image` built it:
// CAPO_IMAGE_ARCHIVE names the archive, CAPO_RELEASE_VERSION the release it was built for.
package image

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/ociarchive"
)

func TestImage(t *testing.T) {
	g := NewWithT(t)
	archive, version := os.Getenv("CAPO_IMAGE_ARCHIVE"), os.Getenv("CAPO_RELEASE_VERSION")
	if archive == "" || version == "" {
		t.Fatal("set CAPO_IMAGE_ARCHIVE and CAPO_RELEASE_VERSION ('make test-image' does)")
	}
	img, err := ociarchive.Read(archive)
	g.Expect(err).NotTo(HaveOccurred())

	digest, err := os.ReadFile(archive + ".digest")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.TrimSpace(string(digest))).To(Equal(img.ManifestDigest), "the recorded digest is the image's")
	g.Expect(img.ManifestDigest).To(MatchRegexp(`^sha256:[0-9a-f]{64}$`))
	g.Expect(img.OS).To(Equal("linux"))
	g.Expect(archive).To(HaveSuffix("-linux-" + img.Architecture + ".tar"))
	g.Expect(img.Config.Entrypoint).To(Equal([]string{"/manager"}))
	g.Expect(img.Config.Cmd).To(BeEmpty())
	g.Expect(img.Config.User).To(Equal("65532:65532"), "a non-root user, as the Deployment's securityContext asks")
	g.Expect(img.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.version", version))

	files, err := img.Files()
	g.Expect(err).NotTo(HaveOccurred())
	var regular []string
	for name, f := range files {
		if f.Header.Typeflag == tar.TypeReg {
			regular = append(regular, name)
		}
	}
	g.Expect(regular).To(ConsistOf("manager", "etc/ssl/certs/ca-certificates.crt"), "the binary and the CA bundle, nothing else (no shell)")
	g.Expect(files["manager"].Header.Mode&0o111).NotTo(BeZero(), "the manager is executable")
	bin, err := elf.NewFile(bytes.NewReader(files["manager"].Data))
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range bin.Progs {
		g.Expect(p.Type).NotTo(Equal(elf.PT_INTERP), "a static binary: the image has no dynamic loader")
	}
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(files["etc/ssl/certs/ca-certificates.crt"].Data)).To(BeTrue(), "the CA bundle holds certificates")

	if img.Architecture != runtime.GOARCH {
		t.Skipf("the binary is for %s; its --version is checked on %s machines", img.Architecture, img.Architecture)
	}
	path := filepath.Join(t.TempDir(), "manager")
	g.Expect(os.WriteFile(path, files["manager"].Data, 0o755)).To(Succeed())
	out, err := exec.Command(path, "--version").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(strings.TrimSpace(string(out))).To(Equal(version), "the binary was built for the release")
}
