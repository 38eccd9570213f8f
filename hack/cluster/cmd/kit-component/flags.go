package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/kwokctl/runtime"
)

// setFlags returns args with every flag of flags set: a flag whose name (the
// part before "=") args already has takes that flag's place, and a new one is
// added at the end. Each flag is written --name=value, or --name alone for a
// boolean; the error names the first that is not, and the fix.
func setFlags(args, flags []string) ([]string, error) {
	out := slices.Clone(args)
	for _, flag := range flags {
		name, _, _ := strings.Cut(flag, "=")
		if !strings.HasPrefix(name, "--") || len(name) < 3 || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("flag %q: write it as --name=value (or --name for a boolean), such as --enable-admission-plugins=NamespaceLifecycle", flag)
		}
		i := slices.IndexFunc(out, func(arg string) bool {
			argName, _, _ := strings.Cut(arg, "=")
			return argName == name
		})
		if i >= 0 {
			out[i] = flag
		} else {
			out = append(out, flag)
		}
	}
	return out, nil
}

// configPath is the file kwokctl keeps the cluster's configuration in, the
// components' flags among it.
func configPath(cluster string) string {
	return filepath.Join(config.ClustersDir, cluster, runtime.ConfigName)
}

// applyFlags sets flags (setFlags) on the component's flags in the cluster's
// configuration file, so that kwokctl starts it with them from now on, and in
// rt, so that this process does too. It returns a function that puts the file
// and rt back as they were, and prints the flags that change.
func applyFlags(ctx context.Context, rt runtime.Runtime, cluster, component string, flags []string) (restore func() error, err error) {
	path := configPath(cluster)
	original, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's configuration: %w", err)
	}
	oldConf, err := rt.Config(ctx)
	if err != nil {
		return nil, err
	}
	oldConf = oldConf.DeepCopy()

	// Every object of the file (the cluster's configuration and kwok's
	// Stages) is written back as it was read, with only the flags changed.
	objs, err := config.Load(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	confs := config.FilterWithType[*internalversion.KwokctlConfiguration](objs)
	if len(confs) != 1 {
		return nil, fmt.Errorf("%s holds %d cluster configurations, want 1", path, len(confs))
	}
	conf := confs[0]
	i := slices.IndexFunc(conf.Components, func(c internalversion.Component) bool { return c.Name == component })
	if i < 0 {
		return nil, fmt.Errorf("the cluster %q has no component %q", cluster, component)
	}
	before := conf.Components[i].Args
	after, err := setFlags(before, flags)
	if err != nil {
		return nil, err
	}
	conf.Components[i].Args = after
	restore = func() error {
		if err := os.WriteFile(path, original, 0o644); err != nil {
			return fmt.Errorf("putting back %s: %w", path, err)
		}
		return rt.SetConfig(ctx, oldConf)
	}
	if err := config.Save(ctx, path, objs); err != nil {
		return nil, fmt.Errorf("writing %s: %w (%v)", path, err, restore())
	}
	if err := rt.SetConfig(ctx, conf); err != nil {
		return nil, fmt.Errorf("%w (%v)", err, restore())
	}
	for _, flag := range flags {
		name, _, _ := strings.Cut(flag, "=")
		was := "not set"
		for _, arg := range before {
			if argName, _, _ := strings.Cut(arg, "="); argName == name {
				was = arg
			}
		}
		fmt.Printf("%s: %s's flag %s (was %s)\n", cluster, component, flag, was)
	}
	return restore, nil
}
