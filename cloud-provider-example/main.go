// Command cloud-provider-example is lesson 5's cloud-controller-manager: the
// manager of k8s.io/cloud-provider's app package (the one every external cloud
// provider ships), with the toy cloud of pkg/toycloud registered and one
// controller on by default, the service controller (service-lb-controller), which
// gives each Service of type LoadBalancer an address of the toy cloud's pool, and
// one off by default, the cloud-node controller (cloud-node-controller, lesson 5's
// second exercise: --controllers=*,cloud-node-controller), which initialises the
// Nodes of the machines the cloud config lists.
//
// This file is the wiring, the part a cloud provider writes itself. Compare with
// k8s.io/cloud-provider's sample/basic_main.go (the smallest such main) and with
// kubernetes' cmd/cloud-controller-manager/main.go (the fuller one); the lesson,
// docs/lessons/05-cloud-controller-manager.md, reads both. What differs here, and
// why:
//   - only the service and cloud-node controllers are known to the manager, and
//     the second is off unless --controllers names it: the cloud-node-lifecycle
//     controller deletes every Node its cloud says does not exist, and kwok's
//     Nodes are no machines of the toy cloud, so it is not there at all;
//   - the defaults suit the kit: --cloud-provider=toycloud, no HTTPS endpoint
//     (--secure-port=0; serving one needs delegated authentication and its RBAC),
//     no webhook endpoint, a Lease of its own (cloud-provider-example in
//     cloud-provider-example-system), $KUBECONFIG when --kubeconfig is unset;
//   - --reconciler picks the load balancer (pkg/toycloud) as it picks the
//     Reconciler in the other tiers, and --list-reconcilers lists the names;
//   - bad flags fail before anything starts, with an error naming the flag.
package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	// Imported for their init functions, as the upstream mains import them: the
	// JSON log format (--logging-format=json), client-go's workqueue, REST-client
	// and leader-election metrics, and the version metric.
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/cloud-provider-example/pkg/toycloud"
)

const (
	// managerName names the Lease, the tier and the binary.
	managerName = "cloud-provider-example"
	// leaseNamespace is where the Lease lives: the namespace of the ServiceAccount
	// config/rbac binds, which may write Leases there and nowhere else.
	leaseNamespace = "cloud-provider-example-system"
)

// reconcilers maps each --reconciler value to the load balancer it runs. To try
// your own, add an entry here. Each --reconciler value must be a key here.
var reconcilers = map[string]toycloud.NewLoadBalancer{
	"reference": func(d toycloud.LoadBalancerDeps) cloudprovider.LoadBalancer {
		return toycloud.NewPoolLoadBalancer(d.Pool, d.Services)
	},
	"stub": func(d toycloud.LoadBalancerDeps) cloudprovider.LoadBalancer {
		return &toycloud.StubLoadBalancer{Pool: d.Pool}
	},
}

// instances maps a --reconciler value to the toy cloud's answers about its
// machines (what the cloud-node controller asks about Nodes); a value that is
// not a key here gets the stub's (toycloud.StubInstances). For lesson 5's
// second exercise, add an entry under your load balancer's name.
var instances = map[string]toycloud.NewInstances{}

// stubInstances makes the stub's answers about machines (toycloud.StubInstances).
func stubInstances(d toycloud.InstancesDeps) cloudprovider.InstancesV2 {
	return &toycloud.StubInstances{Machines: d.Machines}
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

// reconciler is the --reconciler value. It is read by newCloud, which
// cloudprovider.InitCloudProvider calls once the flags are parsed.
var reconciler = "reference"

func init() {
	// A provider registers itself by name; --cloud-provider picks one.
	cloudprovider.RegisterCloudProvider(toycloud.ProviderName, newCloud)
	// Upstream's list of controllers that --controllers=* leaves off (empty in
	// k8s.io/cloud-provider app/controllermanager.go; kube-controller-manager has
	// a list of its own, such as its bootstrap-signer): the cloud-node controller
	// runs only when --controllers names it.
	app.ControllersDisabledByDefault.Insert(names.CloudNodeController)
}

// newCloud is the toy cloud's cloudprovider.Factory: config is the file
// --cloud-config names (nil without one).
func newCloud(config io.Reader) (cloudprovider.Interface, error) {
	newLB, ok := reconcilers[reconciler]
	if !ok {
		return nil, reconcilerKnown(reconciler)
	}
	newInstances, ok := instances[reconciler]
	if !ok {
		newInstances = stubInstances
	}
	return toycloud.New(config, newLB, newInstances)
}

func main() {
	cmd, err := newCommand()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// cli.Run is every Kubernetes component's main: flag names accept "_" for
	// "-", klog starts after the flags are parsed, an error from RunE exits 1.
	os.Exit(cli.Run(cmd))
}

// newCommand returns the manager's command: upstream's
// (app.NewCloudControllerManagerCommand) with the kit's defaults, our flags in a
// section of their own, and a check of those flags before upstream's RunE.
func newCommand() (*cobra.Command, error) {
	ccm, err := options.NewCloudControllerManagerOptionsWithProviderDefaults(options.ProviderDefaults{WebhookBindPort: ptr.To(0)})
	if err != nil {
		return nil, fmt.Errorf("making the manager's default options: %w", err)
	}
	ccm.KubeCloudShared.CloudProvider.Name = toycloud.ProviderName
	ccm.SecureServing.BindPort = 0
	ccm.Generic.LeaderElection.ResourceName = managerName
	ccm.Generic.LeaderElection.ResourceNamespace = leaseNamespace

	var listReconcilers bool
	var sections cliflag.NamedFlagSets
	toy := sections.FlagSet("toy cloud")
	toy.StringVar(&reconciler, "reconciler", reconciler, "Which load balancer the toy cloud runs: reference (the kit's) or stub (logs only, your starting point); see reconcilers in main.go.")
	toy.BoolVar(&listReconcilers, "list-reconcilers", false, "Print the names --reconciler accepts, one per line, and exit (after refusing a --reconciler that names none of them).")

	// Closed at the first SIGINT or SIGTERM: the manager stops (upstream's Run
	// returns once stop is closed); a second signal exits at once.
	stop := make(chan struct{})
	cmd := app.NewCloudControllerManagerCommand(ccm, cloudInitializer, controllerInitializers(), names.CCMControllerAliases(), sections, stop)
	cmd.Use = managerName
	cmd.Long = `cloud-provider-example is a cloud-controller-manager (k8s.io/cloud-provider's
app package) with a toy cloud whose load balancers hand out addresses of
192.0.2.0/24, and two controllers: the service controller, and the cloud-node
controller (off unless --controllers names it), which initialises the Nodes of
the machines the cloud config lists. It is lesson 5 of controller-kit:
docs/lessons/05-cloud-controller-manager.md.`
	upstream := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if listReconcilers {
			if err := reconcilerKnown(reconciler); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(reconcilerNames(), "\n"))
			return nil
		}
		if err := validate(ccm); err != nil {
			return err
		}
		signals := make(chan os.Signal, 2)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-signals
			klog.Info("Stopping: a second signal exits at once")
			close(stop)
			<-signals
			os.Exit(1)
		}()
		return upstream(cmd, args)
	}
	return cmd, nil
}

// controllerInitializers returns the controllers the manager knows: the service
// controller and the cloud-node controller (off by default, see init), under
// their upstream names and client names. Upstream's full set
// (app.DefaultInitFuncConstructors) adds cloud-node-lifecycle and route; a
// controller missing here is refused by --controllers.
func controllerInitializers() map[string]app.ControllerInitFuncConstructor {
	return map[string]app.ControllerInitFuncConstructor{
		names.ServiceLBController: app.DefaultInitFuncConstructors[names.ServiceLBController],
		names.CloudNodeController: app.DefaultInitFuncConstructors[names.CloudNodeController],
	}
}

// cloudInitializer makes the cloud named by --cloud-provider, configured by
// --cloud-config. validate has made sure both are good, so a failure here is a
// bug; the signature (app.InitCloudFunc) has no error, so it exits.
func cloudInitializer(c *config.CompletedConfig) cloudprovider.Interface {
	shared := c.ComponentConfig.KubeCloudShared.CloudProvider
	cloud, err := cloudprovider.InitCloudProvider(shared.Name, shared.CloudConfigFile)
	if err == nil && cloud == nil {
		err = fmt.Errorf("--cloud-provider=%q: no cloud of that name", shared.Name)
	}
	if err != nil {
		klog.ErrorS(err, "Cannot make the cloud")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.InfoS("Cloud ready", "provider", cloud.ProviderName(), "reconciler", reconciler)
	return cloud
}

// validate checks the flags upstream's manager would only trip over later, or
// report without naming the flag: --reconciler, --cloud-provider, --cloud-config,
// and where the kubeconfig comes from. It fills in --kubeconfig from $KUBECONFIG
// when unset (upstream reads only the flag). The error names the flag.
func validate(ccm *options.CloudControllerManagerOptions) error {
	if err := reconcilerKnown(reconciler); err != nil {
		return err
	}
	shared := ccm.KubeCloudShared.CloudProvider
	if !cloudprovider.IsCloudProvider(shared.Name) {
		return fmt.Errorf("--cloud-provider=%q: this manager has one cloud, %q", shared.Name, toycloud.ProviderName)
	}
	if shared.CloudConfigFile != "" {
		f, err := os.Open(shared.CloudConfigFile)
		if err != nil {
			return fmt.Errorf("--cloud-config: %w", err)
		}
		defer f.Close()
		if _, _, err := toycloud.ReadConfig(f); err != nil {
			return fmt.Errorf("--cloud-config=%s: %w", shared.CloudConfigFile, err)
		}
	}
	return kubeconfig(ccm)
}

// kubeconfig makes sure the manager has a kubeconfig to read, or runs in a Pod:
// --kubeconfig, else the first file of $KUBECONFIG, else the in-cluster config.
// The error names --kubeconfig.
func kubeconfig(ccm *options.CloudControllerManagerOptions) error {
	path := &ccm.Generic.ClientConnection.Kubeconfig
	if *path == "" && ccm.Master == "" {
		if env := filepath.SplitList(os.Getenv("KUBECONFIG")); len(env) > 0 && env[0] != "" {
			*path = env[0]
		}
	}
	if *path == "" {
		if ccm.Master == "" && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
			return errors.New("--kubeconfig: not set, $KUBECONFIG is empty and this is not a Pod; pass --kubeconfig=PATH (make run-cloud passes the kit's)")
		}
		return nil
	}
	if _, err := os.Stat(*path); err != nil {
		return fmt.Errorf("--kubeconfig=%s: %w", *path, err)
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
