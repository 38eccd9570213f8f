// Command scheduler-plugin-example is lesson 8's scheduler: kube-scheduler's own
// command (k8s.io/kubernetes cmd/kube-scheduler/app), the one the cluster's
// scheduler runs, with two plugins more in its registry, ZoneSpread
// (pkg/zonespread, at filter and score) and Gang (pkg/gang, at permit).
// Everything else is upstream's: the flags, the configuration file, the
// scheduling queue, the in-tree plugins. A profile of the configuration
// (config/scheduler-config.yaml) enables both under a scheduler name of its
// own, so it runs as a second scheduler beside the
// cluster's and schedules only the Pods whose spec.schedulerName names it.
//
// This file is the wiring an out-of-tree plugin writes; compare it with
// kubernetes' cmd/kube-scheduler/scheduler.go, which the lesson,
// docs/lessons/08-kube-scheduler.md, reads first. What it adds:
//   - --reconciler picks the plugins' version, reference or stub (one flag
//     for both plugins), as it picks the Reconciler in the other tiers;
//     --list-reconcilers lists the names. Both versions of a plugin register
//     under the same plugin name, so one configuration serves both;
//   - a misspelt --reconciler fails before anything starts, naming the flag;
//   - so does a configuration with a profile that names no scheduler, which
//     upstream would name default-scheduler, the cluster's own;
//   - stopped by a signal, it exits 0 (upstream's command, without leader
//     election, reports an error then).
package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/cli"
	// Imported for their init functions, as kube-scheduler's own main imports
	// them: the JSON log format (--logging-format=json), client-go's REST-client
	// metrics, and the version metric.
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"sigs.k8s.io/yaml"

	"github.com/controller-kit/controller-kit/scheduler-plugin-example/pkg/gang"
	"github.com/controller-kit/controller-kit/scheduler-plugin-example/pkg/zonespread"
)

// plugins is one version of each of the kit's plugins: the factories a
// --reconciler value runs.
type plugins struct {
	// zoneSpread is ZoneSpread's factory (exercises 1 to 3).
	zoneSpread frameworkruntime.PluginFactory
	// gang is Gang's factory (exercise 4).
	gang frameworkruntime.PluginFactory
}

// reconcilers maps each --reconciler value to the versions of the plugins it
// runs: one flag picks both, so the stub is the starting point of every
// exercise and the reference the answer to all. To try your own, add an
// entry here (your plugin beside the kit's version of the other).
var reconcilers = map[string]plugins{
	"reference": {zoneSpread: zonespread.New, gang: gang.New},
	"stub":      {zoneSpread: zonespread.NewStub, gang: gang.NewStub},
}

// reconciler is the --reconciler value, read by the factories registered below
// when the framework builds a profile, after the flags are parsed.
var reconciler = "reference"

// picked returns the factory to register under one plugin's name: it runs the
// version of that plugin (which) that --reconciler picks.
func picked(which func(plugins) frameworkruntime.PluginFactory) frameworkruntime.PluginFactory {
	return func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		versions, ok := reconcilers[reconciler]
		if !ok {
			return nil, reconcilerKnown(reconciler)
		}
		return which(versions)(ctx, args, h)
	}
}

// newZoneSpread and newGang are the factories registered under zonespread.Name
// and gang.Name: each the version --reconciler picks.
var (
	newZoneSpread = picked(func(p plugins) frameworkruntime.PluginFactory { return p.zoneSpread })
	newGang       = picked(func(p plugins) frameworkruntime.PluginFactory { return p.gang })
)

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
	// cli.Run is every Kubernetes component's main: flag names accept "_" for
	// "-", klog starts after the flags are parsed, an error from RunE exits 1.
	os.Exit(cli.Run(newCommand()))
}

// newCommand returns kube-scheduler's command with ZoneSpread and Gang in its registry,
// the kit's two flags, and a check of them before upstream's RunE.
func newCommand() *cobra.Command {
	// app.WithPlugin adds a factory to the out-of-tree registry, which Setup
	// merges with the in-tree one (plugins/registry.go); a name both hold is
	// refused at start.
	cmd := app.NewSchedulerCommand(app.WithPlugin(zonespread.Name, newZoneSpread), app.WithPlugin(gang.Name, newGang))
	cmd.Use = "scheduler-plugin-example"
	cmd.Long = `scheduler-plugin-example is kube-scheduler (k8s.io/kubernetes
cmd/kube-scheduler/app) with two plugins more in its registry: ZoneSpread, which
keeps a Pod to the nodes of the zone it asks for (the annotation
zonespread.controller-kit.dev/zone) and spreads a workload's Pods over them, and
Gang, which holds the two Pods of a gang (the label
gang.controller-kit.dev/group) at Permit until both have a node. A profile of
--config enables them. It is lesson 8 of controller-kit:
docs/lessons/08-kube-scheduler.md.`

	var listReconcilers bool
	plugin := pflag.NewFlagSet("the kit's plugins", pflag.ContinueOnError)
	plugin.StringVar(&reconciler, "reconciler", reconciler, "Which version of the plugins ZoneSpread and Gang runs: reference (the kit's) or stub (lets every node and every Pod through, your starting point); see reconcilers in main.go.")
	plugin.BoolVar(&listReconcilers, "list-reconcilers", false, "Print the names --reconciler accepts, one per line, and exit (after refusing a --reconciler that names none of them).")
	cmd.Flags().AddFlagSet(plugin)
	// Upstream's --help prints its own sections of flags only; ours follow.
	upstreamHelp := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		upstreamHelp(c, args)
		fmt.Fprintf(c.OutOrStdout(), "\nThe kit's plugin flags (ZoneSpread, Gang):\n\n%s", plugin.FlagUsages())
	})

	upstream := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := reconcilerKnown(reconciler); err != nil {
			return err
		}
		if listReconcilers {
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(reconcilerNames(), "\n"))
			return nil
		}
		if err := profilesNamed(cmd.Flags().Lookup("config").Value.String()); err != nil {
			return err
		}
		// Upstream stops at the first SIGINT or SIGTERM, and without leader
		// election its Run then returns an error ("finished without leader
		// elect") although nothing failed; a stop asked for is no failure, so
		// it exits 0 here, as the tiers' controllers do.
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(signals)
		err := upstream(cmd, args)
		select {
		case <-signals:
			klog.InfoS("Stopped", "reason", "signal", "upstreamError", err)
			return nil
		default:
			return err
		}
	}
	return cmd
}

// profilesNamed checks that every profile of the configuration file at path
// ("" for none) names its scheduler. Upstream defaults a missing schedulerName,
// and a missing profiles list, to default-scheduler: the name of the
// cluster's own scheduler, so this second scheduler would take the cluster's
// Pods too, two schedulers binding the same Pods. The error names the file,
// the field and the fix.
func profilesNamed(path string) error {
	if path == "" {
		return errors.New("--config: not set; this scheduler runs only with a configuration whose profiles name their scheduler (make run-scheduler passes config/scheduler-config.yaml)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config=%s: %w", path, err)
	}
	var config struct {
		Profiles []struct {
			SchedulerName string `json:"schedulerName"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		return fmt.Errorf("--config=%s: %w", path, err)
	}
	if len(config.Profiles) == 0 {
		return fmt.Errorf("--config=%s: profiles: none; upstream would add one named %s, the cluster's own scheduler: add a profile with a schedulerName of its own", path, corev1.DefaultSchedulerName)
	}
	for i, p := range config.Profiles {
		switch p.SchedulerName {
		case "":
			return fmt.Errorf("--config=%s: profiles[%d].schedulerName: not set; upstream would name it %s, the cluster's own scheduler, and both would bind the same Pods: set a name of its own, such as scheduler-plugin-example", path, i, corev1.DefaultSchedulerName)
		case corev1.DefaultSchedulerName:
			return fmt.Errorf("--config=%s: profiles[%d].schedulerName: %s is the cluster's own scheduler, and both would bind the same Pods: set a name of its own, such as scheduler-plugin-example", path, i, corev1.DefaultSchedulerName)
		}
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
