// Command sample-controller runs the Foo controller of lesson 2: for every Foo it
// keeps an owned Deployment at the Foo's replica count and reports the
// Deployment's available replicas in the Foo's status.
//
// This file is the wiring: the command and its flags, clients, the missing-CRD
// check, informers, events, leader election and signal handling. The loop is in
// pkg/controller. The command starts the way kube-controller-manager does: a
// cobra command run by k8s.io/component-base/cli, pflag flags in named sections,
// "_" accepted for "-" in flag names, and component-base's logging flags (-v,
// --vmodule). Compare with k8s.io/sample-controller/main.go (plain Go flags) and
// with kubernetes' cmd/kube-controller-manager (docs/lessons/00-reading-kubernetes.md
// reads it). With --metrics-bind-address it serves /metrics and /debug/pprof/
// (serveMetrics).
package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/metrics/legacyregistry"
	// Imported for its init functions, as kube-controller-manager imports it:
	// they hand client-go a MetricsProvider for every workqueue (workqueue_*,
	// labelled with the queue's name) and register its REST-client and
	// leader-election hooks (rest_client_request_duration_seconds,
	// rest_client_rate_limiter_duration_seconds, leader_election_master_status),
	// all in legacyregistry.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	"k8s.io/component-base/term"
	"k8s.io/klog/v2"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/controller-kit/controller-kit/sample-controller/pkg/controller"
	"github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned"
	fooinformers "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/informers/externalversions"
	foolisters "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/listers/samplecontroller/v1alpha1"
)

// crdInstallHint is how to install the Foo CRD, printed when it is missing.
const crdInstallHint = "run `make run-sample` from the repository root, or: kubectl apply --server-side -f sample-controller/config/crd/samplecontroller.k8s.io_foos.yaml"

// reconcilerDeps is what a Reconciler may use: clients for writes, listers for
// reads from the informers' caches, and the event recorder.
type reconcilerDeps struct {
	kubeClient  kubernetes.Interface
	fooClient   versioned.Interface
	foos        foolisters.FooLister
	deployments appslisters.DeploymentLister
	recorder    record.EventRecorder
}

// reconcilers maps each --reconciler value to the Reconciler it runs. To try
// your own, add an entry here.
var reconcilers = map[string]func(reconcilerDeps) controller.Reconciler{
	"reference": func(d reconcilerDeps) controller.Reconciler {
		return &controller.FooReconciler{
			KubeClient:  d.kubeClient,
			FooClient:   d.fooClient,
			Foos:        d.foos,
			Deployments: d.deployments,
			Recorder:    d.recorder,
		}
	},
	"stub": func(d reconcilerDeps) controller.Reconciler {
		return &controller.StubReconciler{Foos: d.foos, Deployments: d.deployments}
	},
}

// reconcilerNames returns the keys of reconcilers, sorted.
func reconcilerNames() []string {
	return slices.Sorted(maps.Keys(reconcilers))
}

// reconcilerKnown returns nil when name is a key of reconcilers, else an error
// naming the flag and the keys and, for a typo (two letters off at most), the
// one meant.
func reconcilerKnown(name string) error {
	if _, ok := reconcilers[name]; ok {
		return nil
	}
	names := reconcilerNames()
	for _, known := range names {
		if editDistance(name, known) <= 2 {
			return fmt.Errorf("--reconciler=%q: want one of %s; did you mean %s?", name, strings.Join(names, ", "), known)
		}
	}
	return fmt.Errorf("--reconciler=%q: want one of %s (add yours to the reconcilers map first)", name, strings.Join(names, ", "))
}

// options are the command-line flags.
type options struct {
	kubeconfig string
	namespace  string
	workers    int
	qps        float64
	burst      int
	resync     time.Duration
	reconciler string
	// maxRetryDelay bounds the wait between two retries of a failed Foo.
	maxRetryDelay time.Duration
	// listReconcilers asks for the names --reconciler accepts instead of a run.
	listReconcilers bool
	leaderElect     bool
	leaseNS         string
	leaseName       string
	leaseDuration   time.Duration
	renewDeadline   time.Duration
	retryPeriod     time.Duration
	// metricsAddr is where /metrics and /debug/pprof/ are served; "0" = nowhere.
	metricsAddr string
	// logs holds -v, --vmodule and the other logging flags (component-base's
	// LoggingConfiguration, as kube-controller-manager has it).
	logs *logsapi.LoggingConfiguration
}

func main() {
	// cli.Run is kube-controller-manager's main too: it makes flag names accept
	// "_" for "-" (WordSepNormalizeFunc), adds the klog flags that are not
	// already there, starts klog after the flags are parsed, and turns an error
	// from RunE into exit code 1.
	os.Exit(cli.Run(newCommand()))
}

// newCommand returns the cobra command that main runs, with its flags in
// named sections printed by --help one section at a time. Compare with
// NewControllerManagerCommand in kubernetes'
// cmd/kube-controller-manager/app/controllermanager.go.
func newCommand() *cobra.Command {
	o := options{logs: logsapi.NewLoggingConfiguration()}
	cmd := &cobra.Command{
		Use: controller.ControllerName,
		Long: `sample-controller keeps, for every Foo, an owned Deployment at the Foo's
replica count and reports the Deployment's available replicas in the Foo's
status. It is lesson 2 of controller-kit: docs/lessons/02-sample-controller.md.`,
		// Like kube-controller-manager: flags only, no arguments.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("%q takes flags only, got the argument %q (see --help)", cmd.CommandPath(), args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.listReconcilers {
				if err := reconcilerKnown(o.reconciler); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(reconcilerNames(), "\n"))
				return nil
			}
			// Apply -v, --vmodule and the log format now that they are parsed;
			// -v=1 then lists every flag with its value, as components do.
			if err := logsapi.ValidateAndApply(o.logs, nil); err != nil {
				return err
			}
			cliflag.PrintFlags(cmd.Flags())

			// The first SIGINT/SIGTERM cancels ctx and starts a graceful
			// shutdown; a second one kills the process at once.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			go func() {
				<-ctx.Done()
				stop()
			}()
			return run(ctx, o)
		},
	}

	var sections cliflag.NamedFlagSets
	generic := sections.FlagSet("generic")
	generic.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Empty: $KUBECONFIG, ~/.kube/config, then the in-cluster config.")
	generic.StringVar(&o.namespace, "namespace", metav1.NamespaceAll, "Only watch Foos and Deployments in this namespace. Empty: all namespaces.")
	generic.Float64Var(&o.qps, "kube-api-qps", 200, "Sustained API requests per second this client allows itself (client-go's default of 5 makes a 1000-Foo burst take minutes).")
	generic.IntVar(&o.burst, "kube-api-burst", 400, "API requests allowed in a burst above --kube-api-qps.")
	generic.DurationVar(&o.resync, "resync", 0, "How often informers redeliver every cached object (0: never; events alone drive the loop).")
	generic.StringVar(&o.metricsAddr, "metrics-bind-address", "0", "Serve /metrics and /debug/pprof/ over plain HTTP on this address, for example 127.0.0.1:8080. 0: off (they have no authentication: keep them on loopback).")

	// kube-controller-manager has a section per controller ("deployment
	// controller" holds --concurrent-deployment-syncs); this is ours.
	foo := sections.FlagSet("foo controller")
	foo.IntVar(&o.workers, "workers", 16, "How many Foos are reconciled in parallel (each mostly waits on the API server, so more than the CPU count helps).")
	foo.DurationVar(&o.maxRetryDelay, "max-retry-delay", controller.DefaultMaxRetryDelay, "The longest wait between two retries of a failed Foo (the backoff starts at 5ms and doubles): the end of an outage is noticed within it. From 1s to 10m.")
	foo.StringVar(&o.reconciler, "reconciler", "reference", "Which Reconciler runs: reference (the kit's) or stub (logs only, your starting point); see reconcilers.")
	foo.BoolVar(&o.listReconcilers, "list-reconcilers", false, "Print the names --reconciler accepts, one per line, and exit (after refusing a --reconciler that names none of them).")

	// kube-controller-manager's flag names (component-base's leader-election
	// flags); the guestbook manager uses the same ones.
	election := sections.FlagSet("leader election")
	election.BoolVar(&o.leaderElect, "leader-elect", false, "Take a Lease before reconciling, so only one of several replicas is active.")
	election.StringVar(&o.leaseNS, "leader-elect-resource-namespace", "", "Namespace of the leader-election Lease. Empty: $POD_NAMESPACE, else default.")
	election.StringVar(&o.leaseName, "leader-elect-resource-name", controller.ControllerName, "Name of the leader-election Lease.")
	election.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long other replicas wait after the leader's last renewal before taking over.")
	election.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps retrying a renewal before it gives up leadership (and exits).")
	election.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "How often replicas try to take or renew the Lease.")

	logsapi.AddFlags(o.logs, sections.FlagSet("logs"))
	// --help, and any klog flag the logs section does not already have.
	globalflag.AddGlobalFlags(sections.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())

	for _, fs := range sections.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, sections, cols)
	return cmd
}

// run starts the controller and returns when ctx is cancelled (nil) or when it
// cannot start or loses leadership (an error, so the process exits non-zero).
func run(ctx context.Context, o options) error {
	if err := reconcilerKnown(o.reconciler); err != nil {
		return err
	}
	if o.maxRetryDelay < time.Second || o.maxRetryDelay > 10*time.Minute {
		return fmt.Errorf("--max-retry-delay=%s: want a delay from 1s to 10m, for example 30s", o.maxRetryDelay)
	}
	// Served by every replica, leader or not, from the start: a follower's
	// metrics say it is waiting.
	if o.metricsAddr != "0" {
		stopServing, err := serveMetrics(klog.FromContext(ctx), o.metricsAddr)
		if err != nil {
			return err
		}
		defer stopServing()
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
		&clientcmd.ConfigOverrides{},
	).ClientConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.QPS = float32(o.qps)
	cfg.Burst = o.burst
	rest.AddUserAgent(cfg, controller.ControllerName)

	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	fooClient, err := versioned.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the Foo client: %w", err)
	}

	if err := checkFooCRD(ctx, kubeClient); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Connected; the API server serves Foos", "server", cfg.Host, "leaderElect", o.leaderElect)

	// Events: the recorder sends them to the API server and also logs them.
	// Registering Foo in client-go's scheme lets the recorder name Foos.
	if err := samplev1alpha1.AddToScheme(scheme.Scheme); err != nil {
		return fmt.Errorf("registering Foo in the client scheme: %w", err)
	}
	// Events get a clientset of their own, and with it a rate limiter of their
	// own (each clientset makes one from cfg's QPS and burst), as kube-scheduler
	// does (createClients in cmd/kube-scheduler/app/options/options.go): in a
	// burst, an event never takes a Deployment's place in kubeClient's line.
	eventClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the events client: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartStructuredLogging(0)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventClient.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controller.ControllerName})

	reconcile := func(ctx context.Context) error {
		return runController(ctx, o, kubeClient, fooClient, recorder)
	}
	if !o.leaderElect {
		return reconcile(ctx)
	}
	return runWithLeaderElection(ctx, o, kubeClient, reconcile)
}

// serveMetrics serves, on addr until stop is called, /metrics (everything
// registered in component-base's legacyregistry, in Prometheus' text format) and
// /debug/pprof/ (the runtime's profiles: go tool pprof reads them). It fails at
// once when addr cannot be listened on. workqueue-example/metrics.go serves the
// same; kube-controller-manager serves both on its secure port (compare with
// NewBaseHandler in k8s.io/controller-manager/app/serve.go).
func serveMetrics(logger klog.Logger, addr string) (stop func(), err error) {
	// A mux of our own: importing net/http/pprof also registers its handlers on
	// http.DefaultServeMux, which this program never serves.
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/debug/pprof/", httppprof.Index) // the index, and /debug/pprof/<name> for each profile
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)

	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	// No write timeout: a CPU profile answers only after its 30 s.
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "The metrics endpoint stopped")
		}
	}()
	logger.Info("Serving metrics and profiles", "metrics", "http://"+listener.Addr().String()+"/metrics",
		"pprof", "http://"+listener.Addr().String()+"/debug/pprof/")
	return func() { _ = server.Close() }, nil
}

// checkFooCRD fails fast, naming the fix, when the API server does not serve
// Foos. Without this check the Foo informer would retry its list forever and
// the controller would sit silently waiting for its cache to sync. It gives up
// after 30 s when the API server does not answer.
func checkFooCRD(ctx context.Context, kubeClient kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	gv := samplev1alpha1.SchemeGroupVersion.String()
	resources, err := kubeClient.Discovery().ServerResourcesForGroupVersionWithContext(ctx, gv)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("the Foo CRD (foos.%s) is not installed on this cluster; %s", samplev1alpha1.SchemeGroupVersion.Group, crdInstallHint)
	}
	if err != nil {
		return fmt.Errorf("asking the API server whether it serves %s: %w", gv, err)
	}
	for _, r := range resources.APIResources {
		if r.Name == "foos" {
			return nil
		}
	}
	return fmt.Errorf("the API server serves %s but not foos; %s", gv, crdInstallHint)
}

// stripManagedFields is the informers' transform: each object is cached without
// metadata.managedFields, which this controller never reads and which are often
// the biggest part of a small object, so the cache of 1000 Deployments takes
// noticeably less memory. Writes are unaffected: an Update that omits
// managedFields leaves the server's record of field owners as it was.
// controller-runtime offers the same as cache.TransformStripManagedFields.
func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// runController starts the informers and the Controller with the chosen
// Reconciler, and blocks until ctx is cancelled.
func runController(ctx context.Context, o options, kubeClient kubernetes.Interface, fooClient versioned.Interface, recorder record.EventRecorder) error {
	kubeFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, o.resync,
		kubeinformers.WithNamespace(o.namespace), kubeinformers.WithTransform(stripManagedFields))
	fooFactory := fooinformers.NewSharedInformerFactoryWithOptions(fooClient, o.resync,
		fooinformers.WithNamespace(o.namespace), fooinformers.WithTransform(stripManagedFields))
	deployments := kubeFactory.Apps().V1().Deployments()
	foos := fooFactory.Samplecontroller().V1alpha1().Foos()

	r := reconcilers[o.reconciler](reconcilerDeps{
		kubeClient:  kubeClient,
		fooClient:   fooClient,
		foos:        foos.Lister(),
		deployments: deployments.Lister(),
		recorder:    recorder,
	})

	c, err := controller.New(ctx, foos, deployments, r, o.maxRetryDelay)
	if err != nil {
		return err
	}
	// Start only after New has registered the event handlers; the factories
	// start every informer that was asked for (here: Deployments and Foos).
	kubeFactory.Start(ctx.Done())
	fooFactory.Start(ctx.Done())
	defer kubeFactory.Shutdown()
	defer fooFactory.Shutdown()

	klog.FromContext(ctx).Info("Starting controller", "reconciler", o.reconciler, "workers", o.workers, "namespace", o.namespace, "qps", o.qps, "burst", o.burst)
	c.Run(ctx, o.workers)
	return nil
}

// errLostLeadership is returned when another replica took the Lease while this
// one was still running: it must stop at once and let the process restart.
var errLostLeadership = errors.New("lost leadership: another replica holds the Lease now; exiting so this one restarts as a follower")

// runWithLeaderElection runs reconcile only while this process holds the
// Lease. It returns nil after a graceful shutdown (the Lease is released so a
// follower takes over at once) and errLostLeadership if the Lease was lost.
func runWithLeaderElection(ctx context.Context, o options, kubeClient kubernetes.Interface, reconcile func(context.Context) error) error {
	logger := klog.FromContext(ctx)
	hostname, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("reading the hostname for the leader-election identity: %w", err)
	}
	// The suffix keeps two replicas on one host (or a restarted pod) distinct.
	identity := hostname + "_" + string(uuid.NewUUID())
	namespace := o.leaseNS
	if namespace == "" {
		namespace = os.Getenv("POD_NAMESPACE")
	}
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}

	var leading atomic.Bool
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: o.leaseName},
		Client:     kubeClient.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}

	// Leader election gets a context of its own, cancelled only once the
	// workers have stopped: releasing the Lease earlier would let a follower
	// start while this replica still finishes its last Foos.
	electionCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()
	// A signal while still waiting for the Lease ends the wait.
	context.AfterFunc(ctx, func() {
		if !leading.Load() {
			stopElection()
		}
	})

	var runErr error
	lost := false
	// NewLeaderElector checks that the three durations fit together (RunOrDie
	// would panic on the same error); the error names the flags to change.
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            o.leaseName,
		LeaseDuration:   o.leaseDuration,
		RenewDeadline:   o.renewDeadline,
		RetryPeriod:     o.retryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			// leadCtx is cancelled when the Lease cannot be renewed in time.
			OnStartedLeading: func(leadCtx context.Context) {
				leading.Store(true)
				logger.Info("Became the leader; starting to reconcile", "identity", identity, "lease", klog.KRef(namespace, o.leaseName))
				runCtx, cancel := context.WithCancel(leadCtx)
				defer cancel()
				context.AfterFunc(ctx, cancel)
				runErr = reconcile(runCtx)
				stopElection()
			},
			OnStoppedLeading: func() {
				// client-go calls this when the election ends, also in a
				// replica that never led: it has nothing to release.
				if !leading.Load() {
					return
				}
				// Every planned stop cancels electionCtx first; if it is still
				// live, the Lease was taken from us.
				if electionCtx.Err() == nil {
					lost = true
					return
				}
				logger.Info("Stopped leading; the Lease is released", "identity", identity)
			},
			OnNewLeader: func(current string) {
				if current != identity {
					logger.Info("Another replica is the leader; waiting", "leader", current)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("--leader-elect-lease-duration=%s --leader-elect-renew-deadline=%s --leader-elect-retry-period=%s do not work together: %w "+
			"(the leader retries a renewal every retry period until the renew deadline, and the others take over after the lease duration)",
			o.leaseDuration, o.renewDeadline, o.retryPeriod, err)
	}
	elector.Run(electionCtx)
	if lost {
		// Do not wait for the workers: a new leader may already be writing.
		return errLostLeadership
	}
	return runErr
}

// editDistance is the number of one-letter edits that turn a into b (Levenshtein distance).
// Each tier has this copy on purpose: a tier stands alone, importing no code of the kit.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
