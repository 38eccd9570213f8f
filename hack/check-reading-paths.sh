#!/usr/bin/env bash
# check-reading-paths.sh checks docs/reading-kubernetes.md and the lesson pages that quote
# upstream code by path against the Go module cache, so none can point at upstream code
# that moved or was renamed. Which pages, which of their sections and whether their text
# is checked, each lesson's lesson.yaml says (its reading field, kittest.LessonReading),
# read through `check -reading-pages`: a new lesson's tables need no edit here.
#   - every path in a table (reading-kubernetes.md: the concept tables; a lesson: the rows
#     that start with a backquoted path in the sections its reading.sections names) exists
#     at the pinned version;
#   - every name in the "search for" column is declared in that file (a func, method, type,
#     var, const, struct field, interface method, shell function, or YAML key such as an
#     OWNERS file's labels), not just mentioned;
#   - every path a lesson with reading.mentions mentions outside code blocks exists: with
#     "all", written as in its tables or as $K/... (the kubernetes module),
#     $M/NAME@VERSION/... (a k8s.io module) or a path in one of the kit's tiers; with
#     "upstream", the $K/... and staging/src/k8s.io/... ones;
#   - every link to reading-kubernetes.md#ANCHOR from the kit's Markdown files has its anchor.
# Paths map to modules as the page explains: cmd/, pkg/, plugin/ and hack/ (and the
# repository's OWNERS_ALIASES) to k8s.io/kubernetes;
# staging/src/k8s.io/NAME/ to the published module k8s.io/NAME (the same files);
# sigs.k8s.io/controller-runtime/ to controller-runtime; and a path that starts with the
# path of a module lesson 7 reads (the CSI sidecars and their libraries, csi_pinned_by below,
# and the CSI spec) to that module. Versions come from the kit's pins
# (hack/controlplane/go.mod, kubebuilder-guestbook/go.mod, hack/csi/go.mod for the sidecars,
# csi-driver-example/go.mod for the spec), read with `go list -m`; the page must name the
# same ones.
# A module missing from the cache is fetched with `go mod download`.
#
# Usage: hack/check-reading-paths.sh [-v]   (-v also prints every path and name found)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

verbose=false
if [ "${1:-}" = -v ]; then verbose=true; fi

# READING_DOC checks another copy of the reading map.
doc=${READING_DOC:-docs/reading-kubernetes.md}
modcache=$(go env GOMODCACHE)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# pinned_version MODULE DIR prints the version of MODULE that the module in DIR
# requires: its own pin (GOWORK=off), not the one the workspace would pick.
pinned_version() {
	(cd "$2" && GOWORK=off go list -m -f '{{.Version}}' "$1")
}
kube_version=$(kit_kube_version || true)
cr_version=$(pinned_version sigs.k8s.io/controller-runtime kubebuilder-guestbook || true)
if [ -z "$kube_version" ] || [ -z "$cr_version" ]; then
	echo "check-reading-paths: cannot read the pinned versions of k8s.io/kubernetes (hack/controlplane/go.mod) and sigs.k8s.io/controller-runtime (kubebuilder-guestbook/go.mod)" >&2
	exit 1
fi
# Staging modules are published as v0.MINOR.PATCH for Kubernetes v1.MINOR.PATCH.
staging_version="v0.${kube_version#v1.}"

# The modules lesson 7 reads beside Kubernetes, each with the module that pins it: the
# sidecars and their libraries (hack/csi, the build module of the sidecars) and the CSI spec
# (csi-driver-example, the driver that implements it).
declare -A csi_pinned_by=(
	[github.com/kubernetes-csi/external-provisioner/v6]=hack/csi
	[github.com/kubernetes-csi/external-attacher/v4]=hack/csi
	[github.com/kubernetes-csi/csi-lib-utils]=hack/csi
	[sigs.k8s.io/sig-storage-lib-external-provisioner/v13]=hack/csi
	[github.com/container-storage-interface/spec]=csi-driver-example
)
declare -A csi_version=()
for m in "${!csi_pinned_by[@]}"; do
	if ! csi_version[$m]=$(pinned_version "$m" "${csi_pinned_by[$m]}" 2>/dev/null) || [ -z "${csi_version[$m]}" ]; then
		echo "check-reading-paths: cannot read the version of $m that ${csi_pinned_by[$m]}/go.mod pins" >&2
		exit 1
	fi
done

failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

for v in "$kube_version" "$cr_version"; do
	grep -qF "$v" "$doc" || fail "$doc does not mention $v, the version the kit pins; update its text (and its paths) to that version"
done
for m in "${!csi_version[@]}"; do
	grep -qF "${csi_version[$m]}" "$doc" || fail "$doc does not mention ${csi_version[$m]}, the version of $m that ${csi_pinned_by[$m]}/go.mod pins; update its text (and its paths) to that version"
done

# module_dir MODULE VERSION prints the module's folder in the cache, downloading it if needed.
module_dir() {
	local dir="$modcache/$1@$2"
	if [ ! -d "$dir" ]; then
		echo ">> go mod download $1@$2" >&2
		dir=$(cd "$scratch" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$1@$2" |
			awk -F'"' '$2 == "Dir" {print $4}')
	fi
	echo "$dir"
}

# resolve PATH prints where PATH (as written in the page) is in the module cache.
resolve() {
	local p=$1 rest name
	case "$p" in
	staging/src/k8s.io/*)
		rest=${p#staging/src/k8s.io/}
		name=${rest%%/*}
		echo "$(module_dir "k8s.io/$name" "$staging_version")/${rest#*/}"
		;;
	sigs.k8s.io/controller-runtime/*)
		echo "$(module_dir sigs.k8s.io/controller-runtime "$cr_version")/${p#sigs.k8s.io/controller-runtime/}"
		;;
	cmd/* | pkg/* | plugin/* | hack/* | OWNERS_ALIASES)
		echo "$(module_dir k8s.io/kubernetes "$kube_version")/$p"
		;;
	*)
		local m
		for m in "${!csi_version[@]}"; do
			if [[ "$p" == "$m/"* ]]; then
				echo "$(module_dir "$m" "${csi_version[$m]}")/${p#"$m"/}"
				return 0
			fi
		done
		return 1
		;;
	esac
}

# declares FILE NAME succeeds when FILE declares NAME rather than only mentioning it.
declares() {
	local n=$2
	grep -qE "^func (\([^)]*\) )?${n}([^[:alnum:]_]|$)|^(type|var|const) ${n}([^[:alnum:]_]|$)|^[[:space:]]+${n}([[:space:]]|\(|\[)|^(function[[:space:]]+)?${n}[[:space:]]*\(\)|^[[:space:]]*${n}:" "$1"
}

paths=0
names=0
# check_tables DOC SECTION checks the path rows of DOC's tables: those under the
# heading "## SECTION" only, or every one when SECTION is empty.
check_tables() {
	local doc=$1 section=$2 in_section=false rows=0 line path_cell names_cell path file name
	[ -n "$section" ] || in_section=true
	while IFS= read -r line; do
		if [ -n "$section" ]; then
			case "$line" in
			"## $section"*) in_section=true; continue ;;
			"## "*) in_section=false; continue ;;
			esac
		fi
		# A path row: | `path` | `name`, `name` | sentence |
		[ "$in_section" = true ] && [[ "$line" == '| `'* ]] || continue
		IFS='|' read -r _ path_cell names_cell _ <<<"$line"
		path=$(grep -o '`[^`]*`' <<<"$path_cell" | tr -d '`')
		if [ "$(wc -l <<<"$path")" -ne 1 ]; then
			fail "$doc: one path per row, in backquotes: $line"
			continue
		fi
		if ! file=$(resolve "$path"); then
			fail "$doc: $path: not under cmd/, pkg/, plugin/, hack/, staging/src/k8s.io/, sigs.k8s.io/controller-runtime/ or one of lesson 7's modules (${!csi_version[*]})"
			continue
		fi
		paths=$((paths + 1))
		rows=$((rows + 1))
		if [ ! -f "$file" ]; then
			fail "$doc: $path: no such file ($file)"
			continue
		fi
		$verbose && echo "ok   $path"
		for name in $(grep -o '`[^`]*`' <<<"$names_cell" | tr -d '`'); do
			names=$((names + 1))
			if declares "$file" "$name"; then
				$verbose && echo "ok     $name"
			else
				fail "$doc: $path: declares no $name"
			fi
		done
	done <"$doc"
	[ "$rows" -gt 0 ] || fail "found no path rows in $doc (${section:+under '## $section', }rows starting with '| \`')"
}
check_tables "$doc" Concepts
# The lessons' pages, as their lesson files name them: "tables DOC SECTION" and
# "mentions DOC KIND" lines (check -reading-pages).
pages_out=$(go run ./test/check -reading-pages) || { echo "check-reading-paths: check -reading-pages failed (its error is above)" >&2; exit 1; }
pages=() upstream_mentions=() all_mentions=()
while IFS=$'\t' read -r what page arg; do
	case "$what" in
	tables)
		[ "$arg" = '*' ] && arg=""
		check_tables "$page" "$arg"
		;;
	mentions)
		if [ "$arg" = all ]; then all_mentions+=("$page"); else upstream_mentions+=("$page"); fi
		;;
	esac
	[[ " ${pages[*]} " == *" $page "* ]] || pages+=("$page")
done <<<"$pages_out"

# Paths a page mentions in its text (code blocks left out: their backquotes are
# fences, not quotes): each must exist, in the module cache or in the kit (a path
# in one of its tiers, lib.sh's kit_tiers). A path with a placeholder (NAME, ...)
# stands for many and is not checked. A page whose reading.mentions is upstream
# has only its $K/... and staging/src/k8s.io/... paths checked (its other paths
# may be its own module's, such as lesson 7's driver's).
tiers=$(kit_tiers | paste -sd'|' -)
mentions=0
# mentioned_paths DOC REGEX prints the backquoted paths of DOC's text that match REGEX.
mentioned_paths() {
	awk '/^```/ {code = !code; next} !code' "$1" | grep -o '`[^`]*`' | tr -d '`' |
		grep -E "$2" | grep -vE 'NAME|\.\.\.|^staging/src/k8s\.io/$' | sort -u | sed "s|^|$1 |"
}
while IFS=' ' read -r from p; do
	[ -n "$p" ] || continue
	mentions=$((mentions + 1))
	case "$p" in
	'$K/'*) file="$(module_dir k8s.io/kubernetes "$kube_version")/${p#\$K/}" ;;
	'$M/'*)
		rest=${p#\$M/}
		module=${rest%%/*}
		if [ "${module#*@}" != "$staging_version" ]; then
			fail "$from mentions $p: the kit pins k8s.io/${module%@*} at $staging_version"
			continue
		fi
		file="$(module_dir "k8s.io/${module%@*}" "$staging_version")/${rest#*/}"
		;;
	*)
		if [[ "$p" =~ ^($tiers)/ ]]; then file="$KIT_ROOT/$p"; else file=$(resolve "$p"); fi
		;;
	esac
	if [ -e "$file" ]; then
		$verbose && echo "ok   $p (in the text)"
	else
		fail "$from mentions $p, which is not there ($file)"
	fi
done < <(for page in "${all_mentions[@]}"; do mentioned_paths "$page" '^(\$K/|\$M/|cmd/|pkg/|staging/src/k8s\.io/|('"$tiers"')/)[^ ]*$'; done
	for page in "${upstream_mentions[@]}"; do mentioned_paths "$page" '^(\$K/|staging/src/k8s\.io/)[^ ]*$'; done)

# Links from the kit's Markdown into the page must land on an anchor it defines
# (00-reading-kubernetes.md#..., lesson 0's own sections, is another file).
links=0
while IFS=: read -r from anchor; do
	links=$((links + 1))
	grep -qF "<a id=\"$anchor\"></a>" "$doc" || fail "$from links to reading-kubernetes.md#$anchor, which $doc does not define"
done < <(git ls-files --cached --others --exclude-standard -- '*.md' |
	xargs grep -o '[A-Za-z0-9_./-]*reading-kubernetes\.md#[A-Za-z0-9_-]*' |
	grep -v -- '-reading-kubernetes\.md#' | sed 's/:.*reading-kubernetes\.md#/:/')

if [ "$failures" -gt 0 ]; then
	echo "check-reading-paths: $failures problem(s) in $doc and ${pages[*]}; fix the path or name (search the module under $modcache)" >&2
	exit 1
fi
echo ">> reading-kubernetes.md and ${pages[*]}: $paths paths and $names names in their tables, and $mentions paths in their text, found in k8s.io/kubernetes@$kube_version, k8s.io/*@$staging_version, sigs.k8s.io/controller-runtime@$cr_version and lesson 7's ${#csi_version[@]} CSI modules; $links links into it resolve"
