package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFitLineRecoversSlopeAndIntercept(t *testing.T) {
	x := []float64{100, 1000, 5000, 10000}
	y := make([]float64, len(x))
	for i := range x {
		y[i] = 0.02*x[i] + 3
	}
	slope, intercept := fitLine(x, y)
	if math.Abs(slope-0.02) > 1e-9 || math.Abs(intercept-3) > 1e-6 {
		t.Errorf("fitLine = %v, %v; want 0.02, 3", slope, intercept)
	}
	if e := logSlope(x, x); math.Abs(e-1) > 1e-9 {
		t.Errorf("logSlope of y = x is %v, want 1", e)
	}
}

func TestScaleReportHasRatiosFitsAndPlot(t *testing.T) {
	var steps []scaleStep
	for _, n := range []int{100, 1000} {
		w := writeCounts{CustomWrites: n, DeploymentWrites: n, Events: n}
		steps = append(steps,
			scaleStep{N: n, result: result{Scenario: "ours", Objects: n, Nodes: 3, DeploymentsExist: float64(n) / 100, Converged: float64(n) / 40,
				PeakRSSMiB: 40 + float64(n)/100, CPUSeconds: 1, BurstWrites: &w, Idle: &writeCounts{}}},
			scaleStep{N: n, result: result{Scenario: "floor", Objects: n, Nodes: 3, DeploymentsExist: float64(n) / 120, Converged: float64(n) / 45, WritesDone: float64(n) / 110}})
	}
	md := scaleMarkdown(options{scale: "100,1000", idle: time.Second}, steps, time.Minute)
	for _, want := range []string{"N=1000: ours / floor: Deployments exist 1.20x, converged 1.12x", "- ours: Deployments exist", "KiB per Foo", "(writes: 9.1 s)"} {
		if !strings.Contains(md, want) {
			t.Errorf("the scale report lacks %q:\n%s", want, md)
		}
	}
	path := filepath.Join(t.TempDir(), "scale.png")
	if p := os.Getenv("SCALE_PLOT"); p != "" {
		path = p
	}
	if err := plotScale(steps, path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("no plot at %s: %v", path, err)
	}
}
