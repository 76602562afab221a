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

package framework

import (
	"fmt"
	"os"
	"path/filepath"
)

// UpstreamFilesDir is where upstream CAPO's own files are kept unchanged (a directory with their
// SOURCES): $CAPO_UPSTREAM_FILES, else ../shared/upstream-v1beta2 beside repoRoot, else the
// workspace's. It is "" when there are none, and an error when $CAPO_UPSTREAM_FILES names a
// directory without SOURCES: the tests that use them are skipped only when nobody asked for them.
func UpstreamFilesDir(repoRoot string) (string, error) {
	given := os.Getenv("CAPO_UPSTREAM_FILES")
	for _, dir := range []string{given, filepath.Join(repoRoot, "..", "shared", "upstream-v1beta2"), "/work/shared/upstream-v1beta2"} {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "SOURCES")); err == nil {
			return dir, nil
		}
	}
	if given != "" {
		return "", fmt.Errorf("CAPO_UPSTREAM_FILES=%s holds no SOURCES", given)
	}
	return "", nil
}
