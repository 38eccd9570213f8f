#!/usr/bin/env bash
# kube-version.sh prints the Kubernetes version the kit pins, such as v1.37.2: the
# version of k8s.io/kubernetes that hack/controlplane/go.mod requires, read by
# lib.sh's kit_kube_version, the one place that reads it. It is that function for
# the Makefiles: the root Makefile runs it once, each time it starts, and exports
# KUBE_VERSION; the tiers' Makefiles run it when run on their own. The kit's scripts
# call kit_kube_version itself. Bumping the pin in that go.mod is all a new version
# needs.
#
# Fast: lib.sh runs no program when sourced but date, and kit_kube_version one
# `go list -m` (about 10 ms with a warm module cache; see lib/kube.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

kit_kube_version
