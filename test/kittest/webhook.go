package kittest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Kustomize renders a kustomize folder (`kustomize build dir`) with the kit's
// bin/kustomize, as the tiers' `make deploy` does, and returns the YAML stream.
// The error names the missing binary and how to build it, or carries
// kustomize's own error output.
func Kustomize(dir string) ([]byte, error) {
	bin := filepath.Join(RepoRoot(), "bin", "kustomize")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w: build it with hack/build-bins.sh kustomize (or make bins)", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "build", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// RegisterWebhooks creates every MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration of manifests (a YAML stream, as Kustomize
// returns) the way a tier ships it, with three changes that keep it to one
// test: its name gets the prefix "<namespace>-", every webhook matches objects
// in namespace only (a namespaceSelector on the namespace's name label), and
// every webhook is called at baseURL followed by the path of its Service
// reference (the kit's local kube-apiserver is a process on this machine, so it
// reaches a webhook server by URL, not through a Service). caBundle is the
// certificate that signed the server's; nil when no server is meant to answer.
// Everything else, rules, failurePolicy and matchConditions included, is as
// shipped. Other objects in the stream are skipped. The configurations are
// deleted when the test ends. It returns how many webhooks it registered; a
// configuration it cannot decode or create fails the test.
func RegisterWebhooks(t testing.TB, cs kubernetes.Interface, manifests []byte, namespace, baseURL string, caBundle []byte) int {
	t.Helper()
	onlyHere := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": namespace}}
	// aim points one webhook at baseURL and at namespace only.
	aim := func(c *admissionregistrationv1.WebhookClientConfig, selector **metav1.LabelSelector) {
		path := "/"
		if c.Service != nil {
			path = ptr.Deref(c.Service.Path, "/")
		}
		*c = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(baseURL + path), CABundle: caBundle}
		*selector = onlyHere
	}
	admission := cs.AdmissionregistrationV1()
	registered := 0
	for _, doc := range bytes.Split(manifests, []byte("\n---")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("reading the webhook configurations: %v", err)
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			registered += registerWebhookConfiguration(t, admission.MutatingWebhookConfigurations(), doc, meta.Kind, namespace,
				func(config *admissionregistrationv1.MutatingWebhookConfiguration) int {
					for i := range config.Webhooks {
						aim(&config.Webhooks[i].ClientConfig, &config.Webhooks[i].NamespaceSelector)
					}
					return len(config.Webhooks)
				})
		case "ValidatingWebhookConfiguration":
			registered += registerWebhookConfiguration(t, admission.ValidatingWebhookConfigurations(), doc, meta.Kind, namespace,
				func(config *admissionregistrationv1.ValidatingWebhookConfiguration) int {
					for i := range config.Webhooks {
						aim(&config.Webhooks[i].ClientConfig, &config.Webhooks[i].NamespaceSelector)
					}
					return len(config.Webhooks)
				})
		}
	}
	return registered
}

// webhookConfigurations is what registerWebhookConfiguration needs of the
// typed client of one kind of webhook configuration (C: Mutating- or
// ValidatingWebhookConfiguration).
type webhookConfigurations[C any] interface {
	Create(ctx context.Context, config *C, opts metav1.CreateOptions) (*C, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// registerWebhookConfiguration reads the webhook configuration of the given
// kind from doc, strictly; prefixes its name with "<namespace>-"; lets aim
// point each of its webhooks where the test wants them (aim returns how many
// there are); creates it through client, and deletes it when the test ends.
// It returns aim's count; a configuration it cannot decode or create fails
// the test.
func registerWebhookConfiguration[C any, P interface {
	*C
	metav1.Object
}](t testing.TB, client webhookConfigurations[C], doc []byte, kind, namespace string, aim func(*C) int) int {
	t.Helper()
	config := P(new(C))
	if err := yaml.UnmarshalStrict(doc, config); err != nil {
		t.Fatalf("reading a %s: %v", kind, err)
	}
	config.SetName(namespace + "-" + config.GetName())
	config.SetNamespace("")
	n := aim(config)
	if _, err := client.Create(context.Background(), config, metav1.CreateOptions{}); err != nil {
		t.Fatalf("registering %s %s: %v", kind, config.GetName(), err)
	}
	t.Cleanup(func() {
		_ = client.Delete(context.Background(), config.GetName(), metav1.DeleteOptions{})
	})
	return n
}
