//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// encryptedPrefix is what a value the aescbc provider of make
// encryption-config's encrypt.yaml wrote starts with in etcd: the provider's
// prefix, then the name of the key it used.
const encryptedPrefix = "k8s:enc:aescbc:v1:key1:"

// TestEncryptionAtRestStoresASecretEncrypted turns encryption at rest on as
// section 13 does, with the configuration make encryption-config writes
// (apiserver-example/hack/encryption-config.sh), and checks what the section
// shows: a new Secret's value in etcd starts with the aescbc provider's prefix
// and holds none of the Secret's data in plain, while the API returns the data
// as it was sent. The Secret is deleted before the server runs without the flag
// again (a value it can no longer decrypt would break every list of Secrets),
// and any other Secret left encrypted is named. Not parallel: it restarts the
// cluster's kube-apiserver.
func TestEncryptionAtRestStoresASecretEncrypted(t *testing.T) {
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(kittest.RepoRoot(), "apiserver-example", "hack", "encryption-config.sh")
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), kittest.ClusterEnv+"="+info.Name)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make encryption-config: %v\n%s", err, out)
	}
	config := filepath.Join(kittest.RepoRoot(), "_output", "encryption", info.Name, "encrypt.yaml")
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "lesson6-encryption")

	withAPIServerFlags(t, "--encryption-provider-config="+config)
	const plain = "lesson6-plain-text"
	secret, err := cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "encrypted"},
		StringData: map[string]string{"password": plain},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a Secret: %v", err)
	}
	// Runs before withAPIServerFlags' clean-up, which takes the flag away.
	t.Cleanup(func() { deleteEncryptedSecret(t, ns, secret.Name) })

	key := etcdKey("secrets", ns, secret.Name)
	value := etcdValue(t, key)
	if !bytes.HasPrefix(value, []byte(encryptedPrefix)) {
		t.Errorf("%s's value in etcd starts %q; want %q, aescbc's prefix and the key's name (is --encryption-provider-config=%s on? make kube-args WHAT=kube-apiserver)", key, head(value), encryptedPrefix, config)
	}
	if bytes.Contains(value, []byte(plain)) {
		t.Errorf("%s's value in etcd holds the Secret's data, %q, in plain", key, plain)
	}
	got, err := cs.CoreV1().Secrets(ns).Get(context.Background(), secret.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Secret back: %v", err)
	}
	if string(got.Data["password"]) != plain {
		t.Errorf("the API returns the Secret's password as %q; want %q, as it was sent", got.Data["password"], plain)
	}
}

// deleteEncryptedSecret deletes the Secret the test wrote encrypted and fails
// the test when any Secret of the cluster is still stored encrypted: with the
// flag gone, the API server could not read it.
func deleteEncryptedSecret(t *testing.T, namespace, name string) {
	t.Helper()
	cs := kittest.Clientset(t)
	if err := cs.CoreV1().Secrets(namespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting Secret %s/%s before the server runs without encryption again: %v", namespace, name, err)
	}
	out, err := exec.Command(etcdctl, "--endpoints", etcd, "get", "/registry/secrets/", "--prefix", "-w", "json").Output()
	if err != nil {
		t.Errorf("etcdctl get /registry/secrets/ --prefix: %v (%s)", err, stderrOf(err))
		return
	}
	for _, kv := range etcdKVs(t, out) {
		if bytes.HasPrefix(kv.Value, []byte("k8s:enc:")) {
			t.Errorf("%s is stored encrypted, and the server that runs without the flag again cannot read it: write it again with decrypt.yaml on (section 13), or delete it", kv.Key)
		}
	}
}

// etcdValue returns the value of key in the cluster's etcd, read with etcdctl.
func etcdValue(t *testing.T, key string) []byte {
	t.Helper()
	out, err := exec.Command(etcdctl, "--endpoints", etcd, "get", key, "-w", "json").Output()
	if err != nil {
		t.Fatalf("etcdctl get %s -w json: %v (%s)", key, err, stderrOf(err))
	}
	kvs := etcdKVs(t, out)
	if len(kvs) != 1 {
		t.Fatalf("etcdctl get %s returned %d keys; want that one key: %s", key, len(kvs), out)
	}
	return kvs[0].Value
}

// etcdKV is one key and its value in etcdctl's JSON (both base64 there).
type etcdKV struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
}

// etcdKVs parses the keys and values of etcdctl's get -w json.
func etcdKVs(t *testing.T, out []byte) []etcdKV {
	t.Helper()
	var got struct {
		KVs []etcdKV `json:"kvs"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("etcdctl's JSON: %v\n%s", err, out)
	}
	return got.KVs
}

// head returns the first bytes of a value, enough to tell its format.
func head(value []byte) []byte {
	return value[:min(len(value), 24)]
}
