package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// scaleStep is one scenario run of `make bench-scale`: the burst's N (Foos;
// the guestbook scenario creates N/10 Guestbooks) and what it measured.
type scaleStep struct {
	N int `json:"n"`
	result
}

// runScale is `make bench-scale`: each scenario at each N of o.scale, every run
// on a fresh cluster sized to its Pods, one after another. Upstream and
// ours-upstream-settings (client-go's 5 requests per second) run only up to
// o.upstreamMax. It prints a progress line per phase, the table and the
// fitted growth, and writes results-scale.json (after every step, so a run
// cut short keeps what it measured) and scale.png to o.out.
func runScale(o options) error {
	sizes, err := parseSizes(o.scale)
	if err != nil {
		return err
	}
	all, err := scenarios(o)
	if err != nil {
		return err
	}
	type job struct {
		n    int
		name string
	}
	var jobs []job
	for _, n := range sizes {
		for _, name := range strings.Split(o.scenarios, ",") {
			name = strings.TrimSpace(name)
			if _, ok := all[name]; !ok {
				return fmt.Errorf("-scenarios: unknown scenario %q", name)
			}
			if (name == "upstream" || name == "ours-upstream-settings") && n > o.upstreamMax {
				continue // at 5 requests per second, 10,000 Foos take over an hour
			}
			jobs = append(jobs, job{n, name})
		}
	}
	begin := time.Now()
	var steps []scaleStep
	for i, j := range jobs {
		objects := objectsOf(j.name, j.n)
		fmt.Fprintf(os.Stderr, ">> bench-scale step %d/%d: %s at N=%d (%d objects); %s elapsed\n",
			i+1, len(jobs), j.name, j.n, objects, time.Since(begin).Round(time.Second))
		r, err := all[j.name](o, objects)
		if err != nil {
			return fmt.Errorf("%s at N=%d: %w", j.name, j.n, err)
		}
		fmt.Fprintf(os.Stderr, "   Deployments exist after %.1fs, converged after %.1fs\n", r.DeploymentsExist, r.Converged)
		r.Timeline = nil // thousands of numbers per step; results.json of make bench has them
		steps = append(steps, scaleStep{N: j.n, result: r})
		if err := writeScaleJSON(o.out, steps); err != nil {
			return err
		}
	}
	wall := time.Since(begin).Round(time.Second)
	fmt.Print(scaleMarkdown(o, steps, wall))
	path := filepath.Join(o.out, "scale.png")
	if err := plotScale(steps, path); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, ">> wrote %s and %s (bench-scale took %s)\n", filepath.Join(o.out, "results-scale.json"), path, wall)
	return nil
}

// scaleReport renders the table, the fits and the plot of an earlier run's
// results-scale.json (o.scaleReport) again, the plot beside that file.
func scaleReport(o options) error {
	js, err := os.ReadFile(o.scaleReport)
	if err != nil {
		return err
	}
	var steps []scaleStep
	if err := json.Unmarshal(js, &steps); err != nil {
		return fmt.Errorf("%s: %w", o.scaleReport, err)
	}
	var ns []string
	for _, n := range uniqueNs(steps) {
		ns = append(ns, strconv.Itoa(n))
	}
	o.scale = strings.Join(ns, ",")
	for _, s := range steps {
		if s.IdleSeconds > 0 {
			o.idle = time.Duration(s.IdleSeconds * float64(time.Second)).Round(time.Second)
			break
		}
	}
	fmt.Print(scaleMarkdown(o, steps, 0))
	return plotScale(steps, filepath.Join(filepath.Dir(o.scaleReport), "scale.png"))
}

// parseSizes reads -scale's comma-separated Ns.
func parseSizes(list string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-scale: %q is not a positive number of Foos", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

func writeScaleJSON(dir string, steps []scaleStep) error {
	js, err := json.MarshalIndent(steps, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results-scale.json"), js, 0o644)
}

// scaleMarkdown renders the scale table, the ratios to the floor and the fitted growth.
func scaleMarkdown(o options, steps []scaleStep, wall time.Duration) string {
	var b strings.Builder
	took := ""
	if wall > 0 {
		took = fmt.Sprintf(", %s in all", wall)
	}
	fmt.Fprintf(&b, "\n### make bench-scale SIZES=%s (idle window %s, %d CPUs, %s%s)\n\n",
		o.scale, o.idle, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"), took)
	b.WriteString("| N | scenario | objects | nodes | all Deployments exist | all converged | peak RSS | CPU | controller writes in the burst | idle writes |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range steps {
		rss, cpu := "-", "-"
		if s.PeakRSSMiB > 0 {
			rss, cpu = fmt.Sprintf("%.0f MiB", s.PeakRSSMiB), fmt.Sprintf("%.1f s", s.CPUSeconds)
		}
		writes, idle := fmt.Sprintf("%d (by construction)", 2*s.Objects), "-"
		if s.BurstWrites != nil {
			writes = fmt.Sprint(s.BurstWrites.total())
		}
		if s.Idle != nil {
			idle = fmt.Sprint(s.Idle.total())
		}
		converged := fmt.Sprintf("%.1f s", s.Converged)
		if s.WritesDone > 0 {
			converged += fmt.Sprintf(" (writes: %.1f s)", s.WritesDone)
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %.1f s | %s | %s | %s | %s | %s |\n",
			s.N, s.Scenario, s.Objects, s.Nodes, s.DeploymentsExist, converged, rss, cpu, writes, idle)
	}
	b.WriteString("\n\"all converged\": Foos report every replica available (guestbook: condition Available); the floor's is its " +
		"Deployments' rollout, with its last status write in brackets. \"controller writes in the burst\": the controller's " +
		"creates, updates and patches of custom resources (status included), Deployments and Events from the burst's first " +
		"create to convergence, from the audit log. \"idle writes\": the same in the idle window.\n\n")
	for _, n := range uniqueNs(steps) {
		ours, okOurs := find(steps, n, "ours")
		floor, okFloor := find(steps, n, "floor")
		if okOurs && okFloor {
			fmt.Fprintf(&b, "N=%d: ours / floor: Deployments exist %.2fx, converged %.2fx\n",
				n, ours.DeploymentsExist/floor.DeploymentsExist, ours.Converged/floor.Converged)
		}
	}
	writeFits(&b, steps)
	writeCacheCosts(&b, steps)
	return b.String()
}

// writeFits writes, per scenario run at two Ns or more, the fitted growth of
// its times and peak RSS.
func writeFits(b *strings.Builder, steps []scaleStep) {
	b.WriteString("\nFitted growth (least squares over the Ns above; exponent: slope of log time against log N, 1 is linear):\n\n")
	for _, name := range []string{"ours", "floor", "upstream", "ours-upstream-settings", "guestbook"} {
		var objects, exist, converged, rss []float64
		for _, s := range steps {
			if s.Scenario == name {
				objects = append(objects, float64(s.Objects))
				exist = append(exist, s.DeploymentsExist)
				converged = append(converged, s.Converged)
				rss = append(rss, s.PeakRSSMiB*(1<<20))
			}
		}
		if len(objects) < 2 {
			continue
		}
		unit := "Foos"
		if name == "guestbook" {
			unit = "Guestbooks"
		}
		se, _ := fitLine(objects, exist)
		sc, _ := fitLine(objects, converged)
		fmt.Fprintf(b, "- %s: Deployments exist %+.1f s per 1,000 %s (exponent %.2f), converged %+.1f s per 1,000 (exponent %.2f)",
			name, se*1000, unit, logSlope(objects, exist), sc*1000, logSlope(objects, converged))
		if rss[0] > 0 {
			sr, _ := fitLine(objects, rss)
			fmt.Fprintf(b, "; peak RSS %+.1f KiB per %s", sr/1024, strings.TrimSuffix(unit, "s"))
		}
		b.WriteString("\n")
	}
}

// writeCacheCosts writes the table of what one Deployment costs in an
// informer's cache, for the steps that measured it.
func writeCacheCosts(b *strings.Builder, steps []scaleStep) {
	var costs []scaleStep
	for _, s := range steps {
		if s.CacheCost != nil {
			costs = append(costs, s)
		}
	}
	if len(costs) > 0 {
		b.WriteString("\nWhat one Deployment costs in an informer's cache (Go heap per object, measured in the harness on ours' Deployments):\n\n" +
			"| N | as client-go caches it | without managedFields (ours) | metadata only | metadata only, without managedFields |\n" +
			"|---:|---:|---:|---:|---:|\n")
		for _, s := range costs {
			c := s.CacheCost
			fmt.Fprintf(b, "| %d | %.0f B | %.0f B | %.0f B | %.0f B |\n", c.Objects, c.Full, c.NoManagedFields, c.MetadataOnly, c.MetadataNoManaged)
		}
	}
}

// total is every write counted.
func (w writeCounts) total() int { return w.CustomWrites + w.DeploymentWrites + w.Events }

func uniqueNs(steps []scaleStep) []int {
	var ns []int
	for _, s := range steps {
		if len(ns) == 0 || ns[len(ns)-1] != s.N {
			ns = append(ns, s.N)
		}
	}
	return ns
}

func find(steps []scaleStep, n int, scenario string) (scaleStep, bool) {
	for _, s := range steps {
		if s.N == n && s.Scenario == scenario {
			return s, true
		}
	}
	return scaleStep{}, false
}

// fitLine returns the least-squares slope and intercept of y against x.
func fitLine(x, y []float64) (slope, intercept float64) {
	var sx, sy, sxx, sxy float64
	n := float64(len(x))
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0, sy / n
	}
	slope = (n*sxy - sx*sy) / d
	return slope, (sy - slope*sx) / n
}

// logSlope is the growth exponent: the slope of log y against log x.
func logSlope(x, y []float64) float64 {
	lx, ly := make([]float64, len(x)), make([]float64, len(y))
	for i := range x {
		lx[i], ly[i] = math.Log(x[i]), math.Log(max(y[i], 1e-3))
	}
	s, _ := fitLine(lx, ly)
	return s
}

// plotScale draws time (left) and peak RSS (right) against the number of
// objects, both axes logarithmic, one line per scenario.
func plotScale(steps []scaleStep, path string) error {
	times := plot.New()
	times.Title.Text = "Time against N (log-log)"
	times.X.Label.Text = "objects in the burst"
	times.Y.Label.Text = "seconds"
	rss := plot.New()
	rss.Title.Text = "Controller peak RSS against N (log-log)"
	rss.X.Label.Text = "objects in the burst"
	rss.Y.Label.Text = "MiB"
	for _, p := range []*plot.Plot{times, rss} {
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = ticks125{}, ticks125{}
		p.Legend.Top, p.Legend.Left = true, true
		p.Add(plotter.NewGrid())
	}
	colors := map[string]color.RGBA{
		"ours": {R: 0x1f, G: 0x77, B: 0xb4, A: 255}, "upstream": {R: 0xd6, G: 0x27, B: 0x28, A: 255},
		"floor": {R: 0x7f, G: 0x7f, B: 0x7f, A: 255}, "ours-upstream-settings": {R: 0xff, G: 0x7f, B: 0x0e, A: 255},
		"guestbook": {R: 0x2c, G: 0xa0, B: 0x2c, A: 255},
	}
	add := func(p *plot.Plot, label, scenario string, dashed bool, value func(scaleStep) float64) error {
		var pts plotter.XYs
		for _, s := range steps {
			if v := value(s); s.Scenario == scenario && v > 0 {
				pts = append(pts, plotter.XY{X: float64(s.Objects), Y: v})
			}
		}
		if len(pts) == 0 {
			return nil
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, line.Width, points.Color = colors[scenario], vg.Points(2), colors[scenario]
		if dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(label, line, points)
		return nil
	}
	for _, name := range []string{"ours", "floor", "upstream", "ours-upstream-settings", "guestbook"} {
		if err := add(times, name+": Deployments exist", name, true, func(s scaleStep) float64 { return s.DeploymentsExist }); err != nil {
			return err
		}
		label := name + ": converged"
		if name == "floor" {
			label = "floor: rollout"
		}
		if err := add(times, label, name, false, func(s scaleStep) float64 { return s.Converged }); err != nil {
			return err
		}
		if err := add(rss, name, name, false, func(s scaleStep) float64 { return s.PeakRSSMiB }); err != nil {
			return err
		}
	}
	const w, h = 12 * vg.Inch, 5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{{times, rss}}, tiles, dc)
	times.Draw(canvases[0][0])
	rss.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return err
	}
	return f.Close()
}

// ticks125 labels a logarithmic axis at 1, 2 and 5 times each power of ten, so
// a range within one decade (RSS from 40 to 90 MiB) still has labels.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	ticks := logTicks(lo, hi, []float64{1, 2, 5})
	if len(ticks) < 3 {
		ticks = logTicks(lo, hi, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	return ticks
}

func logTicks(lo, hi float64, multiples []float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for _, m := range multiples {
			if v := m * math.Pow(10, e); v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
			}
		}
	}
	return ticks
}
