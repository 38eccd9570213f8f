package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sources the tests' pages quote: a tier with a main.go, a test and a
// Makefile, beside the root's Makefile.
var lineSources = map[string]string{
	"tier/main.go": `package main

import "k8s.io/klog/v2"

func main() {
	klog.InfoS("Cloud ready", "provider", "toycloud")
	(&worker{}).run()
}

type worker struct{}

func (w *worker) run() {
	klog.Infof("Started %q", "service-lb-controller")
}
`,
	"tier/test/e2e/x_test.go": `package e2e

import "testing"

func TestX(t *testing.T) {
	if n := 2; n != 1 {
		t.Errorf("the controller wrote %d times, want once", n)
	}
	waitFor(t, "the Deployment", func() bool { return true })
	switch n := 3; {
	case n > 2:
		t.Errorf("no test matching ^TestScaleToZero ran")
	}
}
`,
	"Makefile": `.PHONY: check
check: ## Run the checks.
	@go run ./test/check

.DEFAULT:
	@hack/no-such-target.sh "$@"
`,
}

func writeLineSources(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for path, text := range lineSources {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestQuotedLineRefsMatchingTheirSourcesPass(t *testing.T) {
	page := strings.Join([]string{
		"```",
		`I1203 15:52:32.267984   24429 main.go:6] "Cloud ready" provider="toycloud"`,
		`I1203 15:52:32.293765   24429 main.go:13] Started "service-lb-controller"`,
		`      | x_test.go:7: the controller wrote 5 times, want once`,
		`      | x_test.go:9: timed out after 30s waiting for the Deployment`,
		`0  0x0000000001b5aa5e in example.com/tier.(*worker).run`,
		`   at ./tier/main.go:13`,
		`1  0x0000000001b5a5f3 in example.com/tier.main`,
		`   at ./tier/main.go:7`,
		`make: *** [Makefile:3: check] Error 1`,
		`make: *** [Makefile:6: install] Error 2`,
		`I1203 15:52:32.294258   24429 controller.go:235] Starting service controller`,
		"```",
	}, "\n")
	problems, checked, err := newSourceIndex(writeLineSources(t)).staleRefs("docs/lessons/l.md", page, []string{"tier", "."})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("references that match were reported:\n%s", strings.Join(problems, "\n"))
	}
	// controller.go is no file of the kit (upstream's): not checked.
	if checked != 8 {
		t.Errorf("checked %d references, want 8", checked)
	}
}

func TestQuotedLineRefOnAWrongLineNamesThePageTheReferenceAndTheLineNow(t *testing.T) {
	root := writeLineSources(t)
	for _, tc := range []struct {
		name, quoted string
		want         []string
	}{
		{"a klog line", `I1203 15:52:32.267984   24429 main.go:7] "Cloud ready" provider="toycloud"`,
			[]string{"docs/lessons/l.md:2: main.go:7", `tier/main.go:7 is now "(&worker{}).run()"`, "the line it means is tier/main.go:6"}},
		{"a test's report", `      | x_test.go:6: the controller wrote 5 times, want once`,
			[]string{"x_test.go:6", `tier/test/e2e/x_test.go:6 is now "if n := 2; n != 1 {"`, "the line it means is tier/test/e2e/x_test.go:7"}},
		{"another report", `      | x_test.go:7: timed out after 30s waiting for the Deployment`,
			[]string{"x_test.go:7", "the line it means is tier/test/e2e/x_test.go:9"}},
		{"the case above a report", `      | x_test.go:11: no test matching ^TestScaleToZero ran`,
			[]string{"x_test.go:11", `is now "case n > 2:"`, "the line it means is tier/test/e2e/x_test.go:12"}},
		{"the closing brace of the if around a report", `      | x_test.go:8: the controller wrote 5 times, want once`,
			[]string{"x_test.go:8", `is now "}"`}},
		{"a frame of delve", "1  0x0000000001b5aa5e in example.com/tier.(*worker).run\n   at ./tier/main.go:7",
			[]string{"./tier/main.go:7", "want a line of (*worker).run", "the line it means is tier/main.go:12"}},
		{"a frame of delve below another", "0  0x0000000001b5aa5e in example.com/tier.(*worker).run\n   at ./tier/main.go:13\n1  0x0000000001b5a5f3 in example.com/tier.main\n   at ./tier/main.go:6",
			[]string{"./tier/main.go:6", "want the line of main that calls run", "the line it means is tier/main.go:7"}},
		{"make's report", `make: *** [Makefile:6: check] Error 1`,
			[]string{"Makefile:6", "want a line of the recipe of check", "the line it means is Makefile:3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, _, err := newSourceIndex(root).staleRefs("docs/lessons/l.md", "```\n"+tc.quoted+"\n```", []string{"tier", "."})
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 1 {
				t.Fatalf("got %d problems, want 1: %q", len(problems), problems)
			}
			for _, want := range tc.want {
				if !strings.Contains(problems[0], want) {
					t.Errorf("the problem does not say %q:\n%s", want, problems[0])
				}
			}
		})
	}
}
