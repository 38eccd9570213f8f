// Module delve pins the debugger lesson 4's second part runs components under
// (dlv, github.com/go-delve/delve). A module of its own, outside go.work like the
// other build modules, at the kit's one version of each dependency it shares (make
// verify's test/versions checks it). Build it with hack/build-bins.sh dlv (built on
// first use).
module github.com/controller-kit/controller-kit/hack/delve

go 1.26.0

tool github.com/go-delve/delve/cmd/dlv

require (
	github.com/cilium/ebpf v0.22.0 // indirect
	github.com/cosiner/argv v0.1.0 // indirect
	github.com/cpuguy83/go-md2man/v2 v2.0.6 // indirect
	github.com/derekparker/trie/v3 v3.2.0 // indirect
	github.com/go-delve/delve v1.27.2 // indirect
	github.com/go-delve/liner v1.2.3-0.20231231155935-4726ab1d7f62 // indirect
	github.com/google/go-dap v0.12.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	go.starlark.net v0.0.0-20231101134539-556fd59b42f6 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/arch v0.28.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20241106142447-58a1122356f5 // indirect
)
