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

// Package testenv finds the kube-apiserver and etcd binaries the envtest suites
// run, and the project's folders they load manifests from.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// NewScheme returns a scheme with client-go's built-in kinds and the Guestbook
// API, the same as the manager's (cmd/main.go). The error says which could not
// be added.
func NewScheme() (*k8sruntime.Scheme, error) {
	s := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding client-go's kinds to the scheme: %w", err)
	}
	if err := webappv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding the Guestbook API to the scheme: %w", err)
	}
	return s, nil
}

// AssetsEnv is the variable envtest reads the binaries' folder from.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// ProjectDir returns the project's top folder (where PROJECT and config/ are):
// the nearest folder above the one `go test` runs a package in that holds the
// PROJECT file. (It does not ask runtime.Caller for this file's folder: the kit
// builds with -trimpath, which names files by import path instead.)
func ProjectDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "PROJECT")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// AssetsDir returns the folder holding the kube-apiserver and etcd that envtest
// runs: $KUBEBUILDER_ASSETS, which `make test-unit` (at the kit's root or in
// kubebuilder-guestbook) sets after building them. When the variable is unset,
// or either binary is not in its folder, it returns an error that names that
// target, so a plain `go test` fails at once instead of envtest looking for the
// binaries under /usr/local/kubebuilder.
func AssetsDir() (string, error) {
	dir := os.Getenv(AssetsEnv)
	if dir == "" {
		return "", fmt.Errorf("envtest needs kube-apiserver and etcd, and %s, the folder that holds them, is not set: "+
			"run the tests with 'make test-unit' (at the kit's root or in kubebuilder-guestbook), "+
			"which builds both and sets %s", AssetsEnv, AssetsEnv)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.IsDir() {
			return "", fmt.Errorf("envtest needs %s in %s=%s, and it is not there: "+
				"run the tests with 'make test-unit' (at the kit's root or in kubebuilder-guestbook), "+
				"which builds it", name, AssetsEnv, dir)
		}
	}
	return dir, nil
}

// NewEnvironment returns the envtest environment every suite of the project starts
// from: the kit-built binaries (see AssetsDir) and the project's CRDs, a missing
// CRD folder being an error. A suite adds what it needs more (webhooks) before
// calling Start. The error is AssetsDir's.
func NewEnvironment() (*envtest.Environment, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(ProjectDir(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}, nil
}
