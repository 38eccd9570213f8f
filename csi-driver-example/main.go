// Command csi-driver-example is lesson 7's toy CSI driver: a gRPC server on a
// unix socket serving the CSI spec's three services, as every CSI driver does,
// for csi-provisioner and csi-attacher (and, in part 2, the kubelet) to call.
//   - Identity (pkg/driver): the driver's name and what it offers;
//   - Controller (pkg/controller): CreateVolume, DeleteVolume,
//     ControllerPublishVolume, ...; the learner's part in part 1;
//   - Node (pkg/node): NodeStageVolume, NodePublishVolume and their Un...,
//     which mount a volume into a Pod; the learner's part in part 2.
//
// With --registration-dir it also serves the kubelet's plugin registration
// service (pkg/registration) on a second socket, DIR/<driver name>-reg.sock,
// so that the kubelet of its node finds it (part 2). --reconciler picks the
// Controller, Node and registration services together (reference or stub),
// as the other tiers pick their Reconciler.
//
// A volume is a folder under --state-dir (pkg/volumes), so a driver started
// again finds the volumes it made. Compare with cmd/hostpathplugin/main.go in
// github.com/kubernetes-csi/csi-driver-host-path, the CSI project's example
// driver. The lesson is docs/lessons/07-csi-driver.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/controller"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/driver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/node"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/registration"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

// DefaultDriverName is --driver-name's default: the name the kit's CSIDriver
// and StorageClass (config/) give the driver.
const DefaultDriverName = "toy.csi.controller-kit.dev"

// deps is what the learner's services are built from: the flags' values, the
// volume store, and what to do when the kubelet refuses the registration.
type deps struct {
	volumes          *volumes.Store
	nodeID           string
	nodeZone         string
	maxCapacityBytes int64
	zones            map[string]int64
	driverName       string
	kubeletEndpoint  string
	refused          func(error)
}

// services are the parts of the driver --reconciler picks: the learner's.
type services struct {
	controller   csi.ControllerServer
	node         csi.NodeServer
	registration registerapi.RegistrationServer
}

// reconcilers maps each --reconciler value to the services it runs. To try
// your own, add an entry here.
var reconcilers = map[string]func(deps) services{
	"reference": func(d deps) services {
		return services{
			controller:   &controller.Service{Volumes: d.volumes, NodeID: d.nodeID, MaxCapacityBytes: d.maxCapacityBytes, Zones: d.zones},
			node:         &node.Service{Volumes: d.volumes, NodeID: d.nodeID, Zone: d.nodeZone},
			registration: &registration.Service{DriverName: d.driverName, Endpoint: d.kubeletEndpoint, Refused: d.refused},
		}
	},
	"stub": func(d deps) services {
		return services{
			controller:   &controller.StubService{Volumes: d.volumes, NodeID: d.nodeID, MaxCapacityBytes: d.maxCapacityBytes, Zones: d.zones},
			node:         &node.StubService{Volumes: d.volumes, NodeID: d.nodeID, Zone: d.nodeZone},
			registration: &registration.StubService{DriverName: d.driverName, Endpoint: d.kubeletEndpoint, Refused: d.refused},
		}
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
	endpoint        string
	stateDir        string
	nodeID          string
	driverName      string
	maxVolumeSize   string
	zones           string
	nodeZone        string
	reconciler      string
	listReconcilers bool
	registrationDir string
	kubeletEndpoint string
}

// errUsage marks an error the flag package has already printed, with the usage.
var errUsage = errors.New("usage")

func main() {
	// The first SIGINT or SIGTERM stops the server gracefully; a second one
	// kills the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	klog.Flush()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stderr, "csi-driver-example: %v\n", err)
		os.Exit(1)
	}
}

// run parses args, checks them, and serves the driver until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	hostname, _ := os.Hostname()
	o := options{}
	fs := flag.NewFlagSet("csi-driver-example", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.endpoint, "endpoint", "", "The unix socket to serve, as unix:///ABSOLUTE/PATH.sock (required). The sidecars' --csi-address is the same path without unix://.")
	fs.StringVar(&o.stateDir, "state-dir", "", "The folder the volumes live in, one folder each under volumes/ (required; created if missing). A driver started again on the same folder serves the same volumes.")
	fs.StringVar(&o.nodeID, "node-id", hostname, "This node's ID, answered by NodeGetInfo; the only node ControllerPublishVolume accepts.")
	fs.StringVar(&o.driverName, "driver-name", DefaultDriverName, "The driver's name, answered by GetPluginInfo: what a StorageClass's provisioner and a PV's spec.csi.driver say.")
	fs.StringVar(&o.maxVolumeSize, "max-volume-size", "1Gi", "The largest volume CreateVolume makes, as a Kubernetes quantity (512Mi, 1Gi); larger is OUT_OF_RANGE.")
	fs.StringVar(&o.zones, "zones", "", "The zones volumes live in, each with its capacity, as ZONE=QUANTITY,... (zone-a=1Gi,zone-b=1Gi): the driver then offers topology (key "+controller.TopologyKey+") and GetCapacity. Empty: no topology.")
	fs.StringVar(&o.nodeZone, "node-zone", "", "This node's zone, one of --zones: NodeGetInfo answers it as the node's accessible_topology, which the kubelet writes as the Node's label and its CSINode's topologyKeys. Empty: none.")
	fs.StringVar(&o.reconciler, "reconciler", "reference", "Which Controller, Node and registration services run: reference (the kit's) or stub (logs each call and answers Unimplemented, your starting point); see reconcilers in main.go.")
	fs.StringVar(&o.registrationDir, "registration-dir", "", "The kubelet's plugins registry folder (/var/lib/kubelet/plugins_registry): serve the kubelet's plugin registration service there, on <driver name>-reg.sock, so that the kubelet finds the driver. Empty: no registration (no kubelet, as on the local cluster).")
	fs.StringVar(&o.kubeletEndpoint, "kubelet-endpoint", "", "The CSI socket's path as the kubelet sees it, which the registration answers (default: --endpoint's path; other only when the kubelet sees the socket under another path).")
	fs.BoolVar(&o.listReconcilers, "list-reconcilers", false, "Print the names --reconciler accepts, one per line, and exit (after refusing a --reconciler that names none of them).")
	// -v, -vmodule and klog's other flags, which -h lists after the driver's.
	addLogFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every setting is a flag (-h lists them)", fs.Args())
	}

	if err := reconcilerKnown(o.reconciler); err != nil {
		return err
	}
	if o.listReconcilers {
		fmt.Fprintln(stdout, strings.Join(reconcilerNames(), "\n"))
		return nil
	}
	c, err := o.check()
	if err != nil {
		return err
	}

	store, err := volumes.Open(o.stateDir)
	if err != nil {
		return fmt.Errorf("--state-dir=%s: %w", o.stateDir, err)
	}
	found, err := store.List()
	if err != nil {
		return fmt.Errorf("--state-dir=%s: %w", o.stateDir, err)
	}
	// The kubelet's refusal of the registration stops the driver (the
	// first one is enough: the driver is stopping).
	refused := make(chan error, 1)
	picked := reconcilers[o.reconciler](deps{
		volumes: store, nodeID: o.nodeID, nodeZone: o.nodeZone, maxCapacityBytes: c.maxBytes, zones: c.zones,
		driverName: o.driverName, kubeletEndpoint: c.kubeletEndpoint,
		refused: func(err error) {
			select {
			case refused <- err:
			default:
			}
		},
	})

	listener, err := driver.Listen(c.socket)
	if err != nil {
		return fmt.Errorf("--endpoint=%s: %w", o.endpoint, err)
	}
	srv := driver.NewServer(&driver.Identity{Name: o.driverName, Topology: len(c.zones) > 0}, picked.controller, picked.node)
	servers := []*grpc.Server{srv}
	served := make(chan error, 2)
	go func() { served <- srv.Serve(listener) }()
	serving := []any{"driver", o.driverName, "endpoint", o.endpoint, "node", o.nodeID,
		"reconciler", o.reconciler, "stateDir", o.stateDir, "volumes", len(found), "maxVolumeSize", o.maxVolumeSize}
	if o.zones != "" {
		serving = append(serving, "zones", o.zones)
	}
	klog.InfoS("Serving the CSI driver", serving...)

	// The registration socket comes second, once the CSI socket is served:
	// the kubelet calls NodeGetInfo there as soon as it has GetInfo's answer.
	if c.registrationSocket != "" {
		regListener, err := driver.Listen(c.registrationSocket)
		if err != nil {
			srv.Stop()
			return fmt.Errorf("--registration-dir=%s: %w", o.registrationDir, err)
		}
		reg := driver.NewRegistrationServer(picked.registration)
		servers = append(servers, reg)
		go func() { served <- reg.Serve(regListener) }()
		klog.InfoS("Serving the kubelet's plugin registration", "socket", c.registrationSocket, "kubeletEndpoint", c.kubeletEndpoint)
	}

	// Stop on ctx's end, on the kubelet's refusal, or when a server fails:
	// let the calls under way finish (a few seconds at most), then close
	// the sockets, which removes their files (and so, for the kubelet,
	// unregisters the driver).
	var result error
	select {
	case <-ctx.Done():
	case result = <-refused:
	case err := <-served:
		result = fmt.Errorf("serving: %w", err)
	}
	klog.InfoS("Stopping: finishing the calls under way")
	for _, s := range servers {
		timer := time.AfterFunc(10*time.Second, s.Stop)
		s.GracefulStop()
		timer.Stop()
	}
	klog.InfoS("Stopped")
	return result
}

// addLogFlags adds klog's flags (-v, -vmodule, ...) to fs, and makes -h list
// the driver's own flags first and klog's after them, rather than all of them
// in one alphabetical list.
func addLogFlags(fs *flag.FlagSet) {
	own := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { own[f.Name] = true })
	klog.InitFlags(fs)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: %s --endpoint=unix:///ABSOLUTE/PATH.sock --state-dir=DIR [flags]\n\nDriver flags:\n", fs.Name())
		printFlags(fs, func(name string) bool { return own[name] })
		fmt.Fprintf(out, "\nLogging flags (klog):\n")
		printFlags(fs, func(name string) bool { return !own[name] })
	}
}

// printFlags prints the flags of fs that keep says to keep, as fs.PrintDefaults
// prints them all.
func printFlags(fs *flag.FlagSet, keep func(name string) bool) {
	some := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	some.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if keep(f.Name) {
			some.Var(f.Value, f.Name, f.Usage)
		}
	})
	some.PrintDefaults()
}

// driverNamePattern is the CSI spec's rule for a driver's name (section
// GetPluginInfo): domain-name notation, at most 63 characters, beginning and
// ending with a letter or digit.
var driverNamePattern = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9.]{0,61}[A-Za-z0-9])?$`)

// checked is what check makes of the flags.
type checked struct {
	// socket is the path of the CSI socket (--endpoint's).
	socket string
	// registrationSocket is the path of the registration socket in
	// --registration-dir, or "" for none.
	registrationSocket string
	// kubeletEndpoint is --kubelet-endpoint, or socket by default.
	kubeletEndpoint string
	// maxBytes is --max-volume-size in bytes.
	maxBytes int64
	// zones is --zones: each zone's capacity in bytes; nil for none.
	zones map[string]int64
}

// check returns what the flags say, or an error naming the flag that is wrong
// and how to fix it.
func (o options) check() (checked, error) {
	var c checked
	var err error
	if o.endpoint == "" {
		return c, errors.New("--endpoint: required, as unix:///ABSOLUTE/PATH.sock")
	}
	c.socket, err = driver.SocketPath(o.endpoint)
	if err != nil {
		return c, fmt.Errorf("--endpoint=%s: %w", o.endpoint, err)
	}
	if o.stateDir == "" {
		return c, errors.New("--state-dir: required: the folder the volumes live in")
	}
	if o.nodeID == "" {
		return c, errors.New("--node-id: empty (and the host has no name to default to): give the node an ID")
	}
	if !driverNamePattern.MatchString(o.driverName) {
		return c, fmt.Errorf("--driver-name=%q: want a domain name of at most 63 characters (letters, digits, '-' and '.', starting and ending with a letter or digit), such as %s", o.driverName, DefaultDriverName)
	}
	q, err := resource.ParseQuantity(o.maxVolumeSize)
	if err != nil {
		return c, fmt.Errorf("--max-volume-size=%q: want a quantity such as 512Mi or 1Gi: %w", o.maxVolumeSize, err)
	}
	if q.Sign() <= 0 {
		return c, fmt.Errorf("--max-volume-size=%s: want more than 0, such as 1Gi", o.maxVolumeSize)
	}
	c.maxBytes = q.Value()
	if c.zones, err = parseZones(o.zones); err != nil {
		return c, err
	}
	if _, ok := c.zones[o.nodeZone]; o.nodeZone != "" && !ok {
		return c, fmt.Errorf("--node-zone=%s: not one of --zones (%q): name the node's zone among them", o.nodeZone, o.zones)
	}
	if o.registrationDir != "" {
		if !filepath.IsAbs(o.registrationDir) {
			return c, fmt.Errorf("--registration-dir=%s: want an absolute path, such as /var/lib/kubelet/plugins_registry", o.registrationDir)
		}
		// node-driver-registrar's name for the socket, which the kubelet
		// does not read: any name in the folder would do.
		c.registrationSocket = filepath.Join(o.registrationDir, o.driverName+"-reg.sock")
		if _, err := driver.SocketPath("unix://" + c.registrationSocket); err != nil {
			return c, fmt.Errorf("--registration-dir=%s: the socket %s: %w", o.registrationDir, c.registrationSocket, err)
		}
	}
	c.kubeletEndpoint = c.socket
	if o.kubeletEndpoint != "" {
		if !filepath.IsAbs(o.kubeletEndpoint) {
			return c, fmt.Errorf("--kubelet-endpoint=%s: want the socket's absolute path, without unix://, such as /var/lib/kubelet/plugins/%s/csi.sock", o.kubeletEndpoint, DefaultDriverName)
		}
		c.kubeletEndpoint = o.kubeletEndpoint
	}
	return c, nil
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

// parseZones reads --zones, ZONE=QUANTITY pairs separated by commas, into each
// zone's capacity in bytes; "" is no zones (nil). A zone's name is a label's
// value (the driver's topology key labels Nodes with it), each zone comes once
// and its capacity is more than 0; the error names the pair and the fix.
func parseZones(flag string) (map[string]int64, error) {
	if flag == "" {
		return nil, nil
	}
	zones := map[string]int64{}
	for pair := range strings.SplitSeq(flag, ",") {
		zone, size, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return nil, fmt.Errorf("--zones=%s: %q: want ZONE=QUANTITY, such as zone-a=1Gi", flag, pair)
		}
		if errs := validation.IsValidLabelValue(zone); zone == "" || len(errs) > 0 {
			return nil, fmt.Errorf("--zones=%s: zone %q: want a label value (letters, digits, '-', '_' and '.'), such as zone-a", flag, zone)
		}
		if _, seen := zones[zone]; seen {
			return nil, fmt.Errorf("--zones=%s: zone %s comes twice: give each zone once", flag, zone)
		}
		q, err := resource.ParseQuantity(size)
		if err != nil || q.Sign() <= 0 {
			return nil, fmt.Errorf("--zones=%s: zone %s: capacity %q: want a quantity more than 0, such as 1Gi", flag, zone, size)
		}
		zones[zone] = q.Value()
	}
	return zones, nil
}
