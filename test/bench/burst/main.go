// Command burst measures how long sample-controller takes to give a burst of
// Foos their Deployments: it starts the controller (watching one fresh
// namespace only), creates N Foos at once, and reports when every Foo has its
// Deployment and when every Foo's status is written. The namespace is deleted
// at the end. The Foos ask for 0 replicas, so the figure is the controller's
// (and the API server's), not the scheduler's. It is lesson 2's burst tool
// (docs/lessons/02-sample-controller.md, section 11); it lives in the bench
// module, beside make bench, and writes its Foos as unstructured objects
// (kittest.CreateFoos), so sample-controller's own module requires no harness.
//
// Usage (from test/bench, against $KUBECONFIG; `make -C sample-controller burst`
// builds the controller and does this):
//
//	GOWORK=off go run ./burst -n 1000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// createWorkers is how many goroutines create the burst's Foos.
const createWorkers = 50

func main() {
	n := flag.Int("n", 1000, "How many Foos to create at once.")
	controllerBin := flag.String("controller", "../../sample-controller/bin/sample-controller", "The controller binary to start (build it first: make -C sample-controller build).")
	kubeconfig := flag.String("kubeconfig", "", "Path to a kubeconfig. Empty: $KUBECONFIG, then ~/.kube/config.")
	timeout := flag.Duration("timeout", 5*time.Minute, "Give up after this long.")
	controllerArgs := flag.String("controller-args", "", "Extra controller flags, space-separated, e.g. \"--workers=8 --kube-api-qps=500\".")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *n, *controllerBin, strings.Fields(*controllerArgs), *kubeconfig, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "burst:", err)
		os.Exit(1)
	}
}

// run creates a fresh namespace, starts the controller on it, creates n Foos
// at once and reports when they have their Deployments and their statuses.
func run(ctx context.Context, n int, controllerBin string, controllerArgs []string, kubeconfig string, timeout time.Duration) error {
	kubeClient, dyn, err := newClients(kubeconfig)
	if err != nil {
		return err
	}
	ns, err := kubeClient.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "sample-burst-"},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating the namespace: %w", err)
	}
	namespace := ns.Name
	defer func() {
		fmt.Printf("deleting namespace %s (its Foos and Deployments go with it)\n", namespace)
		_ = kubeClient.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), namespace, metav1.DeleteOptions{})
	}()

	stopController, logPath, err := startController(ctx, controllerBin, controllerArgs, kubeconfig, namespace)
	if err != nil {
		return err
	}
	defer stopController()
	fmt.Printf("controller started (log: %s); creating %d Foos in namespace %s\n", logPath, n, namespace)

	start := time.Now()
	if _, err := kittest.CreateFoos(ctx, dyn, namespace, n, 0, createWorkers); err != nil {
		return err
	}
	fmt.Printf("created %d Foos in %s\n", n, time.Since(start).Round(time.Millisecond))
	return waitForBurst(ctx, kubeClient, dyn, namespace, n, start, timeout)
}

// newClients returns the clientsets of the kubeconfig (empty: kubectl's loading
// rules), with a rate limit high enough that the load generator is never the
// bottleneck.
func newClients(kubeconfig string) (kubernetes.Interface, dynamic.Interface, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
		&clientcmd.ConfigOverrides{},
	).ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	// The load generator must not be the bottleneck.
	cfg.QPS, cfg.Burst = 1000, 2000
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return kubeClient, dyn, nil
}

// startController starts the controller on namespace, its log in logPath in
// the temporary folder, and waits until it has started its workers; stop
// ends it with SIGTERM and waits for it.
func startController(ctx context.Context, controllerBin string, controllerArgs []string, kubeconfig, namespace string) (stop func(), logPath string, err error) {
	// The controller runs with its default flags (plus -controller-args),
	// except that it only watches our namespace and uses the same kubeconfig.
	args := append([]string{"--namespace=" + namespace}, controllerArgs...)
	if kubeconfig != "" {
		args = append(args, "--kubeconfig="+kubeconfig)
	}
	controller := exec.CommandContext(ctx, controllerBin, args...)
	logPath = fmt.Sprintf("%s/%s.log", os.TempDir(), namespace)
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	controller.Stdout, controller.Stderr = logFile, logFile
	controller.Cancel = func() error { return controller.Process.Signal(syscall.SIGTERM) }
	if err := controller.Start(); err != nil {
		logFile.Close()
		return nil, "", fmt.Errorf("starting %s (run `make -C sample-controller build` first): %w", controllerBin, err)
	}
	stop = func() {
		_ = controller.Process.Signal(syscall.SIGTERM)
		_ = controller.Wait()
		logFile.Close()
	}
	// Start the clock only once the controller is ready to work.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		log, err := os.ReadFile(logPath)
		return strings.Contains(string(log), "Starting workers"), err
	}); err != nil {
		stop()
		return nil, "", fmt.Errorf("the controller did not start its workers (see %s): %w", logPath, err)
	}
	return stop, logPath, nil
}

// waitForBurst waits (at most timeout) until n Deployments exist in namespace
// and every Foo's status has observed its generation, and prints both times
// since start.
func waitForBurst(ctx context.Context, kubeClient kubernetes.Interface, dyn dynamic.Interface, namespace string, n int, start time.Time, timeout time.Duration) error {
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var allDeployments, allStatus time.Duration
	err := wait.PollUntilContextCancel(waitCtx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if allDeployments == 0 {
			list, err := kubeClient.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return false, nil
			}
			if len(list.Items) < n {
				return false, nil
			}
			allDeployments = time.Since(start)
		}
		foos, err := dyn.Resource(kittest.FooGVR).Namespace(namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, nil
		}
		for _, foo := range foos.Items {
			if observed, _, _ := unstructured.NestedInt64(foo.Object, "status", "observedGeneration"); observed != foo.GetGeneration() {
				return false, nil
			}
		}
		allStatus = time.Since(start)
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d Deployments and statuses (deployments done after %s): %w", n, allDeployments, err)
	}
	fmt.Printf("all %d Foos have their Deployment %s after the first create\n", n, allDeployments.Round(time.Millisecond))
	fmt.Printf("all %d Foos have their status written %s after the first create\n", n, allStatus.Round(time.Millisecond))
	return nil
}
