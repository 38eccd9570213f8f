// Command kit-component stops, starts or swaps one component of a kit local cluster
// (one that hack/cluster/local-up.sh created with kwokctl's binary runtime), through
// kwokctl's own runtime library: for tests that need an outage of one component
// only (`kwokctl stop cluster` stops all of them, etcd included), and for lesson 4,
// which runs a component built from the learner's copy of the Kubernetes source.
//
//	kit-component --name controller-kit-reliability stop kube-apiserver
//	kit-component --name controller-kit-reliability start kube-apiserver
//	kit-component --name controller-kit use kube-controller-manager _output/kube-build/bin/kube-controller-manager
//	kit-component --name controller-kit use kube-apiserver bin/kube-apiserver --flag=--enable-admission-plugins=AlwaysPullImages
//	kit-component --name controller-kit binary kube-controller-manager
//	kit-component --name controller-kit args kube-apiserver
//
// use checks that the new binary runs (--version) and that each --flag is
// written --name=value before it stops anything, writes the flags into the
// cluster's configuration (a flag the component has is replaced, a new one
// added; kwokctl starts it with them from then on), restarts the component on
// the binary and waits until the component's /healthz answers ok, and for
// kube-apiserver also /readyz and a server-side dry-run create of a ConfigMap
// in kube-system, admitted (admits.go says why); when it does not within
// --timeout, or admission refuses the create or panics on it, it puts the old
// binary and flags back, starts that, and fails, quoting the refusal, or the
// panic and the line it happened at from the component's log. When another process answers the component's port (one of
// another cluster, or left from an earlier run), the error names the port and,
// on Linux, that process (from /proc), and says that a rerun or a cluster of
// its own is the fix. kwokctl runs each component from a link in the cluster's
// bin/ folder (to the kit's bin/ at first); use changes where that link points,
// so the cluster keeps the new binary across its own restarts.
//
// The cluster's files are where kwokctl keeps them: $KWOK_WORKDIR, which
// hack/lib.sh sets to _output/kwok (kwokctl's own default is ~/.kwok). Exit code 0: done; 1: the cluster or the component was
// not found, kwokctl's runtime failed, or (use) the new binary does not run or
// never became healthy (the error says which, and the component runs its old binary).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/kwokctl/runtime"
	_ "sigs.k8s.io/kwok/pkg/kwokctl/runtime/binary" // the runtime hack/cluster/local-up.sh uses
	utilspath "sigs.k8s.io/kwok/pkg/utils/path"
)

func main() {
	var name string
	root := &cobra.Command{
		Use:           "kit-component --name CLUSTER (stop|start) COMPONENT",
		Short:         "Stop or start one component (such as kube-apiserver) of a kit local cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&name, "name", "controller-kit", "the cluster's name (KIT_CLUSTER)")
	for _, verb := range []string{"stop", "start"} {
		root.AddCommand(&cobra.Command{
			Use:   verb + " COMPONENT",
			Short: verb + " one component, as kwokctl's runtime does for the whole cluster (start: unless it is running)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return run(cmd.Context(), name, verb, args[0])
			},
		})
	}
	var timeout time.Duration
	var flags []string
	use := &cobra.Command{
		Use:   "use COMPONENT BINARY [--flag=--name=value]...",
		Short: "restart one component on another binary (and flags) and wait until it is healthy (else go back to the old ones)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return useBinary(cmd.Context(), name, args[0], args[1], flags, timeout)
		},
	}
	use.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "how long the component may take to answer /healthz ok")
	use.Flags().StringArrayVar(&flags, "flag", nil, "a flag to set on the component's command line, kept across its restarts: --flag=--name=value replaces its --name, or adds it (repeat for more)")
	root.AddCommand(use)
	root.AddCommand(&cobra.Command{
		Use:   "binary COMPONENT",
		Short: "print the binary the component runs (what use last gave it; at first the kit's bin/)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printBinary(cmd.Context(), name, args[0])
		},
	})
	root.AddCommand(&cobra.Command{
		Use:   "args COMPONENT",
		Short: "print the flags the cluster runs the component with, one a line (make debug WHAT=kube-apiserver starts a replica with them)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printArgs(cmd.Context(), name, args[0])
		},
	})
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "kit-component:", err)
		os.Exit(1)
	}
}

// load loads the cluster's runtime and returns it with the component's
// configuration; the error says which of the two was not found.
func load(ctx context.Context, cluster, component string) (runtime.Runtime, internalversion.Component, error) {
	rt, err := runtime.DefaultRegistry.Load(ctx, cluster, utilspath.Join(config.ClustersDir, cluster))
	if err != nil {
		return nil, internalversion.Component{}, fmt.Errorf("loading the cluster %q from %s (is it running? make local-up with KIT_CLUSTER=%s): %w",
			cluster, config.ClustersDir, cluster, err)
	}
	c, err := rt.GetComponent(ctx, component)
	if err != nil {
		return nil, internalversion.Component{}, fmt.Errorf("the cluster %q has no component %q: %w", cluster, component, err)
	}
	return rt, c, nil
}

// run loads the cluster's runtime and stops or starts the component.
func run(ctx context.Context, cluster, verb, component string) error {
	rt, _, err := load(ctx, cluster, component)
	if err != nil {
		return err
	}
	// start is idempotent: a component already running is left alone, so a
	// caller can play the supervisor and start whatever has exited.
	if verb == "start" {
		status, err := rt.InspectComponent(ctx, component)
		if err != nil {
			return fmt.Errorf("inspecting %s: %w", component, err)
		}
		if status != runtime.ComponentStatusStopped {
			fmt.Printf("%s: %s is already running\n", cluster, component)
			return nil
		}
	}
	start := time.Now()
	if verb == "stop" {
		err = rt.StopComponent(ctx, component)
	} else {
		err = rt.StartComponent(ctx, component)
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s %sed in %.1f s\n", cluster, component, map[string]string{"stop": "stopp", "start": "start"}[verb], time.Since(start).Seconds())
	return nil
}
