#!/usr/bin/env bash
# csi-sanity.sh is make csi-sanity's body (lesson 7): the CSI project's own
# conformance tests, csi-sanity (csi-test v5.6.0's cmd/csi-sanity, built from
# the hack/csi module on first use), against the toy driver csi-driver-example,
# which it starts on a socket and a state folder of its own (a temporary
# folder, removed at the end), then a summary: how many tests passed, failed
# and were skipped, and why each skipped one was.
#
# Two kinds of test are skipped:
#   - by csi-sanity itself, each with its reason: the calls the driver does not
#     offer (its ControllerGetCapabilities and NodeGetCapabilities answers do
#     not list snapshots, expansion, cloning, GetCapacity, health, ...);
#   - by this script, only where this machine cannot make bind mounts (not
#     root, or a bind mount of a temporary folder is refused): the three Node
#     tests that stage and publish a volume, which the driver does by bind
#     mounts (--ginkgo.skip=MOUNTING below), with one line saying why. As root
#     they run, on the temporary folders csi-sanity makes (--csi.mountdir,
#     --csi.stagingdir), and every mount is gone at the end.
# csi-sanity's default volume size, 10Gi, is more than the driver's
# --max-volume-size (1Gi), and its ALREADY_EXISTS test asks for twice the size:
# the tests ask for 100Mi (and 200Mi).
#
# Environment: RECONCILER (the driver's --reconciler: reference, the default,
# or stub, which fails the Controller and Node tests, or yours); ARGS (more csi-sanity
# flags, such as --ginkgo.focus=CreateVolume or --ginkgo.v).
# Output: the driver's log and csi-sanity's JUnit report in
# _output/csi-sanity/ (driver.log, junit.xml). Exit status: csi-sanity's
# (0: every test that ran passed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"
KIT_ME="make csi-sanity"

module="$KIT_ROOT/csi-driver-example"
driver="$module/bin/csi-driver-example"
out="$KIT_OUT/csi-sanity"
# The specs that make mounts, skipped where mounts cannot be made: a regular
# expression that ginkgo matches against "CSI Driver Test Suite" (the suite's
# name) and the spec's Describe and It texts, all joined by spaces.
MOUNTING=' Node Service (NodeUnpublishVolume should remove target path|should work|should be idempotent)$'

kit_log "building the driver (csi-driver-example)"
make --no-print-directory -C "$module" build >/dev/null
# A misspelt RECONCILER stops here, in the driver's own words.
[ -z "${RECONCILER:-}" ] || "$driver" --reconciler="$RECONCILER" --list-reconcilers >/dev/null
"$KIT_ROOT/hack/build-bins.sh" csi-sanity

mkdir -p "$out"
rm -f "$out/driver.log" "$out/junit.xml"
# The socket lives in a short temporary path: a unix socket's may be 107 bytes
# at most, and a clone's _output/ can be deeper than that.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/csi-sanity.XXXXXX")
driver_pid=
cleanup() {
	if [ -n "$driver_pid" ]; then
		kill -TERM "$driver_pid" 2>/dev/null || true
		wait "$driver_pid" 2>/dev/null || true
	fi
	# Whatever a failed test left mounted under the folder is unmounted,
	# deepest first (and again, for a mount hidden under another), so that
	# rm removes folders and never reaches through a mount.
	local m
	for _ in 1 2 3; do
		for m in $(awk -v tmp="$tmp/" 'index($5, tmp) == 1 { print $5 }' /proc/self/mountinfo 2>/dev/null | sort -r); do
			umount "$m" 2>/dev/null || true
		done
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# Can this process make bind mounts? Root, and one of a temporary folder on
# itself works (a container without CAP_SYS_ADMIN refuses it, say).
no_mounts=
if [ "$(id -u)" -ne 0 ]; then
	no_mounts="this process is not root (bind mounts need it; sudo make csi-sanity runs them)"
elif ! mkdir -p "$tmp/probe" || ! err=$(mount --bind "$tmp/probe" "$tmp/probe" 2>&1); then
	no_mounts="a bind mount of a temporary folder is refused here: ${err%%$'\n'*}"
else
	umount "$tmp/probe"
fi

socket="$tmp/csi.sock"
kit_log "starting the driver${RECONCILER:+ (--reconciler=$RECONCILER)} on $socket (log: ${out#"$KIT_ROOT"/}/driver.log)"
"$driver" --endpoint="unix://$socket" --state-dir="$tmp/state" --node-id=csi-sanity \
	${RECONCILER:+--reconciler="$RECONCILER"} -v=2 >"$out/driver.log" 2>&1 &
driver_pid=$!
for _ in $(seq 300); do
	[ -S "$socket" ] && break
	if ! kill -0 "$driver_pid" 2>/dev/null; then
		wait "$driver_pid" || true
		driver_pid=
		cat "$out/driver.log" >&2
		kit_die "the driver exited before it served $socket (its log is above)"
	fi
	sleep 0.1
done
[ -S "$socket" ] || kit_die "the driver did not serve $socket within 30 s (log: $out/driver.log)"

skip=()
if [ -n "$no_mounts" ]; then
	kit_log "running csi-sanity without the Node tests that mount, since $no_mounts"
	skip=(--ginkgo.skip="$MOUNTING")
else
	kit_log "running csi-sanity (the Node tests mount on $tmp)"
fi
color=
[ -t 1 ] || color=--ginkgo.no-color
rc=0
# shellcheck disable=SC2086 # ARGS are flags: split on purpose
"$KIT_BIN/csi-sanity" --csi.endpoint="$socket" \
	--csi.mountdir="$tmp/mount" --csi.stagingdir="$tmp/staging" \
	--csi.testvolumesize=$((100 << 20)) \
	"${skip[@]}" --ginkgo.junit-report="$out/junit.xml" $color ${ARGS:-} || rc=$?

# The summary, read from the JUnit report: each skipped spec's name and
# csi-sanity's reason ("skipped - GetCapacity not supported"), or none when
# --ginkgo.skip skipped it; the reasons grouped, this script's listed in full.
[ -f "$out/junit.xml" ] || kit_die "csi-sanity wrote no report ($out/junit.xml); its output is above"
awk -v no_mounts="$no_mounts" '
	/<testcase / {
		match($0, /name="[^"]*"/); name = substr($0, RSTART + 6, RLENGTH - 7)
		sub(/^\[It\] /, "", name)
		match($0, /status="[^"]*"/); status = substr($0, RSTART + 8, RLENGTH - 9)
		count[status]++
	}
	/<skipped / && status == "skipped" {
		reason = ""
		if (match($0, /message="skipped - [^"]*"/)) reason = substr($0, RSTART + 19, RLENGTH - 20)
		if (reason == "") { ours[++nours] = name } else { why[reason]++ }
	}
	END {
		printf ">> csi-sanity: %d passed, %d failed, %d skipped", count["passed"], count["failed"] + count["panicked"], count["skipped"]
		if (count["pending"]) printf " (and %d pending: disabled in csi-test itself)", count["pending"]
		print ""
		if (nours) {
			printf ">> skipped by make csi-sanity, the Node tests that mount, since %s: %d\n", no_mounts, nours
			for (i = 1; i <= nours; i++) print "     " ours[i]
		}
		n = 0
		for (r in why) n += why[r]
		if (n) {
			printf ">> skipped by csi-sanity itself, for its reason (mostly: a call the driver'"'"'s capabilities do not list): %d\n", n
			for (r in why) printf "     %s (%d)\n", r, why[r] | "sort"
			close("sort")
		}
	}' "$out/junit.xml"
if [ "$rc" -ne 0 ]; then
	echo ">> failed: the failures are listed above (Summarizing ...); the driver's log is ${out#"$KIT_ROOT"/}/driver.log"
fi
exit "$rc"
