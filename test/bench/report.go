package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// floorWritesRow names the table row of the floor's writes alone: its
// "converged" is when its last status write returned.
const floorWritesRow = "floor: writes only"

// markdown renders the results as the table docs/performance.md shows.
func markdown(o options, results []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### make bench N=%d (idle window %s, %d run(s) each, %d CPUs, %s)\n\n",
		o.n, o.idle, o.repeat, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| scenario | objects | all Deployments exist | all converged | client throttling | peak queue depth | idle: custom-resource writes | idle: Deployment writes | idle: Events | peak RSS | CPU |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	byName := map[string]result{}
	for _, r := range results {
		byName[r.Scenario] = r
		idle := [3]string{"-", "-", "-"}
		if r.Idle != nil {
			idle = [3]string{fmt.Sprint(r.Idle.CustomWrites), fmt.Sprint(r.Idle.DeploymentWrites), fmt.Sprint(r.Idle.Events)}
		}
		rss, cpu := "-", "-"
		if r.PeakRSSMiB > 0 {
			rss, cpu = fmt.Sprintf("%.0f MiB", r.PeakRSSMiB), fmt.Sprintf("%.1f s", r.CPUSeconds)
		}
		throttling, depth := "-", "-"
		if r.RateLimiterWaitSeconds != nil {
			throttling = fmt.Sprintf("%.1f s", *r.RateLimiterWaitSeconds)
		}
		if r.PeakQueueDepth != nil {
			depth = fmt.Sprintf("%.0f", *r.PeakQueueDepth)
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f s | %.2f s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Scenario, r.Objects, r.DeploymentsExist, r.Converged, throttling, depth, idle[0], idle[1], idle[2], rss, cpu)
		if r.WritesDone > 0 {
			fmt.Fprintf(&b, "| %s | %d | %.2f s | %.2f s | - | - | - | - | - | - | - |\n",
				floorWritesRow, r.Objects, r.DeploymentsExist, r.WritesDone)
		}
	}
	b.WriteString("\n\"all converged\": Foos report every replica available (guestbook: condition Available); " +
		"for the floor, every Deployment it created is available (the cluster's own rollout), and for " + floorWritesRow +
		" (the same run), its last status write returned. \"client throttling\": how long the burst's requests waited " +
		"for the controller's own client-side rate limiter, summed over requests (rest_client_rate_limiter_duration_seconds); " +
		"\"peak queue depth\": the highest workqueue_depth sampled every " + depthSampling.String() + " until convergence; " +
		"both from the controller's /metrics (upstream has none: ours-upstream-settings is ours with its settings).\n")
	ours, okOurs := byName["ours"]
	if up, ok := byName["upstream"]; ok && okOurs {
		fmt.Fprintf(&b, "\nours / upstream: Deployments exist %.2fx, converged %.2fx, peak RSS %.2fx\n",
			ours.DeploymentsExist/up.DeploymentsExist, ours.Converged/up.Converged, ours.PeakRSSMiB/up.PeakRSSMiB)
	}
	if floor, ok := byName["floor"]; ok && okOurs {
		fmt.Fprintf(&b, "ours / floor: Deployments exist %.2fx, converged %.2fx (against the floor's rollout)\n",
			ours.DeploymentsExist/floor.DeploymentsExist, ours.Converged/floor.Converged)
	}
	return b.String()
}

// writeOutputs writes results.json and converged.png (Deployments existing over
// time, one line per scenario that creates Foos) to dir.
func writeOutputs(dir string, results []result) error {
	js, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), js, 0o644); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = "Foos with their Deployment, over time"
	p.X.Label.Text = "seconds since the burst started"
	p.Y.Label.Text = "Deployments existing"
	p.Legend.Top, p.Legend.Left = false, false
	colors := map[string]color.RGBA{
		"ours": {R: 0x1f, G: 0x77, B: 0xb4, A: 255}, "upstream": {R: 0xd6, G: 0x27, B: 0x28, A: 255},
		"floor": {R: 0x7f, G: 0x7f, B: 0x7f, A: 255}, "ours-upstream-settings": {R: 0xff, G: 0x7f, B: 0x0e, A: 255},
	}
	for _, r := range results {
		c, ok := colors[r.Scenario]
		if !ok || len(r.Timeline) == 0 {
			continue
		}
		pts := make(plotter.XYs, 0, len(r.Timeline)+1)
		pts = append(pts, plotter.XY{X: 0, Y: 0})
		for i, t := range r.Timeline {
			pts = append(pts, plotter.XY{X: t, Y: float64(i + 1)})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color, line.Width = c, vg.Points(2)
		p.Add(line)
		p.Legend.Add(r.Scenario, line)
	}
	p.Add(plotter.NewGrid())
	if err := p.Save(7*vg.Inch, 4*vg.Inch, filepath.Join(dir, "converged.png")); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, ">> wrote %s and %s\n", filepath.Join(dir, "results.json"), filepath.Join(dir, "converged.png"))
	return nil
}
