package main

import (
	"reflect"
	"testing"
)

func TestCompareNamesEachDependencyAtTwoVersionsAndTheHighest(t *testing.T) {
	builds := []build{
		{module: "hack/cluster", versions: map[string]string{"google.golang.org/grpc": "v1.81.1", "golang.org/x/sys": "v0.49.0"}},
		{module: "hack/csi", versions: map[string]string{"google.golang.org/grpc": "v1.84.0", "golang.org/x/sys": "v0.49.0"}},
		{module: "hack/controlplane", versions: map[string]string{"google.golang.org/grpc": "v1.82.1", "k8s.io/api": "v0.0.0=>v0.37.2"}},
		{module: "sample-controller", versions: map[string]string{"k8s.io/api": "v0.37.2"}},
	}
	got := compare(builds)
	if len(got) != 2 {
		t.Fatalf("compare found %d splits, want 2 (grpc at three versions, k8s.io/api required at v0.0.0 in one module); got %+v", len(got), got)
	}
	grpc := got[0]
	if grpc.dep != "google.golang.org/grpc" || grpc.highest != "v1.84.0" {
		t.Errorf("first split = %s, highest %s; want google.golang.org/grpc, highest v1.84.0", grpc.dep, grpc.highest)
	}
	if want := map[string][]string{"v1.81.1": {"hack/cluster"}, "v1.82.1": {"hack/controlplane"}, "v1.84.0": {"hack/csi"}}; !reflect.DeepEqual(grpc.at, want) {
		t.Errorf("grpc's modules by version = %v, want %v", grpc.at, want)
	}
	// The same source through a replace, but required at v0.0.0: -trimpath names
	// it by the required version, so it is a split, and the fix requires v0.37.2.
	if api := got[1]; api.dep != "k8s.io/api" || api.highest != "v0.37.2" || effective(api.highest) != "v0.37.2" {
		t.Errorf("second split = %s, highest %s; want k8s.io/api, highest v0.37.2", api.dep, api.highest)
	}
}

func TestCompareIsQuietWhenEveryModuleAgrees(t *testing.T) {
	builds := []build{
		{module: "a", versions: map[string]string{"golang.org/x/net": "v0.61.0"}},
		{module: "b", versions: map[string]string{"golang.org/x/net": "v0.61.0"}},
	}
	if got := compare(builds); len(got) != 0 {
		t.Errorf("compare = %+v, want no split", got)
	}
}

func TestKeptLeavesOutOnlyTheListedModulesOwnDependencies(t *testing.T) {
	for _, c := range []struct {
		mod, dep string
		want     bool
	}{
		{"hack/etcd", "go.etcd.io/etcd/api/v3", true},
		{"hack/etcd", "google.golang.org/grpc", false},
		{"hack/controlplane", "go.etcd.io/etcd/api/v3", false},
	} {
		if got := kept(c.mod, c.dep); got != c.want {
			t.Errorf("kept(%s, %s) = %v, want %v", c.mod, c.dep, got, c.want)
		}
	}
}
