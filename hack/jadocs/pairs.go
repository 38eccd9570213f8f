package main

// pair is one English page and its Japanese twin, both relative to the
// repository root, with a slash between folders.
type pair struct {
	english, japanese string
}

// pairs is the table of every English page that has a Japanese twin: the one
// place that names them (docs/ja/README.md lists the same for translators).
// Under docs/ja/ the twins mirror docs/, except docs/README.md (the lesson
// path), whose twin is docs/ja/lesson-path.md because docs/ja/README.md is the
// repository README's.
var pairs = []pair{
	{"README.md", "docs/ja/README.md"},
	{"docs/README.md", "docs/ja/lesson-path.md"},
	{"docs/lessons/00-reading-kubernetes.md", "docs/ja/lessons/00-reading-kubernetes.md"},
	{"docs/lessons/01-workqueue.md", "docs/ja/lessons/01-workqueue.md"},
	{"docs/lessons/02-sample-controller.md", "docs/ja/lessons/02-sample-controller.md"},
	{"docs/lessons/03-kubebuilder.md", "docs/ja/lessons/03-kubebuilder.md"},
	{"docs/lessons/04-changing-kubernetes.md", "docs/ja/lessons/04-changing-kubernetes.md"},
	{"docs/lessons/05-cloud-controller-manager.md", "docs/ja/lessons/05-cloud-controller-manager.md"},
	{"docs/lessons/06-kube-apiserver.md", "docs/ja/lessons/06-kube-apiserver.md"},
	{"docs/lessons/07-csi-driver.md", "docs/ja/lessons/07-csi-driver.md"},
	{"docs/lessons/08-kube-scheduler.md", "docs/ja/lessons/08-kube-scheduler.md"},
	{"docs/performance.md", "docs/ja/performance.md"},
	{"docs/reliability.md", "docs/ja/reliability.md"},
	{"docs/reading-kubernetes.md", "docs/ja/reading-kubernetes.md"},
	{"docs/solutions/README.md", "docs/ja/solutions/README.md"},
	{"docs/new-controller.md", "docs/ja/new-controller.md"},
}

// twinOf returns the Japanese twin of the English page at path (relative to
// the repository root) and whether it has one.
func twinOf(path string, ps []pair) (string, bool) {
	for _, p := range ps {
		if p.english == path {
			return p.japanese, true
		}
	}
	return "", false
}
