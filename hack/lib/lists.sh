# lib/lists.sh: the kit's lists, each read from the one place it is written, and a
# name checked against a list. Part of hack/lib.sh, which sources it; do not source
# it alone.
#   tiers    the lesson files, <tier>/test/<suite>/lesson.yaml (test/kittest's
#            ReadLessons reads the same files): a new tier is a new folder with
#            one that names its controller; the lessons' suites are those files'
#            folders
#   debug    the lesson files' debug entries (make debug's names and ports)
#   modules  go.work for the workspace's modules; every other go.mod of the kit is
#            a module kept out of it on purpose (hack/'s build modules, the bench)

# kit_tiers prints the kit's tiers, one a line, in lesson order: the top-level
# folders with a lesson file of their own, <tier>/test/<suite>/lesson.yaml, that
# names the controller the tier builds (main). A lesson that builds none keeps its
# file in test/<suite>/ (lesson 4) or in a room of its own that is no tier
# (apiserver-example/, lesson 6: a program the learner writes, no controller). A
# tier with two lesson files (workqueue-example: lessons 0 and 1) takes the place
# of the first. The root Makefile runs it each time it starts, so it starts no
# program: bash's indexed arrays list their indices in order.
kit_tiers() {
	local file number main tier by_lesson=() seen=" "
	for file in "$KIT_ROOT"/*/test/*/lesson.yaml; do
		[ -f "$file" ] || continue
		kit_lesson_field "$file" main main
		[ -n "$main" ] || continue
		kit_lesson_field "$file" lesson number
		file=${file#"$KIT_ROOT"/}
		# A lesson that is not a number goes last.
		[[ "$number" =~ ^[0-9]+$ ]] || number=999
		by_lesson[10#$number]+=" ${file%%/*}"
	done
	for tier in ${by_lesson[*]:-}; do
		[[ "$seen" == *" $tier "* ]] && continue
		seen+="$tier "
		echo "$tier"
	done
}

# kit_lesson_field FILE KEY [VAR] prints the value of a top-level KEY of a lesson
# file (lesson, main, binary, doc), its quotes taken off, or stores it in VAR.
kit_lesson_field() {
	local line value=""
	while IFS= read -r line; do
		case "$line" in
		"$2:"*)
			value=${line#"$2:"}
			value=${value#"${value%%[! ]*}"}
			value=${value%"${value##*[! ]}"}
			case "$value" in \'*\' | \"*\") value=${value:1:${#value}-2} ;; esac
			break
			;;
		esac
	done <"$1"
	if [ -n "${3:-}" ]; then printf -v "$3" '%s' "$value"; else echo "$value"; fi
}

# kit_tier_main TIER prints the tier's controller as its lesson file states it: its
# main package, as go build takes it from the tier's folder (., ./cmd), and the
# name of its binary (sample-controller, manager).
kit_tier_main() {
	local file main
	for file in "$KIT_ROOT/$1"/test/*/lesson.yaml; do
		[ -f "$file" ] || continue
		main=$(kit_lesson_field "$file" main)
		[ -n "$main" ] || continue
		case "$main" in . | ./*) ;; *) main="./$main" ;; esac
		echo "$main $(kit_lesson_field "$file" binary)"
		return 0
	done
	kit_error "$1 has no lesson file that names its controller (main and binary in $1/test/<suite>/lesson.yaml)"
	return 1
}

# kit_suites prints the folders of the lessons' check suites, one a line: where a
# lesson file lies, <tier>/test/<suite> (and test/<suite> for the lessons that
# change Kubernetes' own source), as ReadLessons finds them. Each is a module of
# the workspace whose tests run on a cluster, through make check and the lesson
# runners (lesson 4's debugger test also in hack/debug.sh smoke), not in make test-unit.
kit_suites() {
	local file
	for file in "$KIT_ROOT"/*/test/*/lesson.yaml "$KIT_ROOT"/test/*/lesson.yaml; do
		[ -f "$file" ] || continue
		file=${file#"$KIT_ROOT"/}
		echo "${file%/lesson.yaml}"
	done
}

# Every go command the kit runs compiles with -trimpath: bin/'s builds, go test,
# go vet and the suites' binaries alike. Go's build cache shares a compiled package
# only between builds with the same flags, and -trimpath is what lets lesson 4's
# copy of Kubernetes reuse the pinned module's compiled packages (its files are
# named by module path and version, not by folder), so the tests take it too
# rather than compile every package a second time (docs/performance.md, "Compile
# actions in a cold make test"). A GOFLAGS of your own is kept; the root Makefile
# exports the result. A debug build, which delve reads by folder, drops it again
# (kit_goflags_untrimmed).
case " ${GOFLAGS:-} " in
*" -trimpath "*) ;;
*) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath" ;;
esac

# kit_goflags_untrimmed prints GOFLAGS without -trimpath, for a debug build
# (-gcflags=all=-N -l), whose packages are compiled apart anyway and whose
# files delve must find where they are on disk.
kit_goflags_untrimmed() {
	local flag out=()
	for flag in ${GOFLAGS:-}; do
		[ "$flag" = -trimpath ] || out+=("$flag")
	done
	echo "${out[*]:-}"
}

# kit_debug_entries prints the names make debug takes, one a line, as the lesson
# files' debug entries declare them (kittest.LessonDebug, the one list of them):
# its fields separated by the character $'\x1f', in this order: name, port,
# start, the lesson's tier (the top-level folder its file lies in), args,
# packages, breakpoint (a field the entry leaves out is empty). It reads only the
# layout the lesson files use (a top-level "debug:", then "- name:" and
# "  key: value" lines); the grader's stricter reading (kittest.ReadLessons)
# rejects a file that strays from it, and check's tests hold the two together.
kit_debug_entries() {
	local file line section="" key value tier name="" port start args packages breakpoint
	local sep=$'\x1f'
	for file in "$KIT_ROOT"/*/test/*/lesson.yaml "$KIT_ROOT"/test/*/lesson.yaml; do
		[ -f "$file" ] || continue
		tier=${file#"$KIT_ROOT"/}
		tier=${tier%%/*}
		section=""
		while IFS= read -r line || [ -n "$line" ]; do
			case "$line" in
			'#'* | '') continue ;;
			[a-zA-Z]*:*) section=${line%%:*} ;;
			esac
			[ "$section" = debug ] || continue
			case "$line" in
			'- '*) line="  ${line#- }"
				[ -z "$name" ] || printf '%s\n' "$name$sep$port$sep$start$sep$tier$sep$args$sep$packages$sep$breakpoint"
				name="" port="" start="" args="" packages="" breakpoint="" ;;
			'  '[a-z]*:*) ;;
			*) continue ;;
			esac
			key=${line#  }
			key=${key%%:*}
			value=${line#*:}
			value=${value#"${value%%[! ]*}"}
			case "$value" in
			\'*\') value=${value:1:${#value}-2} value=${value//\'\'/\'} ;;
			\"*\") value=${value:1:${#value}-2} ;;
			esac
			case "$key" in
			name | port | start | args | packages | breakpoint) printf -v "$key" '%s' "$value" ;;
			esac
		done <"$file"
		[ -z "$name" ] || printf '%s\n' "$name$sep$port$sep$start$sep$tier$sep$args$sep$packages$sep$breakpoint"
		name=""
	done
}

# kit_work_modules prints the workspace's modules, the folders go.work uses, one a
# line, from the repository root (sample-controller, sample-controller/test/e2e).
# make vet and make test-unit take their lists from here.
kit_work_modules() {
	(cd "$KIT_ROOT" && go work edit -json) | sed -n 's|^[[:space:]]*"DiskPath": "\(\./\)\{0,1\}\([^"]*\)",\{0,1\}$|\2|p'
}

# kit_other_modules prints the kit's Go modules that go.work leaves out on purpose,
# so that their dependency graphs never move the versions the controllers build
# with (each is built, vetted and tested with GOWORK=off in its folder): hack/'s
# build modules and the bench. They are every go.mod git knows (committed, or new
# and not ignored) in a folder go.work does not use.
kit_other_modules() {
	local work file dir
	work=$(kit_work_modules)
	(cd "$KIT_ROOT" && git ls-files --cached --others --exclude-standard -- 'go.mod' '*/go.mod') | sort -u |
		while read -r file; do
			dir=$(dirname "$file")
			case "$dir" in */testdata | */testdata/*) continue ;; esac
			grep -qxF -- "$dir" <<<"$work" || echo "$dir"
		done
}

# kit_each_other_module WHAT COMMAND... runs COMMAND (such as go vet ./...) in the
# folder of each module kit_other_modules prints, with GOWORK=off, after a progress
# line ">> WHAT: MODULE (outside go.work)". A module with no Go package of its own
# (a build module whose go.mod only pins what build-bins.sh builds) gets a line
# saying so instead. It stops at the first COMMAND that fails, with its status.
kit_each_other_module() {
	local what=$1 dir
	shift
	for dir in $(kit_other_modules); do
		if [ -z "$(cd "$KIT_ROOT/$dir" && GOWORK=off go list ./... 2>/dev/null)" ]; then
			echo ">> $what: $dir skipped: no Go package of its own (its go.mod pins what hack/build-bins.sh builds)"
			continue
		fi
		echo ">> $what: $dir (outside go.work: GOWORK=off)"
		(cd "$KIT_ROOT/$dir" && GOWORK=off "$@") || return
	done
}

# kit_check_names LIST NAME... fails on the first NAME that is not a word of LIST,
# naming both the way a learner gives them: WHAT=NAME is not one of: LIST.
kit_check_names() {
	local list=$1 name
	shift
	for name in "$@"; do
		case " $list " in *" $name "*) ;; *) kit_die "WHAT=$name is not one of: $list" ;; esac
	done
}
