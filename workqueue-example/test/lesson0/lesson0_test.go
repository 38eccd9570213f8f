//go:build e2e

// Package lesson0 checks the exercises of lesson 0 (docs/lessons/00-reading-kubernetes.md):
// each test starts workqueue-example, built from the learner's tree, as a real
// process against the kit cluster ($KUBECONFIG) with the flags the exercise adds,
// and judges it only by what a user of the flag would get: the exit code after
// SIGTERM, the profile file or HTTP answer, read by pprof's own parser
// (github.com/google/pprof/profile, the one `go tool pprof` uses). Nothing here
// reads the controller's log; it is kept for the diagnosis of a failing check.
package lesson0

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// lessonFile is this suite's row of the lesson table: which lesson it checks,
// the controller to build and one row per check (kittest.Lesson).
//
//go:embed lesson.yaml
var lessonFile []byte

var (
	// deadline bounds every wait; `make check` shortens it through $KIT_E2E_TIMEOUT.
	deadline = kittest.Deadline(60 * time.Second)
	// suite builds workqueue-example once for every test; its checks are in
	// lesson.yaml, which make check reads too.
	suite = &kittest.Suite{File: lessonFile}
)

func TestMain(m *testing.M) { os.Exit(suite.Run(m)) }

// runFor is how long a controller runs before the tests stop it: long enough
// to connect, sync its cache and start its workers, so the profiles have
// something in them.
const runFor = 3 * time.Second

// startController runs workqueue-example as the test's own (admin) user on a
// namespace of its own, with the Reconciler $RECONCILER names plus args.
// Lesson 0 is about the command line, not RBAC, so it needs no ServiceAccount.
func startController(t *testing.T, name string, args ...string) *kittest.Process {
	t.Helper()
	ns := kittest.Namespace(t, kittest.Clientset(t), "lesson0")
	flags := []string{"--kubeconfig=" + kittest.Kubeconfig(), "--namespace=" + ns, "--reconciler=" + kittest.Reconciler()}
	return kittest.StartProcess(t, name, suite.Bin, append(flags, args...)...)
}

// stop sends SIGTERM to p and returns an error unless it exits with code 0
// within the deadline: a profile written on shutdown is only worth having if
// the shutdown itself is clean.
func stop(p *kittest.Process, what string) error {
	if p.Exited() {
		code, _ := p.Wait(5 * time.Second)
		return fmt.Errorf("%s exited with code %d before it was stopped (an unknown flag is exit code 1: has the controller got the flag yet?)", what, code)
	}
	code, err := p.Stop(deadline)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if code != 0 {
		return fmt.Errorf("%s exited with code %d after SIGTERM, want 0", what, code)
	}
	return nil
}

// profileKind is a profile --profile takes, and what pprof's parser must find
// in one: its sample types (type/unit) and whether it must hold samples.
type profileKind struct {
	name        string
	sampleTypes []string
	// period is the profile's period type, "" for no check.
	period string
	// nonEmpty: a 3 s run of the controller always has such samples.
	nonEmpty bool
}

var profileKinds = []profileKind{
	{name: "cpu", sampleTypes: []string{"samples/count", "cpu/nanoseconds"}, period: "cpu/nanoseconds"},
	{name: "heap", sampleTypes: []string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}, nonEmpty: true},
	{name: "goroutine", sampleTypes: []string{"goroutine/count"}, nonEmpty: true},
	{name: "threadcreate", sampleTypes: []string{"threadcreate/count"}},
	// Block events are recorded only once runtime.SetBlockProfileRate is set,
	// and every worker blocks in the queue's Get: an empty profile means the
	// rate was never set (or set too late).
	{name: "block", sampleTypes: []string{"contentions/count", "delay/nanoseconds"}, nonEmpty: true},
	// A short run may have no contended mutex at all, so an empty mutex
	// profile is no proof that runtime.SetMutexProfileFraction was forgotten.
	{name: "mutex", sampleTypes: []string{"contentions/count", "delay/nanoseconds"}},
}

// kindOf returns the entry of profileKinds called name.
func kindOf(name string) profileKind {
	i := slices.IndexFunc(profileKinds, func(k profileKind) bool { return k.name == name })
	return profileKinds[i]
}

// The six profiles are six runs of the controller at once, in one test (its
// errors name the profile): make check reports a test, and one line for the
// exercise is enough.
func TestExerciseProfileFlagWritesTheAskedProfileOnShutdown(t *testing.T) {
	kittest.Exercise(t, "profile")
	dir := kittest.TestDir(t)
	processes := map[string]*kittest.Process{}
	for _, kind := range profileKinds {
		out := filepath.Join(dir, kind.name+".pprof")
		_ = os.Remove(out)
		processes[kind.name] = startController(t, "workqueue-example-"+kind.name, "--profile="+kind.name, "--profile-output="+out)
	}
	// A name kubectl does not know is a bad flag value: refused at once, before
	// anything starts, with a non-zero exit code.
	// Refused at once is milliseconds; the wait is the suite's deadline, since
	// a process on a busy machine can wait seconds for its first CPU time.
	bogus := startController(t, "workqueue-example-bogus", "--profile=bogus", "--profile-output="+filepath.Join(dir, "bogus.pprof"))
	time.Sleep(runFor)
	if code, err := bogus.Wait(deadline); err != nil {
		t.Errorf("workqueue-example --profile=bogus still runs after %s: an unknown profile name must be refused when the flags are parsed, like any other bad flag value", runFor+deadline)
		_, _ = bogus.Stop(deadline)
	} else if code == 0 {
		t.Errorf("workqueue-example --profile=bogus exited with code 0: an unknown profile name must be refused with a non-zero exit code")
	}
	for _, kind := range profileKinds {
		out := filepath.Join(dir, kind.name+".pprof")
		if err := stop(processes[kind.name], "workqueue-example --profile="+kind.name); err != nil {
			t.Error(err)
			continue
		}
		prof, err := readProfile(out)
		if err == nil {
			err = checkKind(prof, kind)
		}
		if err == nil && kind.nonEmpty && len(prof.Sample) == 0 {
			err = fmt.Errorf("%s holds a %s profile with no samples; a controller that ran for %s always has some (block: call runtime.SetBlockProfileRate(1) when the controller starts, as kubectl does)", out, kind.name, runFor)
		}
		if err != nil {
			t.Errorf("--profile=%s: %v", kind.name, err)
		}
	}
}

// TestExercisePprofEndpointServesLiveProfiles runs three controllers at once,
// each serving --metrics-bind-address on a port of its own: one with
// --contention-profiling, one with the defaults, one with --profiling=false.
func TestExercisePprofEndpointServesLiveProfiles(t *testing.T) {
	kittest.Exercise(t, "pprof")
	withAddr, defaultAddr, offAddr := kittest.FreeAddress(t), kittest.FreeAddress(t), kittest.FreeAddress(t)
	with := startController(t, "workqueue-example-contention", "--metrics-bind-address="+withAddr, "--contention-profiling")
	byDefault := startController(t, "workqueue-example", "--metrics-bind-address="+defaultAddr)
	off := startController(t, "workqueue-example-no-profiling", "--metrics-bind-address="+offAddr, "--profiling=false")
	with0, default0 := "http://"+withAddr+"/debug/pprof/", "http://"+defaultAddr+"/debug/pprof/"
	waitForEndpoint(t, with, with0)
	waitForEndpoint(t, byDefault, default0)
	waitForEndpoint(t, off, "http://"+offAddr+"/metrics")

	for _, name := range []string{"goroutine", "heap"} {
		prof, err := fetchProfile(with0 + name)
		if err == nil {
			err = checkKind(prof, kindOf(name))
		}
		if err != nil {
			t.Error(err)
		}
	}
	// The workers block in the queue's Get from the start; with the block
	// profile rate set, those waits are samples.
	kittest.Eventually(t, deadline, "the block profile of the controller started with --contention-profiling to hold samples", func(context.Context) (bool, error) {
		prof, err := fetchProfile(with0 + "block")
		if err == nil {
			err = checkKind(prof, kindOf("block"))
		}
		if err == nil && len(prof.Sample) == 0 {
			err = fmt.Errorf("%sblock has no samples: --contention-profiling must call runtime.SetBlockProfileRate(1), as kube-controller-manager's NewBaseHandler does", with0)
		}
		return err == nil, err
	})
	// Without the flag the rate stays 0: the same run records nothing.
	prof, err := fetchProfile(default0 + "block")
	if err == nil {
		err = checkKind(prof, kindOf("block"))
	}
	if err == nil && len(prof.Sample) > 0 {
		err = fmt.Errorf("%sblock has %d samples without --contention-profiling: the block profile rate must stay 0 unless asked for (recording every blocking event costs time)", default0, len(prof.Sample))
	}
	if err != nil {
		t.Error(err)
	}
	// --profiling=false leaves the profiles out and keeps /metrics.
	if resp, err := http.Get("http://" + offAddr + "/debug/pprof/"); err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /debug/pprof/ of the controller started with --profiling=false: %s, want 404 Not Found (no profiles served)", resp.Status)
		}
	}
	for p, what := range map[*kittest.Process]string{with: "--contention-profiling", byDefault: "(defaults)", off: "--profiling=false"} {
		if err := stop(p, "workqueue-example "+what); err != nil {
			t.Error(err)
		}
	}
}

// readProfile parses the file at path as a pprof profile; the error says what
// is wrong when it is missing or is not one.
func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("no profile after SIGTERM: %w (write it once the workers have stopped, before the process exits)", err)
	}
	defer f.Close()
	prof, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s is not a pprof profile: %w (write it with pprof.Lookup(name).WriteTo(f, 0), or pprof.StartCPUProfile for cpu)", path, err)
	}
	return prof, nil
}

// fetchProfile GETs url and parses the answer as a pprof profile.
func fetchProfile(url string) (*profile.Profile, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: reading the answer: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s, want 200 OK: %.200s", url, resp.Status, body)
	}
	prof, err := profile.ParseData(body)
	if err != nil {
		return nil, fmt.Errorf("GET %s did not answer with a pprof profile: %w", url, err)
	}
	return prof, nil
}

// checkKind returns an error unless prof has exactly the sample types of the
// profile kind (and its period type, when it has one).
func checkKind(prof *profile.Profile, kind profileKind) error {
	var got []string
	for _, st := range prof.SampleType {
		got = append(got, st.Type+"/"+st.Unit)
	}
	if !slices.Equal(got, kind.sampleTypes) {
		return fmt.Errorf("a %s profile has the sample types %s; this one has %s: is it another kind of profile?", kind.name, strings.Join(kind.sampleTypes, ", "), strings.Join(got, ", "))
	}
	if kind.period != "" && (prof.PeriodType == nil || prof.PeriodType.Type+"/"+prof.PeriodType.Unit != kind.period) {
		return fmt.Errorf("a %s profile has the period type %s; this one has %v", kind.name, kind.period, prof.PeriodType)
	}
	return nil
}

// waitForEndpoint waits until url answers 200 OK, failing the test at once if
// the controller exits first (with its exit code: 1 for an unknown flag).
func waitForEndpoint(t *testing.T, p *kittest.Process, url string) {
	t.Helper()
	kittest.Eventually(t, deadline, url+" to answer 200 OK", func(context.Context) (bool, error) {
		if p.Exited() {
			code, _ := p.Wait(5 * time.Second)
			t.Fatalf("%s exited with code %d before serving %s (an unknown flag is exit code 1: has the controller got --profiling and --contention-profiling yet?)", p.Name, code, url)
		}
		resp, err := http.Get(url)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return true, nil
	})
}
