//go:build e2e

package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"
)

// Figure is one number a scenario measured, for the report: never a pass/fail
// condition.
type Figure struct {
	// Scenario is the test that measured it, such as "TestFooBurstSurvivesControllerCrash".
	Scenario string `json:"scenario"`
	// Name says what was measured, such as "converged after restart".
	Name string `json:"name"`
	// Value is the measurement, in Unit.
	Value float64 `json:"value"`
	// Unit is "s" for seconds, "" for a count.
	Unit string `json:"unit"`
}

// Outcome is how one scenario ended.
type Outcome struct {
	Scenario string `json:"scenario"`
	// Passed is false when the test failed: its figures may then be partial.
	Passed bool `json:"passed"`
	// Seconds is how long the whole test took, set-up included.
	Seconds float64 `json:"seconds"`
}

// Report is what _output/reliability.json holds.
type Report struct {
	// Cluster names the local cluster the scenarios ran on.
	Cluster string `json:"cluster"`
	// Foos and Guestbooks are the sizes of the crash scenarios' bursts.
	Foos       int       `json:"foos"`
	Guestbooks int       `json:"guestbooks"`
	Outcomes   []Outcome `json:"outcomes"`
	Figures    []Figure  `json:"figures"`
}

var (
	reportMu sync.Mutex
	results  Report
)

// scenario marks t as one of the report's scenarios: when it ends, its outcome
// is recorded.
func scenario(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() {
		reportMu.Lock()
		defer reportMu.Unlock()
		results.Outcomes = append(results.Outcomes, Outcome{Scenario: t.Name(), Passed: !t.Failed(), Seconds: time.Since(start).Seconds()})
	})
}

// record adds a figure to the report under t's name, and to t's log.
func record(t *testing.T, name string, value float64, unit string) {
	t.Logf("figure: %s = %.3g%s", name, value, unit)
	reportMu.Lock()
	defer reportMu.Unlock()
	results.Figures = append(results.Figures, Figure{Scenario: t.Name(), Name: name, Value: value, Unit: unit})
}

// writeReport writes the report as JSON to path and prints it as a table.
func writeReport(path, cluster string) error {
	reportMu.Lock()
	defer reportMu.Unlock()
	results.Cluster, results.Foos, results.Guestbooks = cluster, *foos, *guestbooks
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nreliability scenarios on %s (%d Foos, %d Guestbooks); JSON: %s\n\n", cluster, *foos, *guestbooks, path)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tRESULT\tFIGURE\tVALUE")
	for _, o := range results.Outcomes {
		verdict := "passed"
		if !o.Passed {
			verdict = "FAILED"
		}
		fmt.Fprintf(w, "%s\t%s\ttest took\t%.1f s\n", o.Scenario, verdict, o.Seconds)
		for _, f := range results.Figures {
			if f.Scenario != o.Scenario && !strings.HasPrefix(f.Scenario, o.Scenario+"/") {
				continue
			}
			value := fmt.Sprintf("%g", f.Value)
			if f.Unit == "s" {
				value = fmt.Sprintf("%.1f s", f.Value)
			}
			fmt.Fprintf(w, "\t\t%s\t%s\n", f.Name, value)
		}
	}
	return w.Flush()
}
