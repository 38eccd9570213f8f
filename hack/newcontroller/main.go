// Command newcontroller is the body of `make new-controller`: it makes a
// controller project of your own from one of the kit's tiers. Every name of the
// tier is rewritten (module path, API group, kind, CRD, labels, field manager,
// Lease, binary, ServiceAccount, namespace and RBAC), the generated code is
// regenerated with the kit's pinned generators, and the project gets its own
// tools module, Makefile and verify script, and a git repository with a first
// commit. The project is built and checked before it is moved into place, so a
// failure leaves nothing behind.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(runCommand(os.Args[1:], os.Stdout, os.Stderr))
}

// runCommand is main with its arguments and outputs given: it returns the exit
// code, 2 for bad input (nothing written), 1 for a failed step (nothing written).
func runCommand(args []string, out, errOut io.Writer) int {
	var r Request
	flags := flag.NewFlagSet("newcontroller", flag.ContinueOnError)
	flags.SetOutput(errOut)
	flags.StringVar(&r.From, "from", "", "the tier to start from (FROM)")
	flags.StringVar(&r.Dir, "dir", "", "the folder of the new project (DIR)")
	flags.StringVar(&r.Module, "module", "", "the Go module path (MODULE)")
	flags.StringVar(&r.Group, "group", "", "the API group (GROUP)")
	flags.StringVar(&r.Kind, "kind", "", "the kind, CamelCase (KIND)")
	flags.StringVar(&r.Version, "version", "v1alpha1", "the API version (VERSION)")
	flags.StringVar(&r.Name, "name", "", "the controller's name (NAME; default: the kind in lowercase words joined by -, then -controller: WebApp gives web-app-controller)")
	flags.StringVar(&r.Kit, "kit", ".", "the kit's root folder")
	if err := flags.Parse(args); err != nil {
		return 2
	}

	n, err := r.Validate()
	if err != nil {
		fmt.Fprintln(errOut, err)
		return 2
	}
	if err := Generate(n, r.Kit, out); err != nil {
		fmt.Fprintf(errOut, "make new-controller: %v\nnothing was written to %s\n", err, n.Dir)
		return 1
	}
	return 0
}
