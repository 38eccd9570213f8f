/*
Copyright 2026 The controller-kit Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command manager runs the Guestbook operator: a controller-runtime manager with
// the Guestbook controller, its admission webhooks, metrics and health probes.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"maps"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
	"github.com/controller-kit/controller-kit/kubebuilder-guestbook/internal/controller"
	webhookv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/internal/webhook/v1"
	// +kubebuilder:scaffold:imports
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(webappv1.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
}

// reconcilerDeps is what a Reconciler may use: the manager's client (reads from
// its cache, writes as controller.ControllerName), the scheme for owner references, the event
// recorder, and the directory ConfigMap every Guestbook is registered in.
type reconcilerDeps struct {
	client    client.Client
	scheme    *runtime.Scheme
	recorder  events.EventRecorder
	directory *controller.Directory
	// maxRetryDelay is --max-retry-delay.
	maxRetryDelay time.Duration
}

// managedReconciler is a Reconciler as kubebuilder writes it: SetupWithManager
// registers it with the manager, with the watches it needs.
type managedReconciler interface {
	reconcile.Reconciler
	SetupWithManager(mgr ctrl.Manager) error
}

// reconcilers maps each --reconciler value to the Reconciler it runs, and is the
// one place that names them: the flag check (options.validate) accepts exactly
// these keys and setupReconciler sets up the chosen one. To try your own, add an
// entry here.
var reconcilers = map[string]func(reconcilerDeps) managedReconciler{
	"reference": func(d reconcilerDeps) managedReconciler {
		return &controller.GuestbookReconciler{
			Client:        d.client,
			Scheme:        d.scheme,
			Recorder:      d.recorder,
			Directory:     d.directory,
			MaxRetryDelay: d.maxRetryDelay,
		}
	},
	"stub": func(d reconcilerDeps) managedReconciler {
		return &controller.StubReconciler{Client: d.client, MaxRetryDelay: d.maxRetryDelay}
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

func main() {
	if err := run(); err != nil {
		// setupLog logs without a stack trace: the error names its fix.
		setupLog.Error(err, "Manager failed")
		os.Exit(1)
	}
}

// options are the command-line flags (parseFlags says what each means). The
// names are those of kubebuilder's scaffold where it has the flag; the kit adds
// --reconciler, --list-reconcilers, --workers, --max-retry-delay,
// --enable-webhooks, --operator-namespace, the Lease's place and timings
// --leader-elect-resource-namespace/-resource-name and
// --leader-elect-lease-duration/-renew-deadline/-retry-period, and
// --kube-api-qps/-burst: the same names, with the same meaning, as in the other
// two tiers (and, for leader election, as in kube-controller-manager).
type options struct {
	metricsAddr                                      string
	metricsCertPath, metricsCertName, metricsCertKey string
	webhookCertPath, webhookCertName, webhookCertKey string
	webhookPort                                      int
	enableLeaderElection                             bool
	leaderElectionNamespace, leaderElectionName      string
	leaseDuration, renewDeadline, retryPeriod        time.Duration
	probeAddr                                        string
	secureMetrics                                    bool
	enableHTTP2                                      bool
	enableWebhooks                                   bool
	workers                                          int
	maxRetryDelay                                    time.Duration
	reconcilerName                                   string
	listReconcilers                                  bool
	operatorNamespace                                string
	qps                                              float64
	burst                                            int
	// zap holds the logger's flags (--zap-log-level, --zap-devel, ...).
	zap zap.Options
}

// run parses the flags, builds the manager with the chosen Reconciler and the
// webhooks, and runs it until SIGTERM/SIGINT.
func run() error {
	o := parseFlags()
	if o.listReconcilers {
		if err := reconcilerKnown(o.reconcilerName); err != nil {
			return err
		}
		fmt.Println(strings.Join(reconcilerNames(), "\n"))
		return nil
	}

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	// A setup error (a missing CRD, a bad flag) names its fix; the stack trace that
	// the development logger adds to every error would only bury that message, so
	// setupLog records stack traces for panics only.
	setupLog = zap.New(zap.UseFlagOptions(&o.zap), zap.StacktraceLevel(zapcore.DPanicLevel)).WithName("setup")

	if err := o.validate(); err != nil {
		return err
	}
	mgr, directory, err := newManager(o)
	if err != nil {
		return err
	}
	if err := setupReconciler(mgr, directory, o); err != nil {
		return err
	}
	if o.enableWebhooks {
		if err := webhookv1.SetupGuestbookWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("creating the Guestbook webhooks: %w", err)
		}
	} else {
		setupLog.Info("Webhooks are off: the webhook server does not start; the CRD schema still validates")
	}
	// +kubebuilder:scaffold:builder

	if err := addHealthChecks(mgr, o.enableWebhooks); err != nil {
		return err
	}

	setupLog.Info("Starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	return nil
}

// parseFlags binds the flags to an options and parses the command line
// (flag.CommandLine, where controller-runtime registers --kubeconfig).
func parseFlags() options {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to "+
		"(0 disables it).")
	flag.BoolVar(&o.enableLeaderElection, "leader-elect", false,
		"Enable leader election for controller manager. "+
			"Enabling this will ensure there is only one active controller manager. "+
			"config/manager/manager.yaml turns it on in-cluster.")
	flag.StringVar(&o.leaderElectionNamespace, "leader-elect-resource-namespace", "",
		"The namespace of the leader election Lease. Empty: the Pod's namespace in-cluster, else $POD_NAMESPACE, else default (as in sample-controller).")
	flag.StringVar(&o.leaderElectionName, "leader-elect-resource-name", "90d9e30a.controller-kit.dev",
		"The name of the leader election Lease (kubebuilder's LeaderElectionID).")
	flag.IntVar(&o.workers, "workers", 4,
		"How many Guestbooks are reconciled in parallel (controller-runtime's MaxConcurrentReconciles; one Guestbook is never reconciled by two workers at once).")
	flag.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long other replicas wait after the leader's last renewal before taking over.")
	flag.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader keeps retrying a renewal before it gives up leadership (and exits).")
	flag.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second,
		"How often replicas try to take or renew the Lease.")
	flag.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"If set, the metrics endpoint is served securely via HTTPS. Use --metrics-secure=false to use HTTP instead.")
	flag.StringVar(&o.webhookCertPath, "webhook-cert-path", "", "The directory that contains the webhook certificate.")
	flag.StringVar(&o.webhookCertName, "webhook-cert-name", "tls.crt", "The name of the webhook certificate file.")
	flag.StringVar(&o.webhookCertKey, "webhook-cert-key", "tls.key", "The name of the webhook key file.")
	flag.IntVar(&o.webhookPort, "webhook-port", 9443, "Port the webhook server listens on.")
	flag.StringVar(&o.metricsCertPath, "metrics-cert-path", "",
		"The directory that contains the metrics server certificate.")
	flag.StringVar(&o.metricsCertName, "metrics-cert-name", "tls.crt", "The name of the metrics server certificate file.")
	flag.StringVar(&o.metricsCertKey, "metrics-cert-key", "tls.key", "The name of the metrics server key file.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"If set, HTTP/2 will be enabled for the metrics and webhook servers")
	flag.BoolVar(&o.enableWebhooks, "enable-webhooks", envBool("ENABLE_WEBHOOKS", true),
		"Serve the defaulting and validating webhooks (needs a serving certificate). "+
			"Defaults to $ENABLE_WEBHOOKS, else true; make run turns them off.")
	flag.DurationVar(&o.maxRetryDelay, "max-retry-delay", controller.DefaultMaxRetryDelay,
		"The longest wait between two retries of a failed Guestbook (the backoff starts at 5ms and doubles): the end of an outage is noticed within it. From 1s to 10m.")
	flag.StringVar(&o.reconcilerName, "reconciler", "reference",
		"The Reconciler to run: reference (the finished operator) or stub (logs only; the lesson's starting point); see reconcilers.")
	flag.BoolVar(&o.listReconcilers, "list-reconcilers", false, "Print the names --reconciler accepts, one per line, and exit (after refusing a --reconciler that names none of them).")
	flag.StringVar(&o.operatorNamespace, "operator-namespace", envOr("POD_NAMESPACE", "kubebuilder-guestbook-system"),
		"The namespace of the directory ConfigMap "+controller.DirectoryName+". Defaults to $POD_NAMESPACE.")
	flag.Float64Var(&o.qps, "kube-api-qps", 200, "Queries per second the client may make to the API server.")
	flag.IntVar(&o.burst, "kube-api-burst", 400, "Burst of queries the client may make to the API server.")
	o.zap = zap.Options{
		Development: true,
	}
	o.zap.BindFlags(flag.CommandLine)
	flag.Parse()
	return o
}

// validate returns an error naming the flag and a fix for a value that cannot
// work, and fills in the Lease's namespace outside a Pod.
func (o *options) validate() error {
	if o.workers < 1 {
		return fmt.Errorf("--workers=%d: need at least 1 worker, for example --workers=4", o.workers)
	}
	if err := checkMaxRetryDelay(o.maxRetryDelay); err != nil {
		return err
	}
	if err := reconcilerKnown(o.reconcilerName); err != nil {
		return err
	}
	if o.enableLeaderElection {
		// In a Pod, controller-runtime puts the Lease in the Pod's namespace (read
		// from this file); outside one it needs a namespace, which sample-controller
		// finds the same way: $POD_NAMESPACE, else default.
		if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); o.leaderElectionNamespace == "" && err != nil {
			o.leaderElectionNamespace = envOr("POD_NAMESPACE", "default")
		}
		if err := checkLeaseTimings(o.leaseDuration, o.renewDeadline, o.retryPeriod); err != nil {
			return err
		}
	}
	return nil
}

// newManager builds the manager from the flags, and the directory ConfigMap's
// handle that its cache is told about; it fails, naming the fix, when the
// Guestbook CRD is not installed.
func newManager(o options) (ctrl.Manager, *controller.Directory, error) {
	var tlsOpts []func(*tls.Config)
	// if the enable-http2 flag is false (the default), http/2 should be disabled
	// due to its vulnerabilities. More specifically, disabling http/2 will
	// prevent from being vulnerable to the HTTP/2 Stream Cancellation and
	// Rapid Reset CVEs. For more information see:
	// - https://github.com/advisories/GHSA-qppj-fm5r-hxr3
	// - https://github.com/advisories/GHSA-4374-p667-p6c8
	disableHTTP2 := func(c *tls.Config) {
		setupLog.Info("Disabling HTTP/2")
		c.NextProtos = []string{"http/1.1"}
	}

	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, disableHTTP2)
	}
	webhookServer := newWebhookServer(o, tlsOpts)
	metricsServerOptions := newMetricsServerOptions(o, tlsOpts)

	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	// The client's rate limit, as the flags say. Left unset, there would be none:
	// ctrl.GetConfig turns client-side limiting off (QPS -1) when the kubeconfig
	// sets no QPS (controller-runtime's pkg/client/config/config.go).
	restConfig.QPS, restConfig.Burst = float32(o.qps), o.burst
	// Every request names the operator, as in the other tiers (the user agent
	// then reads "manager/<version> (...) guestbook-operator").
	rest.AddUserAgent(restConfig, controller.ControllerName)

	// The directory ConfigMap the Reconciler keeps; the manager's cache holds
	// that one ConfigMap and no other (Directory.CacheOptions).
	directory := &controller.Directory{Key: types.NamespacedName{Namespace: o.operatorNamespace, Name: controller.DirectoryName}}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: directory.CacheOptions()}},
		Metrics:                 metricsServerOptions,
		WebhookServer:           webhookServer,
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.enableLeaderElection,
		LeaderElectionID:        o.leaderElectionName,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		LeaseDuration:           &o.leaseDuration,
		RenewDeadline:           &o.renewDeadline,
		RetryPeriod:             &o.retryPeriod,
		// The process exits as soon as the manager stops, so it can hand the
		// Lease over at once instead of making the next leader wait it out.
		LeaderElectionReleaseOnCancel: true,
		// A cache that cannot sync at start (say, the CRD was deleted right after
		// the check below) fails the manager within a bounded time instead of hanging.
		// MaxConcurrentReconciles is --workers, for every controller of the manager.
		Controller: config.Controller{CacheSyncTimeout: 2 * time.Minute, MaxConcurrentReconciles: o.workers},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("creating manager: %w", err)
	}

	// Fail fast, naming the fix, when the Guestbook CRD is missing.
	if err := controller.RequireCRD(mgr.GetRESTMapper(), controller.GuestbookGVK,
		"install it with 'make install' in kubebuilder-guestbook (or 'make run-guestbook' at the top folder) and start the operator again"); err != nil {
		return nil, nil, err
	}
	return mgr, directory, nil
}

// newWebhookServer returns the webhook server: its port, TLS options and, with
// --webhook-cert-path, its certificate files. It starts only if a webhook is
// set up.
func newWebhookServer(o options, tlsOpts []func(*tls.Config)) webhook.Server {
	webhookServerOptions := webhook.Options{
		TLSOpts: tlsOpts,
		Port:    o.webhookPort,
	}
	if len(o.webhookCertPath) > 0 {
		setupLog.Info("Initializing webhook certificate watcher using provided certificates",
			"webhook-cert-path", o.webhookCertPath, "webhook-cert-name", o.webhookCertName, "webhook-cert-key", o.webhookCertKey)

		webhookServerOptions.CertDir = o.webhookCertPath
		webhookServerOptions.CertName = o.webhookCertName
		webhookServerOptions.KeyName = o.webhookCertKey
	}
	return webhook.NewServer(webhookServerOptions)
}

// newMetricsServerOptions returns the metrics endpoint's address, security and
// handlers; it also turns on the client's latency metrics the endpoint serves.
func newMetricsServerOptions(o options, tlsOpts []func(*tls.Config)) metricsserver.Options {
	// The metrics endpoint is enabled in config/default/kustomization.yaml. With
	// --metrics-secure (the default) it serves HTTPS and only answers callers the
	// API server authenticates and authorizes (config/rbac/metrics_reader_role.yaml).
	// More info:
	// - https://pkg.go.dev/sigs.k8s.io/controller-runtime@v0.25.2/pkg/metrics/server
	// - https://book.kubebuilder.io/reference/metrics.html
	//
	// Beside controller-runtime's own series (workqueue_*, labelled with the
	// controller's name, and controller_runtime_reconcile_*), the endpoint has
	// the client's request and rate-limiter latencies, which controller-runtime
	// leaves off by default; the other tiers serve the same names. And, as in
	// the other tiers, /debug/pprof/ beside /metrics (behind the same filter).
	metrics.RegisterRESTClientMetrics(metrics.MetricRequestLatency, metrics.MetricRateLimiterLatency)
	metricsServerOptions := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		TLSOpts:       tlsOpts,
		ExtraHandlers: map[string]http.Handler{
			"/debug/pprof/":        http.HandlerFunc(httppprof.Index), // the index, and /debug/pprof/<name> for each profile
			"/debug/pprof/cmdline": http.HandlerFunc(httppprof.Cmdline),
			"/debug/pprof/profile": http.HandlerFunc(httppprof.Profile),
			"/debug/pprof/symbol":  http.HandlerFunc(httppprof.Symbol),
			"/debug/pprof/trace":   http.HandlerFunc(httppprof.Trace),
		},
	}
	if o.secureMetrics {
		metricsServerOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	// Without --metrics-cert-path controller-runtime generates a self-signed
	// certificate for the metrics server: fine for development, not for
	// production (config/default/kustomization.yaml shows the cert-manager way).
	if len(o.metricsCertPath) > 0 {
		setupLog.Info("Initializing metrics certificate watcher using provided certificates",
			"metrics-cert-path", o.metricsCertPath, "metrics-cert-name", o.metricsCertName, "metrics-cert-key", o.metricsCertKey)

		metricsServerOptions.CertDir = o.metricsCertPath
		metricsServerOptions.CertName = o.metricsCertName
		metricsServerOptions.KeyName = o.metricsCertKey
	}
	return metricsServerOptions
}

// setupReconciler sets up the Reconciler --reconciler names with the manager,
// writing through a client that owns its fields as controller.ControllerName.
func setupReconciler(mgr ctrl.Manager, directory *controller.Directory, o options) error {
	writer := client.WithFieldOwner(mgr.GetClient(), controller.ControllerName)
	directory.Client, directory.Reader = writer, mgr.GetAPIReader()
	r := reconcilers[o.reconcilerName](reconcilerDeps{
		client:        writer,
		scheme:        mgr.GetScheme(),
		recorder:      mgr.GetEventRecorder(controller.ControllerName),
		directory:     directory,
		maxRetryDelay: o.maxRetryDelay,
	})
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("creating the guestbook controller: %w", err)
	}
	setupLog.Info("Guestbook controller set up", "reconciler", o.reconcilerName, "workers", o.workers, "maxRetryDelay", o.maxRetryDelay,
		"directory", directory.Key)
	return nil
}

// addHealthChecks adds /healthz, and /readyz, which waits for the webhook
// server when the webhooks are on.
func addHealthChecks(mgr ctrl.Manager, enableWebhooks bool) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("setting up the health check: %w", err)
	}
	readyCheck := healthz.Ping
	if enableWebhooks {
		readyCheck = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", readyCheck); err != nil {
		return fmt.Errorf("setting up the ready check: %w", err)
	}
	return nil
}

// envBool returns the boolean value of environment variable name, or def when it
// is unset or not a boolean.
func envBool(name string, def bool) bool {
	if v, err := strconv.ParseBool(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// envOr returns environment variable name, or def when it is empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// checkLeaseTimings returns an error naming the flag to change when the
// leader-election durations cannot work together (the manager would fail on
// them later, naming its Go options instead of the flags). The leader retries a
// renewal every retry period (plus up to leaderelection.JitterFactor of jitter)
// until the renew deadline, and the others take the Lease once lease duration
// has passed since the last renewal. These are the checks of client-go's
// leaderelection.NewLeaderElector, which sample-controller calls itself and
// reports with the flags' names; here controller-runtime calls it inside
// mgr.Start, whose error would name only client-go's fields.
func checkLeaseTimings(leaseDuration, renewDeadline, retryPeriod time.Duration) error {
	switch {
	case retryPeriod <= 0:
		return fmt.Errorf("--leader-elect-retry-period=%s: want a positive duration, such as 2s", retryPeriod)
	case float64(renewDeadline) <= leaderelection.JitterFactor*float64(retryPeriod):
		return fmt.Errorf("--leader-elect-renew-deadline=%s: want more than %.1f times --leader-elect-retry-period=%s, so a renewal can be retried",
			renewDeadline, leaderelection.JitterFactor, retryPeriod)
	case leaseDuration <= renewDeadline:
		return fmt.Errorf("--leader-elect-lease-duration=%s: want more than --leader-elect-renew-deadline=%s, so a leader gives up before another may take over",
			leaseDuration, renewDeadline)
	}
	return nil
}

// checkMaxRetryDelay refuses a --max-retry-delay that cannot work: under 1s the
// slow retries would hammer a struggling API server, over 10m the end of an
// outage would go unnoticed for longer than anyone waits. The same bounds hold
// in the other two tiers.
func checkMaxRetryDelay(d time.Duration) error {
	if d < time.Second || d > 10*time.Minute {
		return fmt.Errorf("--max-retry-delay=%s: want a delay from 1s to 10m, for example 30s", d)
	}
	return nil
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
