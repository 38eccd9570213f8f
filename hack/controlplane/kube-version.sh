#!/usr/bin/env bash
# kube-version.sh prints the Kubernetes version the kit pins, such as v1.37.2: the
# version of k8s.io/kubernetes that hack/controlplane/go.mod requires. It is the one
# place that reads it. The root Makefile runs it once and exports KUBE_VERSION; the
# tiers' Makefiles, build-bins.sh and local-up.sh ask it too when run on their own.
# Bumping the pin in that go.mod is all a new version needs.
#
# `go list -m` reads the go.mod and the module cache; it takes about 10 ms. On a cold
# module cache it first fetches k8s.io/kubernetes's .info and .mod files (a few KB)
# from the Go module proxy, as any build of the kit would; offline with a cold
# cache it fails, and says why.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if ! version=$(GOWORK=off go list -m -f '{{.Version}}' k8s.io/kubernetes) || [ -z "$version" ]; then
	echo "kube-version: cannot read the version of k8s.io/kubernetes from hack/controlplane/go.mod (go list -m failed; its error is above)" >&2
	exit 1
fi
echo "$version"
