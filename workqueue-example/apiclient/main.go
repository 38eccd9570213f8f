// Command apiclient is the step before lesson 1's loop: client-go used as a plain
// API client, the way one uses a cloud SDK, with no informer, cache or queue.
// Against the cluster of --kubeconfig it
//
//  1. creates a Deployment,
//  2. reads it back,
//  3. updates its replicas and image inside retry.RetryOnConflict, while a second
//     writer changes the Deployment between the read and the update, so that the
//     first update is refused with a conflict and the retry reads it again,
//  4. lists Deployments with a label selector, and
//  5. deletes it with foreground propagation, waiting until its ReplicaSets and
//     Pods are gone.
//
// Each step prints what it sent and what the API server answered; -v=6 adds
// every HTTP round trip, as kubectl -v=6 does. It reads top to bottom: main,
// then Demo.Run and one method per step (docs/lessons/01-workqueue.md, "Before
// the loop"). Compare with client-go's examples/create-update-delete-deployment,
// which the kit's version extends with the conflict and the foreground delete.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// FieldManager names the demo's writes to the API server (managedFields), and
// its requests' user agent ends in it.
const FieldManager = "apiclient"

// SecondWriterAgent ends the user agent of the second writer, the client that
// changes the Deployment between the demo's read and its update.
const SecondWriterAgent = "apiclient-second-writer"

// InstanceLabel is the label every object of the demo carries, set to --name:
// the list of step 4 and the wait of step 5 select by it.
const InstanceLabel = "app.kubernetes.io/instance"

// The images the demo runs: the first at create, the second after the update.
// Nothing pulls them on the kit's cluster, where kwok plays the kubelet.
const (
	FirstImage  = "registry.k8s.io/pause:3.10"
	SecondImage = "registry.k8s.io/pause:3.10.1"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "apiclient:", err)
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

// run parses the flags, builds the two clients and runs the demo.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("apiclient", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig; empty = the default loading rules ($KUBECONFIG, ~/.kube/config)")
	namespace := fs.String("namespace", "default", "the namespace the Deployment is created in")
	name := fs.String("name", "apiclient-demo", "the Deployment's name, and the value of its "+InstanceLabel+" label")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long step 5 waits for the Deployment, its ReplicaSets and its Pods to be gone")
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q: this command takes flags only (see -h)", fs.Arg(0))
	case *timeout <= 0:
		return fmt.Errorf("--timeout=%s: must be positive, for example 2m", *timeout)
	}

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig (set --kubeconfig or KUBECONFIG; 'make env' at the repo root prints the kit's): %w", err)
	}
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(config), FieldManager))
	if err != nil {
		return fmt.Errorf("creating the client: %w", err)
	}
	second, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(config), SecondWriterAgent))
	if err != nil {
		return fmt.Errorf("creating the second writer's client: %w", err)
	}
	fmt.Fprintf(out, "API server %s, namespace %s, Deployment %s\n", config.Host, *namespace, *name)
	d := &Demo{Client: client, SecondWriter: second, Namespace: *namespace, Name: *name,
		Out: out, Poll: 250 * time.Millisecond, Timeout: *timeout}
	return d.Run(ctx)
}

// Demo runs the five steps against one Deployment. Its fields are what a test
// replaces: the clients (a fake clientset), the output and the wait's timings.
type Demo struct {
	// Client sends the demo's own requests.
	Client kubernetes.Interface
	// SecondWriter changes the Deployment between the read and the update of
	// step 3's first attempt; nil skips that, and the update does not conflict.
	SecondWriter kubernetes.Interface
	// Namespace and Name place the Deployment.
	Namespace, Name string
	// Out receives the narration, one block per step.
	Out io.Writer
	// Poll is how often step 5 reads again, and Timeout how long it waits in all.
	Poll, Timeout time.Duration
}

// Run runs the five steps in order and stops at the first that fails. Its
// error names the step. A Deployment left from an earlier run is an error
// (AlreadyExists), not something to overwrite: delete it or pick another name.
func (d *Demo) Run(ctx context.Context) error {
	created, err := d.create(ctx)
	if err != nil {
		return fmt.Errorf("step 1, create: %w", err)
	}
	if err := d.get(ctx, created.ResourceVersion); err != nil {
		return fmt.Errorf("step 2, get: %w", err)
	}
	if err := d.update(ctx); err != nil {
		return fmt.Errorf("step 3, update: %w", err)
	}
	if err := d.list(ctx); err != nil {
		return fmt.Errorf("step 4, list: %w", err)
	}
	if err := d.deleteAndWait(ctx); err != nil {
		return fmt.Errorf("step 5, delete: %w", err)
	}
	return nil
}

// create sends the Deployment (POST) and returns what the API server stored:
// the object as sent plus the fields the server sets (uid, resourceVersion,
// generation, creationTimestamp, defaults).
func (d *Demo) create(ctx context.Context) (*appsv1.Deployment, error) {
	labels := map[string]string{InstanceLabel: d.Name}
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: FirstImage}}},
			},
		},
	}
	got, err := d.Client.AppsV1().Deployments(d.Namespace).Create(ctx, deployment, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("Deployment %s/%s exists already, from an earlier run? Delete it (kubectl -n %s delete deployment %s) or pick another --name: %w",
			d.Namespace, d.Name, d.Namespace, d.Name, err)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(d.Out, "1. create: POST deployments, 2 replicas of %s\n", FirstImage)
	fmt.Fprintf(d.Out, "   201 Created: uid %s, resourceVersion %s, generation %d\n", got.UID, got.ResourceVersion, got.Generation)
	return got, nil
}

// get reads the Deployment (GET). Its resourceVersion is the one create
// returned unless something changed the Deployment since: the Deployment
// controller may already have written its status.
func (d *Demo) get(ctx context.Context, createdVersion string) error {
	got, err := d.Client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.Out, "2. get: GET deployments/%s\n", d.Name)
	fmt.Fprintf(d.Out, "   200 OK: resourceVersion %s (create returned %s), spec.replicas %d, status.replicas %d\n",
		got.ResourceVersion, createdVersion, ptr.Deref(got.Spec.Replicas, 0), got.Status.Replicas)
	return nil
}

// UpdateBackoff is how step 3 retries a conflict: up to 8 attempts, 10 ms
// apart at first and twice as long each time (7 waits, 1.3 s in all). client-go's
// retry.DefaultRetry (5 attempts, 10 ms apart) can run out here: while the
// Deployment controller rolls the Deployment out, it writes the status several
// times a second, and each of those writes is a new resourceVersion too.
var UpdateBackoff = wait.Backoff{Steps: 8, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.1}

// update sets 3 replicas and SecondImage with a read-modify-write inside
// retry.RetryOnConflict. An update (PUT) carries the resourceVersion it read;
// the API server refuses it with 409 Conflict when the object changed since,
// and RetryOnConflict then runs the function again: read, modify, write. On the
// first attempt the second writer changes the Deployment between the read and
// the write, so that the conflict happens; the Deployment controller's status
// writes may cause more. Any other error ends the retries.
func (d *Demo) update(ctx context.Context) error {
	deployments := d.Client.AppsV1().Deployments(d.Namespace)
	attempt := 0
	return retry.RetryOnConflict(UpdateBackoff, func() error {
		attempt++
		current, err := deployments.Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		read := current.ResourceVersion
		fmt.Fprintf(d.Out, "3. update, attempt %d: GET deployments/%s: resourceVersion %s\n", attempt, d.Name, read)
		if attempt == 1 && d.SecondWriter != nil {
			if err := d.interfere(ctx, read); err != nil {
				return err
			}
		}
		current.Spec.Replicas = ptr.To[int32](3)
		current.Spec.Template.Spec.Containers[0].Image = SecondImage
		updated, err := deployments.Update(ctx, current, metav1.UpdateOptions{FieldManager: FieldManager})
		fmt.Fprintf(d.Out, "   PUT deployments/%s with resourceVersion %s, 3 replicas of %s\n", d.Name, read, SecondImage)
		switch {
		case apierrors.IsConflict(err):
			fmt.Fprintf(d.Out, "   409 Conflict: the Deployment changed since resourceVersion %s was read; RetryOnConflict reads it again\n", read)
		case err == nil:
			fmt.Fprintf(d.Out, "   200 OK: resourceVersion %s, generation %d\n", updated.ResourceVersion, updated.Generation)
		}
		return err
	})
}

// interfere is the second writer: another client that patches an annotation
// onto the Deployment, which gives it a new resourceVersion.
func (d *Demo) interfere(ctx context.Context, read string) error {
	patch := []byte(`{"metadata":{"annotations":{"controller-kit.dev/second-writer":"was here"}}}`)
	got, err := d.SecondWriter.AppsV1().Deployments(d.Namespace).Patch(ctx, d.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: SecondWriterAgent})
	if err != nil {
		return fmt.Errorf("the second writer's patch: %w", err)
	}
	fmt.Fprintf(d.Out, "   meanwhile a second writer patched an annotation: resourceVersion %s -> %s\n", read, got.ResourceVersion)
	return nil
}

// list reads every Deployment of the namespace that carries the demo's
// InstanceLabel. The API server filters by label; the client gets only those.
func (d *Demo) list(ctx context.Context) error {
	selector := InstanceLabel + "=" + d.Name
	list, err := d.Client.AppsV1().Deployments(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err
	}
	var names []string
	for _, item := range list.Items {
		names = append(names, fmt.Sprintf("%s (%d replicas of %s)", item.Name, ptr.Deref(item.Spec.Replicas, 0),
			item.Spec.Template.Spec.Containers[0].Image))
	}
	fmt.Fprintf(d.Out, "4. list: GET deployments?labelSelector=%s\n", selector)
	fmt.Fprintf(d.Out, "   200 OK: %d Deployment(s): %s (list resourceVersion %s)\n", len(list.Items), strings.Join(names, ", "), list.ResourceVersion)
	return nil
}

// deleteAndWait deletes the Deployment with foreground propagation and waits
// until it, its ReplicaSets and their Pods are gone. With Foreground the API
// server only marks the Deployment (deletionTimestamp and the finalizer
// foregroundDeletion); the garbage collector deletes its dependents first and
// then removes the finalizer, so the Deployment is the last to go. Background
// would delete the Deployment at once and its dependents after; Orphan would
// leave the ReplicaSets and Pods running without an owner.
func (d *Demo) deleteAndWait(ctx context.Context) error {
	start := time.Now()
	err := d.Client.AppsV1().Deployments(d.Namespace).Delete(ctx, d.Name,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.Out, "5. delete: DELETE deployments/%s with propagationPolicy Foreground\n", d.Name)
	fmt.Fprintln(d.Out, "   200 OK: the Deployment is marked; the garbage collector deletes its ReplicaSets and Pods, then the Deployment")
	last := ""
	err = wait.PollUntilContextTimeout(ctx, d.Poll, d.Timeout, true, func(ctx context.Context) (bool, error) {
		state, gone, err := d.remaining(ctx)
		if err != nil {
			return false, err
		}
		if state != last {
			fmt.Fprintf(d.Out, "   %s\n", state)
			last = state
		}
		return gone, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Deployment %s/%s, its ReplicaSets and its Pods to be gone (last seen: %s): %w", d.Namespace, d.Name, last, err)
	}
	fmt.Fprintf(d.Out, "   all gone %.1fs after the delete\n", time.Since(start).Seconds())
	return nil
}

// remaining says what of the demo still exists, in one line, and whether
// nothing does.
func (d *Demo) remaining(ctx context.Context) (state string, gone bool, err error) {
	selector := metav1.ListOptions{LabelSelector: InstanceLabel + "=" + d.Name}
	deployment := "Deployment gone"
	got, err := d.Client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	deploymentGone := apierrors.IsNotFound(err)
	switch {
	case err == nil:
		deployment = fmt.Sprintf("Deployment present (finalizers %v)", got.Finalizers)
	case !deploymentGone:
		return "", false, err
	}
	replicaSets, err := d.Client.AppsV1().ReplicaSets(d.Namespace).List(ctx, selector)
	if err != nil {
		return "", false, err
	}
	pods, err := d.Client.CoreV1().Pods(d.Namespace).List(ctx, selector)
	if err != nil {
		return "", false, err
	}
	state = fmt.Sprintf("%s, %d ReplicaSet(s), %d Pod(s)", deployment, len(replicaSets.Items), len(pods.Items))
	return state, deploymentGone && len(replicaSets.Items) == 0 && len(pods.Items) == 0, nil
}
