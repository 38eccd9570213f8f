package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// The lists of lessons outside the lesson files, which -verify-lists (make
// verify-docs) holds to them, so that a new lesson file is either listed
// everywhere or named as missing:
//   - the lesson table of each lesson-path page: one row per lesson, in order,
//     its first cell the lesson's number and its link the lesson's page;
//   - every list of three lessons or more that a text of the kit writes out
//     ("lessons N, M and K", "LESSON=N|M|K", "レッスンN、M、K"): it carries a
//     mark naming the set it lists, <!-- lessons: SET --> right after it (one
//     of lessonSets), and holds exactly that set's lessons; a list without a
//     mark is refused, since nothing could tell when it went stale. Two lessons
//     ("lessons 2 and 3") and a range alone ("lessons 1 to 3") are claims about
//     those lessons, not lists of every lesson with some property.

// lessonPathPages are the pages whose lesson table has a row per lesson: the
// lesson path and its Japanese twin (both link the lessons as lessons/NN-*.md).
var lessonPathPages = []string{"docs/README.md", "docs/ja/lesson-path.md"}

// lessonSets are the sets of lessons a list in the kit's texts may name in its
// mark, each a property of the lesson files.
var lessonSets = map[string]func(*lesson) bool{
	// every lesson
	"all": func(*lesson) bool { return true },
	// the lessons whose checks run on make test's clusters (cluster: shared)
	"shared": func(l *lesson) bool { return l.Cluster == kittest.ClusterShared },
	// the lessons with a cluster of their own (cluster: own; make test-lessonN)
	"own": func(l *lesson) bool { return l.Cluster == kittest.ClusterOwn },
	// the lessons make test-kind runs (no localClusterOnly)
	"kind": func(l *lesson) bool { return l.LocalClusterOnly == "" },
	// the lessons that run on the local cluster only (localClusterOnly)
	"localClusterOnly": func(l *lesson) bool { return l.LocalClusterOnly != "" },
	// the lessons with a Reconciler of their own to check (RECONCILER=)
	"reconciler": func(l *lesson) bool { return !l.OnlyExercises },
	// the lessons whose checks are all exercises
	"onlyExercises": func(l *lesson) bool { return l.OnlyExercises },
	// the lessons about Kubernetes' own source (kubeSource)
	"kubeSource": func(l *lesson) bool { return l.KubeSource },
}

// lessonSetNames returns the names of lessonSets, sorted, for a message.
func lessonSetNames() string {
	var names []string
	for name := range lessonSets {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

var (
	// writtenLists are the ways a text writes out a list of lessons; the
	// list is each match's last group (and, for the LESSON=1 (2, 3) form,
	// its first too).
	writtenLists = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\blessons? (\d+(?:(?:,? and |, | or | to |-|\|)\d+)+)`),
		regexp.MustCompile(`LESSON=(\d+(?:\|\d+)+)`),
		regexp.MustCompile("LESSON=(\\d+)`\\s*[（(](\\d+(?:(?:, |、)\\d+)+)[）)]"),
		regexp.MustCompile(`レッスン(\d+(?:(?:、|と|から|〜|・)\d+)+)`),
	}
	// listToken is a number of a written list, or what joins it to the next.
	listToken = regexp.MustCompile(`\d+|,? and |, | or | to |-|\||、|と|から|〜|・`)
	// listMark is the mark after a list that names its set.
	listMark = regexp.MustCompile(`^[^<]{0,40}?<!-- lessons: (\S+) -->`)
)

// listedLessons returns the lesson numbers a written list names, ranges
// ("1 to 3", "0から3") expanded, and whether it is a range and nothing else.
func listedLessons(list string) (numbers []int, onlyARange bool) {
	tokens := listToken.FindAllString(list, -1)
	ranges := 0
	for i := 0; i < len(tokens); i++ {
		n, err := strconv.Atoi(tokens[i])
		if err != nil {
			continue
		}
		if i+2 < len(tokens) && (tokens[i+1] == " to " || tokens[i+1] == "-" || tokens[i+1] == "から" || tokens[i+1] == "〜") {
			if m, err := strconv.Atoi(tokens[i+2]); err == nil && m > n {
				for k := n; k <= m; k++ {
					numbers = append(numbers, k)
				}
				ranges++
				i += 2
				continue
			}
		}
		numbers = append(numbers, n)
	}
	return numbers, ranges == 1 && len(tokens) == 3
}

// listProblem is one list of lessons a text writes that does not hold.
type listProblem struct {
	file string
	line int
	msg  string
}

func (p listProblem) String() string { return fmt.Sprintf("%s:%d: %s", p.file, p.line, p.msg) }

// checkWrittenLists returns the problems of the lists of lessons that text
// (the file name, from the root) writes out.
func checkWrittenLists(name string, text []byte, lessons []*lesson) []listProblem {
	var problems []listProblem
	scanner := bufio.NewScanner(bytes.NewReader(text))
	scanner.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	inCode := false
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		if strings.HasSuffix(name, ".md") && strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		for _, re := range writtenLists {
			for _, m := range re.FindAllStringSubmatchIndex(line, -1) {
				var numbers []int
				onlyARange := true
				for g := 1; 2*g < len(m); g++ {
					got, r := listedLessons(line[m[2*g]:m[2*g+1]])
					numbers = append(numbers, got...)
					onlyARange = onlyARange && r && len(m) == 4
				}
				written := strings.TrimSpace(line[m[0]:m[1]])
				mark := listMark.FindStringSubmatch(line[m[1]:])
				if mark == nil {
					if len(numbers) >= 3 && !onlyARange {
						problems = append(problems, listProblem{name, n, fmt.Sprintf("%q lists lessons by hand, which goes stale when a lesson comes: say \"each lesson's\" (or what they share), or mark the list with the set it means, <!-- lessons: SET --> right after it (SET one of %s)", written, lessonSetNames())})
					}
					continue
				}
				keep, ok := lessonSets[mark[1]]
				if !ok {
					problems = append(problems, listProblem{name, n, fmt.Sprintf("%q is marked <!-- lessons: %s -->, which is no set of lessons; want one of %s", written, mark[1], lessonSetNames())})
					continue
				}
				var want []int
				for _, l := range lessons {
					if keep(l) {
						if k, err := strconv.Atoi(l.Number); err == nil {
							want = append(want, k)
						}
					}
				}
				slices.Sort(numbers)
				numbers = slices.Compact(numbers)
				if !slices.Equal(numbers, want) {
					problems = append(problems, listProblem{name, n, fmt.Sprintf("%q lists lessons %v, but the lessons of the set %s are %v (their lesson.yaml files say so): write that list", written, numbers, mark[1], want)})
				}
			}
		}
	}
	return problems
}

// tableRow is a row of a lesson-path page's lesson table: | N | [title](lessons/NN-x.md) | ...
var tableRow = regexp.MustCompile(`^\| *(\d+) *\| *\[[^\]]*\]\(([^)]+)\)`)

// checkLessonTable returns the problems of the lesson table of the page name:
// a row per lesson, in lesson order, linking the lesson's page.
func checkLessonTable(name string, text []byte, lessons []*lesson) []listProblem {
	type row struct {
		number, link string
		line         int
	}
	var rows []row
	for i, line := range strings.Split(string(text), "\n") {
		if m := tableRow.FindStringSubmatch(line); m != nil {
			rows = append(rows, row{m[1], m[2], i + 1})
		}
	}
	var problems []listProblem
	for i, l := range lessons {
		want := strings.TrimPrefix(l.Doc, "docs/")
		j := slices.IndexFunc(rows, func(r row) bool { return r.number == l.Number })
		switch {
		case j < 0:
			problems = append(problems, listProblem{name, 1, fmt.Sprintf("the lesson table has no row for lesson %s (%s/%s/%s): add | %s | [its title](%s) | ...", l.Number, l.Tier, l.Suite, kittest.LessonFile, l.Number, want)})
		case rows[j].link != want:
			problems = append(problems, listProblem{name, rows[j].line, fmt.Sprintf("lesson %s's row links %s; its lesson.yaml says its page is %s", l.Number, rows[j].link, l.Doc)})
		case j != i:
			problems = append(problems, listProblem{name, rows[j].line, fmt.Sprintf("lesson %s's row is row %d of the table; put the rows in lesson order", l.Number, j+1)})
		}
	}
	for _, r := range rows {
		if !slices.ContainsFunc(lessons, func(l *lesson) bool { return l.Number == r.number }) {
			problems = append(problems, listProblem{name, r.line, fmt.Sprintf("the lesson table has a row for lesson %s, which no lesson.yaml is: remove it", r.number)})
		}
	}
	return problems
}

// verifyLists checks the kit's lists of lessons against the lesson files (see
// above) and prints each problem; it returns 1 when there is one. It reads the
// texts git knows, committed or new: Markdown pages and the scripts', Makefiles'
// and Go files' comments alike (tests and their testdata left out: their
// made-up lists are input).
func verifyLists(root string, w io.Writer) (int, error) {
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return 0, err
	}
	var problems []listProblem
	for _, page := range lessonPathPages {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return 0, err
		}
		problems = append(problems, checkLessonTable(page, text, lessons)...)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--",
		"*.md", "*.sh", "*.go", "*.yaml", "Makefile", "*/Makefile", "go.work", ":!*_test.go", ":!*/testdata/*").Output()
	if err != nil {
		return 0, fmt.Errorf("git ls-files: %w", err)
	}
	files := 0
	for _, name := range strings.Fields(string(out)) {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			return 0, err
		}
		files++
		problems = append(problems, checkWrittenLists(name, text, lessons)...)
	}
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "check -verify-lists: %d list(s) of lessons that the lesson files (*/test/*/%s) do not bear out\n", len(problems), kittest.LessonFile)
		return 1, nil
	}
	fmt.Fprintf(w, ">> lists of lessons: the lesson tables of %s have one row per lesson file (%d), and every list of lessons in %d files is marked and holds\n", strings.Join(lessonPathPages, " and "), len(lessons), files)
	return 0, nil
}

// readingPages prints what hack/check-reading-paths.sh checks of the lessons'
// pages, as their lesson files say (kittest.LessonReading), one tab-separated
// line each: "tables DOC SECTION" for each section ("*": every table) and
// "mentions DOC KIND" for a page whose text is checked.
func readingPages(root string, w io.Writer) (int, error) {
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return 0, err
	}
	for _, l := range lessons {
		if l.Reading == nil {
			continue
		}
		for _, s := range l.Reading.Sections {
			fmt.Fprintf(w, "tables\t%s\t%s\n", l.Doc, s)
		}
		if l.Reading.Mentions != "" {
			fmt.Fprintf(w, "mentions\t%s\t%s\n", l.Doc, l.Reading.Mentions)
		}
	}
	return 0, nil
}
