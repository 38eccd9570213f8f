//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// priorityAndFairnessOn are the flags section 12 turns API Priority and
// Fairness on with: the kit's cluster starts with it off and with no in-flight
// limit (hack/cluster/kwokctl.yaml's disableQPSLimits: both limits 0), and the
// server refuses priority and fairness unless the two limits add up to
// something positive, so they go back to kube-apiserver's defaults too.
var priorityAndFairnessOn = []string{
	"--enable-priority-and-fairness=true",
	"--max-requests-inflight=400",
	"--max-mutating-requests-inflight=200",
}

// TestPriorityAndFairnessClassifiesEachRequest turns priority and fairness on
// as section 12 does and checks what the section shows: every response names
// the FlowSchema and the priority level its request was classified into, by
// UID, in two headers; the admin's requests (group system:masters) land in
// FlowSchema exempt, a ServiceAccount's in service-accounts, priority level
// workload-low, and apiserver_flowcontrol_dispatched_requests_total counts the
// latter. At its end the server runs with the flags it had again. Not
// parallel: it restarts the cluster's kube-apiserver.
func TestPriorityAndFairnessClassifiesEachRequest(t *testing.T) {
	withAPIServerFlags(t, priorityAndFairnessOn...)
	cfg := kittest.Config(t)
	cs := kittest.Clientset(t)
	admin, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	saCfg := rest.CopyConfig(cfg)
	// No such ServiceAccount need exist: the request is classified by who
	// asks, before it is authorized (and refused, 403, here).
	saCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:default:lesson6-apf"}
	sa, err := rest.HTTPClientFor(saCfg)
	if err != nil {
		t.Fatal(err)
	}
	url := cfg.Host + "/api/v1/namespaces/default"

	for _, tt := range []struct {
		who            string
		client         *http.Client
		flowSchema, pl string
	}{
		{"the admin (kwok-admin, group system:masters)", admin, flowcontrolv1.FlowSchemaNameExempt, flowcontrolv1.PriorityLevelConfigurationNameExempt},
		{"a ServiceAccount", sa, "service-accounts", "workload-low"},
	} {
		var gotFS, gotPL string
		kittest.Eventually(t, deadline, tt.who+"'s GET "+url+" to be classified", func(ctx context.Context) (bool, error) {
			gotFS, gotPL, err = classification(ctx, cs, tt.client, url)
			return err == nil, err
		})
		if gotFS != tt.flowSchema || gotPL != tt.pl {
			t.Errorf("%s's GET %s was classified into FlowSchema %s, priority level %s; want %s, %s", tt.who, url, gotFS, gotPL, tt.flowSchema, tt.pl)
		}
	}

	m, err := kittest.ScrapeWith(context.Background(), admin, cfg.Host+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	const dispatched = "apiserver_flowcontrol_dispatched_requests_total"
	labels := map[string]string{"flow_schema": "service-accounts", "priority_level": "workload-low"}
	if n, found := m.Value(dispatched, labels); !found || n < 1 {
		t.Errorf("%s%v = %g (found: %t); want the ServiceAccount's request counted", dispatched, labels, n, found)
	}
}

// classification GETs url through client and returns the names of the
// FlowSchema and the priority level its response's headers name by UID. The
// error says which header is missing (priority and fairness off: the server
// sets neither) or names no object.
func classification(ctx context.Context, cs kubernetes.Interface, client *http.Client, url string) (flowSchema, priorityLevel string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", "", err
	}
	resp.Body.Close()
	fsUID := resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID)
	plUID := resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
	if fsUID == "" || plUID == "" {
		return "", "", fmt.Errorf("GET %s answered %s without the headers %s and %s: is priority and fairness on? (make kube-args WHAT=kube-apiserver | grep priority)",
			url, resp.Status, flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
	}
	schemas, err := cs.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "", err
	}
	for _, fs := range schemas.Items {
		if string(fs.UID) == fsUID {
			flowSchema = fs.Name
		}
	}
	levels, err := cs.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "", err
	}
	for _, pl := range levels.Items {
		if string(pl.UID) == plUID {
			priorityLevel = pl.Name
		}
	}
	if flowSchema == "" || priorityLevel == "" {
		return "", "", fmt.Errorf("the headers name FlowSchema %s and priority level %s, which are not both objects of the API", fsUID, plUID)
	}
	return flowSchema, priorityLevel, nil
}
