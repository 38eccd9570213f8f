// The kind configuration check of make test: hack/cluster/kind-config.yaml is read
// the way kind v0.33.0 and kubeadm read it, without Docker. kind's own Validate is
// internal to kind and runs only once kind has found a container engine, so a
// misspelt field would otherwise show up on a learner's laptop, as a cluster that
// silently lacks the setting. It lives in this module because the kubeadm and
// kubelet configuration types are Kubernetes' (k8s.io/kubernetes at the pinned
// version); kind is required here at the version hack/cluster/go.mod pins, which
// TestKindIsTheVersionTheClusterModulePins holds it to.
package controlplane_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeadmv1beta4 "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"
	"sigs.k8s.io/json"
	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"
	kindv1alpha4 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

const kindConfigPath = "../cluster/kind-config.yaml"

// patchTypes maps the kind of a kubeadmConfigPatches entry to a new value of the
// type its fields must belong to. kind merges each patch into the configuration
// of the same kind that it generates for kubeadm v1beta4 (Kubernetes 1.31 and
// later), kubelet's v1beta1 and kube-proxy's v1alpha1.
var patchTypes = map[string]func() any{
	"ClusterConfiguration":   func() any { return &kubeadmv1beta4.ClusterConfiguration{} },
	"InitConfiguration":      func() any { return &kubeadmv1beta4.InitConfiguration{} },
	"JoinConfiguration":      func() any { return &kubeadmv1beta4.JoinConfiguration{} },
	"KubeletConfiguration":   func() any { return &kubeletv1beta1.KubeletConfiguration{} },
	"KubeProxyConfiguration": func() any { return &kubeproxyv1alpha1.KubeProxyConfiguration{} },
}

// decodeStrict decodes YAML into v the way Kubernetes' own strict decoding
// does: a field that v does not have, or spelt in another case, is an error.
func decodeStrict(data []byte, v any) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	strictErrs, err := json.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return errors.Join(strictErrs...)
	}
	return nil
}

// checkKindConfig decodes a kind configuration strictly (an unknown or
// misspelt field is an error) and each of its kubeadm patches into its type,
// and returns the decoded cluster.
func checkKindConfig(data []byte) (*kindv1alpha4.Cluster, error) {
	var cluster kindv1alpha4.Cluster
	if err := decodeStrict(data, &cluster); err != nil {
		return nil, fmt.Errorf("not a kind v1alpha4 Cluster: %w", err)
	}
	if cluster.Kind != "Cluster" || cluster.APIVersion != "kind.x-k8s.io/v1alpha4" {
		return nil, fmt.Errorf("kind %q apiVersion %q, want Cluster kind.x-k8s.io/v1alpha4", cluster.Kind, cluster.APIVersion)
	}
	patches := map[string][]string{"kubeadmConfigPatches": cluster.KubeadmConfigPatches}
	for i, n := range cluster.Nodes {
		patches[fmt.Sprintf("nodes[%d].kubeadmConfigPatches", i)] = n.KubeadmConfigPatches
	}
	for field, list := range patches {
		for j, patch := range list {
			if err := checkPatch(patch); err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", field, j, err)
			}
		}
	}
	return &cluster, nil
}

// checkPatch decodes one kubeadm config patch strictly into the type its kind names.
func checkPatch(patch string) error {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(patch), &head); err != nil {
		return err
	}
	newValue, ok := patchTypes[head.Kind]
	if !ok {
		return fmt.Errorf("kind %q is none that kind patches (ClusterConfiguration, InitConfiguration, JoinConfiguration, KubeletConfiguration, KubeProxyConfiguration)", head.Kind)
	}
	if err := decodeStrict([]byte(patch), newValue()); err != nil {
		return fmt.Errorf("%s: %w", head.Kind, err)
	}
	return nil
}

func TestKindConfigDecodesStrictlyIntoKindAndKubeadmTypes(t *testing.T) {
	data, err := os.ReadFile(kindConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := checkKindConfig(data)
	if err != nil {
		t.Fatalf("%s: %v", kindConfigPath, err)
	}
	if len(cluster.Nodes) != 1 || cluster.Nodes[0].Role != kindv1alpha4.ControlPlaneRole {
		t.Errorf("%s has %d nodes; the kit's clusters are one control-plane node (the kit's own node image has a one-node pod network)", kindConfigPath, len(cluster.Nodes))
	}
}

func TestKindConfigPinsKindsDefaultNodeImage(t *testing.T) {
	data, err := os.ReadFile(kindConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := checkKindConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range cluster.Nodes {
		if n.Image != kinddefaults.Image {
			t.Errorf("%s: nodes[%d].image is %q; kind's pkg/apis/config/defaults names %q for the pinned kind: pin that one", kindConfigPath, i, n.Image, kinddefaults.Image)
		}
	}
}

// On a cgroup v1 engine make kind-up appends kind-config-cgroupv1.yaml to the
// kind config: the joined file must still be one strict kind Cluster, whose node
// tells kubelet and containerd (runc's options) alike to use cgroupfs, since a
// kubelet and a runtime on different cgroup drivers cannot start a Pod.
func TestKindConfigForCgroupV1UsesCgroupfsInKubeletAndContainerd(t *testing.T) {
	base, err := os.ReadFile(kindConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := os.ReadFile("../cluster/kind-config-cgroupv1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := checkKindConfig(append(base, extra...))
	if err != nil {
		t.Fatalf("kind-config.yaml with kind-config-cgroupv1.yaml appended: %v", err)
	}
	driver := ""
	for _, patch := range cluster.Nodes[0].KubeadmConfigPatches {
		var kubelet kubeletv1beta1.KubeletConfiguration
		if err := yaml.Unmarshal([]byte(patch), &kubelet); err == nil && kubelet.Kind == "KubeletConfiguration" && kubelet.CgroupDriver != "" {
			driver = kubelet.CgroupDriver
		}
	}
	if driver != "cgroupfs" {
		t.Errorf("the joined config sets the kubelet's cgroupDriver to %q, want cgroupfs", driver)
	}
	runcOptions := regexp.MustCompile(`(?m)^\s*\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.runc\.options\]\s*\n\s*SystemdCgroup = false\s*$`)
	if len(cluster.ContainerdConfigPatches) != 1 || !runcOptions.MatchString(cluster.ContainerdConfigPatches[0]) {
		t.Errorf("the joined config's containerdConfigPatches are %q; want one that sets SystemdCgroup = false in runc's options", cluster.ContainerdConfigPatches)
	}
	if strings.Contains(string(base), "cgroupDriver") || strings.Contains(string(base), "SystemdCgroup") {
		t.Errorf("%s itself names a cgroup driver; on a cgroup v2 engine kind's own (systemd) is the one to use", kindConfigPath)
	}
}

// The check itself: each kind of mistake a learner or a maintainer could make
// in the file must be refused.
func TestCheckKindConfigRefusesMistakes(t *testing.T) {
	const head = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n"
	for name, config := range map[string]string{
		"misspelt kind field":      head + "nodes:\n- role: control-plane\n  imag: x\n",
		"misspelt kubeadm field":   head + "nodes:\n- role: control-plane\n  kubeadmConfigPatches:\n  - |\n    kind: ClusterConfiguration\n    apiServer:\n      extraArg:\n      - name: v\n        value: \"2\"\n",
		"kubeadm v1beta3 map form": head + "kubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n  apiServer:\n    extraArgs:\n      v: \"2\"\n",
		"misspelt kubelet field":   head + "kubeadmConfigPatches:\n- |\n  kind: KubeletConfiguration\n  failCgroupv1: false\n",
		"unknown patch kind":       head + "kubeadmConfigPatches:\n- |\n  kind: SchedulerConfiguration\n",
		"not a Cluster":            "kind: Config\napiVersion: kind.x-k8s.io/v1alpha4\n",
	} {
		if _, err := checkKindConfig([]byte(config)); err == nil {
			t.Errorf("%s: checkKindConfig accepted it:\n%s", name, config)
		}
	}
}

func TestKindIsTheVersionTheClusterModulePins(t *testing.T) {
	kindIn := func(goModPath string) string {
		t.Helper()
		goMod, err := os.ReadFile(goModPath)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/kind (v\S+)`).FindSubmatch(goMod)
		if m == nil {
			t.Fatalf("%s requires no sigs.k8s.io/kind", goModPath)
		}
		return string(m[1])
	}
	if here, pinned := kindIn("go.mod"), kindIn("../cluster/go.mod"); here != pinned {
		t.Errorf("this check reads kind %s, hack/cluster/go.mod pins kind %s: run 'GOWORK=off go get sigs.k8s.io/kind@%s' in hack/controlplane", here, pinned, pinned)
	}
	if !strings.HasPrefix(kinddefaults.Image, "kindest/node:") {
		t.Errorf("kind's default image %q is not a kindest/node image", kinddefaults.Image)
	}
}
