#!/usr/bin/env bash
# record.sh is a go -toolexec wrapper that counts compile actions (docs/performance.md,
# "Compile actions in a cold make test"): for each run of the compiler (not the
# go command's "-V=full" question) it writes one line into a file of its own under
# $COMPILE_ACTIONS_DIR, then runs the tool as asked. It changes no build cache key:
# the go command hashes a tool's -V=full answer, which this passes through as is.
#
#   COMPILE_ACTIONS_DIR=/tmp/actions GOFLAGS=-toolexec=$PWD/record.sh make test
#   test/bench/compileactions/report.sh /tmp/actions
#
# The line, tab-separated: the package as the go command names it (TOOLEXEC_IMPORTPATH:
# "p [p.test]" for a test variant), the compiler's -p, its action ID (-buildid's
# first half), whether -trimpath rewrote a module folder ("trim" or "-"), whether
# optimisation was off ("debug" or "-"), CGO_ENABLED, and the package's folder.
case "$1" in
*/compile)
	if [ "${2:-}" != "-V=full" ] && [ -n "${COMPILE_ACTIONS_DIR:-}" ]; then
		p="" id="" trim="-" debug="-" dir=""
		prev=""
		for a in "$@"; do
			case "$prev" in
			-p) p=$a ;;
			-buildid) id=${a%%/*} ;;
			-trimpath) case "$a" in *"=>"*@*) trim=trim ;; esac ;;
			esac
			case "$a" in
			-N) debug=debug ;;
			*.go) [ -z "$dir" ] && case "$a" in /*) dir=${a%/*} ;; esac ;;
			esac
			prev=$a
		done
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${TOOLEXEC_IMPORTPATH:-$p}" "$p" "$id" "$trim" "$debug" \
			"${CGO_ENABLED:-}" "$dir" >"$COMPILE_ACTIONS_DIR/$$.$RANDOM$RANDOM"
	fi
	;;
esac
exec "$@"
