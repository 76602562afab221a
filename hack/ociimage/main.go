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

// Command ociimage reads an image archive that hack/image.sh built:
//
//	ociimage digest ARCHIVE     prints the image's digest (sha256:...)
//	ociimage unpack ARCHIVE DIR writes the image's files under DIR
package main

import (
	"fmt"
	"os"

	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/ociarchive"
)

func main() {
	if len(os.Args) < 3 || (os.Args[1] == "unpack" && len(os.Args) != 4) {
		fmt.Fprintln(os.Stderr, "usage: ociimage digest ARCHIVE | ociimage unpack ARCHIVE DIR")
		os.Exit(2)
	}
	img, err := ociarchive.Read(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
	switch os.Args[1] {
	case "digest":
		fmt.Println(img.ManifestDigest)
	case "unpack":
		if err := img.Unpack(os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "ociimage:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "ociimage: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}
