package main

import (
	"os"
	"path/filepath"
	"testing"
)

// diagramPage is a lesson page that reads `ScheduleOne` and `(*Framework).RunFilterPlugins`
// in its text and table, with the mermaid block diagram.
func diagramPage(diagram string) string {
	return "# Lesson\n\n`ScheduleOne` pops a Pod.\n\n| file | search for |\n|---|---|\n| `framework.go` | `(*Framework).RunFilterPlugins` |\n\n" +
		"```sh\nRunScorePlugins()\n```\n\n" + diagram + "\nThe end.\n"
}

func TestDiagramProblemsHoldADiagramToWhatTheLessonReads(t *testing.T) {
	for _, tc := range []struct {
		name, page string
		want       []string
	}{
		{"names only what the text reads", diagramPage("```mermaid\nflowchart LR\n    Q[(queue)] -- \"Pop\" --> S[\"ScheduleOne()\"]\n    S --> F[\"fwk.RunFilterPlugins(ctx)\"]\n```\n"), nil},
		{"an indented block in a list item", diagramPage("- step\n\n  ```mermaid\n  flowchart LR\n      S[\"ScheduleOne()\"]\n  ```\n"), nil},
		{"names a function the lesson never writes as code", diagramPage("```mermaid\nflowchart LR\n    S[\"ScheduleOne()\"] --> B[\"bindingCycle()\"]\n```\n"),
			[]string{"docs/lessons/08-x.md:15: the diagram names bindingCycle()", "`bindingCycle`"}},
		{"a name only in another code block does not count", diagramPage("```mermaid\nflowchart LR\n    S[\"RunScorePlugins()\"]\n```\n"),
			[]string{"docs/lessons/08-x.md:15: the diagram names RunScorePlugins()"}},
		{"no diagram", diagramPage(""), []string{"docs/lessons/08-x.md: no diagram", "```mermaid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "docs", "lessons", "08-x.md")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.page), 0o644); err != nil {
				t.Fatal(err)
			}
			problems, _, err := diagramProblems(root, "docs/lessons/08-x.md")
			if err != nil {
				t.Fatal(err)
			}
			requireProblems(t, problems, tc.want)
		})
	}
}
