#!/usr/bin/env bash
# report.sh DIR sums up what record.sh wrote into DIR during a build (see record.sh):
# the compile actions, the distinct (package, variant) pairs they compiled, their
# ratio, and where the repeats come from, by cause and by module. A variant is a
# package's test build, a debug build (-N -l) or a CGO_ENABLED=0 build, each apart.
# A repeat's cause, for the second and later compiles of one pair:
#   version  its folder differs: another version of its module
#   trimpath one compile had -trimpath and another not
#   deps     same folder and flags, another action ID: a dependency (or a flag)
#            differs below it
#   twice    the same action ID compiled again: two go commands at once, or a cache
#            entry trimmed in between
set -euo pipefail
dir=${1:?usage: report.sh DIR}
find "$dir" -type f -exec cat {} + | awk -F'\t' '
{
	key = $1 "\t" $5 "\t" ($6 == "0" ? "nocgo" : "")
	n++
	if (!(key in first)) { first[key] = NR; dirs[key] = $7; trims[key] = $4; ids[key] = " " $3 " "; distinct++; next }
	cause = "twice"
	if (index(" " dirs[key] " ", " " $7 " ") == 0) cause = "version"
	else if (index(trims[key], $4) == 0) cause = "trimpath"
	else if (index(ids[key], " " $3 " ") == 0) cause = "deps"
	dirs[key] = dirs[key] " " $7; trims[key] = trims[key] $4; ids[key] = ids[key] $3 " "
	causes[cause]++
	mod = $7
	if (match(mod, /\/pkg\/mod\/[^@]+/)) mod = substr(mod, RSTART + 9, RLENGTH - 9)
	else if (match(mod, /\/src\//)) mod = "std"
	else mod = "(the kit)"
	bymod[mod]++
}
END {
	printf "compile actions: %d\ndistinct (package, variant) pairs: %d\nratio: %.2f\n", n, distinct, n / distinct
	printf "repeats by cause:"; for (c in causes) printf " %s %d", c, causes[c]; printf "\n"
	printf "repeats by module (top 15):\n"
	cmd = "sort -rn | head -15"
	for (m in bymod) printf "  %6d %s\n", bymod[m], m | cmd
	close(cmd)
}'
