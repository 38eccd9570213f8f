/*
Copyright 2026 The controller-kit Authors.

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

package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAssetsDirWithoutBinariesNamesTheMakeTarget(t *testing.T) {
	t.Setenv(AssetsEnv, t.TempDir())

	_, err := AssetsDir()

	if err == nil {
		t.Fatal("AssetsDir() with an empty folder returned no error")
	}
	for _, want := range []string{"kube-apiserver", "make test-unit", AssetsEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestAssetsDirWithoutTheVariableNamesTheMakeTarget(t *testing.T) {
	t.Setenv(AssetsEnv, "")

	_, err := AssetsDir()

	if err == nil {
		t.Fatalf("AssetsDir() with %s unset returned no error", AssetsEnv)
	}
	for _, want := range []string{"make test-unit", AssetsEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestAssetsDirAcceptsAFolderWithBothBinaries(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(AssetsEnv, dir)

	got, err := AssetsDir()

	if err != nil || got != dir {
		t.Errorf("AssetsDir() = %q, %v; want %q, nil", got, err, dir)
	}
}

func TestProjectDirHoldsThePROJECTFile(t *testing.T) {
	if _, err := os.Stat(filepath.Join(ProjectDir(), "PROJECT")); err != nil {
		t.Errorf("ProjectDir() = %s has no PROJECT file: %v", ProjectDir(), err)
	}
}
