// Module jadocs is the Japanese-docs checker of `make verify-docs`: every page under
// docs/ has its twin under docs/ja/ with the same headings, anchors, code blocks and
// links, and README.md and its twin within their size and table cells. Standard library only.
module github.com/controller-kit/controller-kit/hack/jadocs

go 1.26.0
