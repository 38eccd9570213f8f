//go:build e2e

package reliability

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
	"github.com/controller-kit/controller-kit/test/kittest"
)

// serveGuestbookWebhooks runs the Guestbook manager with its webhooks on, behind
// a serving certificate made for the test, and registers the webhook
// configurations the project ships (config/webhook, rendered by kustomize) for
// Guestbooks in namespace only, pointing at the manager by URL instead of a
// Service (kittest.RegisterWebhooks).
// It returns once the defaulting webhook answers. Everything is removed at
// cleanup. (In a cluster, cert-manager makes the certificate and the webhooks
// point at the manager's Service: config/default.)
func serveGuestbookWebhooks(t *testing.T, cs kubernetes.Interface, namespace string) {
	t.Helper()
	certDir := t.TempDir()
	caBundle := writeServingCertificate(t, certDir)
	_, port, err := net.SplitHostPort(kittest.FreeAddress(t))
	if err != nil {
		t.Fatal(err)
	}
	// The manager runs as the test's admin: this scenario is about what the
	// API server refuses, not the operator's RBAC (the crash scenario runs it
	// with its own).
	kittest.StartProcess(t, "manager", managerBin,
		"--kubeconfig", kittest.Kubeconfig(),
		"--enable-webhooks=true", "--webhook-cert-path", certDir, "--webhook-port", port,
		"--operator-namespace", namespace,
		"--health-probe-bind-address=0", "--metrics-bind-address=0")

	// The configurations as the project ships them: kustomize's rendering of
	// config/webhook, the matchConditions its kustomization adds included.
	manifests, err := kittest.Kustomize(filepath.Join(kittest.RepoRoot(), "kubebuilder-guestbook", "config", "webhook"))
	if err != nil {
		t.Fatal(err)
	}
	if n := kittest.RegisterWebhooks(t, cs, manifests, namespace, "https://127.0.0.1:"+port, caBundle); n != 2 {
		t.Fatalf("config/webhook has %d webhooks; this suite knows the Guestbook's two (defaulting, validating)", n)
	}

	// The webhooks answer once a Guestbook created (dry run) without images
	// comes back with the defaulting webhook's.
	client, err := dynamic.NewForConfig(kittest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "webapp.controller-kit.dev/v1", "kind": "Guestbook",
		"metadata": map[string]any{"name": "webhook-probe"}, "spec": map[string]any{},
	}}
	kittest.Eventually(t, deadline, "the Guestbook webhooks to answer", func(ctx context.Context) (bool, error) {
		got, err := client.Resource(guestbookResource).Namespace(namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		image, _, _ := unstructured.NestedString(got.Object, "spec", "frontend", "image")
		return image == webappv1.DefaultFrontendImage, nil
	})
}

// writeServingCertificate writes tls.crt and tls.key, a self-signed
// certificate for 127.0.0.1 valid for a day, into dir (controller-runtime's
// webhook server reads them there) and returns the certificate in PEM, which
// the webhook configurations give the API server as their caBundle.
func writeServingCertificate(t *testing.T, dir string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "guestbook-webhook.reliability"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own CA: the caBundle is the certificate itself
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(fmt.Errorf("writing the webhook's %s: %w", name, err))
		}
	}
	return certPEM
}
