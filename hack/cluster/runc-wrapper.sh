#!/usr/bin/env bash
# runc-wrapper.sh is an OCI runtime for machines whose capability bounding set
# lacks some capabilities (the kit's development machines lack CAP_SYS_RESOURCE).
# There a privileged container, which asks for every capability, fails with
# "runc create failed: unable to apply caps: operation not permitted".
#
# The wrapper takes runc's own arguments. Before a create or run it removes, from
# the bundle's config.json, every capability this machine cannot grant; before an
# exec, from the process file. Then it execs runc with the arguments unchanged.
# Nothing else changes: a container that asks only for capabilities the machine
# has gets exactly what it asked for.
#
# docker-engine.sh installs it as /usr/local/sbin/kit-runc and registers it with
# dockerd (--add-runtime kit-runc=... --default-runtime kit-runc), and the kit's
# kind node image runs its containerd's containers through the same file, since
# a node container has the same bounding set as the machine.
#
# Needs jq. RUNC names the real runc; by default the first of /usr/sbin/runc
# (Debian's, the host's) and /usr/local/sbin/runc (the kind node's).
# `runc-wrapper.sh --kit-missing-capabilities` prints, one per line, the
# capabilities it would remove here (none: nothing), and runs no runc.
set -euo pipefail

runc=${RUNC:-/usr/sbin/runc}
[[ -n ${RUNC:-} || -x $runc ]] || runc=/usr/local/sbin/runc

# The capability names by number, as the kernel's uapi capability.h numbers them.
caps=(CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_FSETID CAP_KILL
	CAP_SETGID CAP_SETUID CAP_SETPCAP CAP_LINUX_IMMUTABLE CAP_NET_BIND_SERVICE
	CAP_NET_BROADCAST CAP_NET_ADMIN CAP_NET_RAW CAP_IPC_LOCK CAP_IPC_OWNER CAP_SYS_MODULE
	CAP_SYS_RAWIO CAP_SYS_CHROOT CAP_SYS_PTRACE CAP_SYS_PACCT CAP_SYS_ADMIN CAP_SYS_BOOT
	CAP_SYS_NICE CAP_SYS_RESOURCE CAP_SYS_TIME CAP_SYS_TTY_CONFIG CAP_MKNOD CAP_LEASE
	CAP_AUDIT_WRITE CAP_AUDIT_CONTROL CAP_SETFCAP CAP_MAC_OVERRIDE CAP_MAC_ADMIN CAP_SYSLOG
	CAP_WAKE_ALARM CAP_BLOCK_SUSPEND CAP_AUDIT_READ CAP_PERFMON CAP_BPF CAP_CHECKPOINT_RESTORE)

# missing prints, as a JSON array, the names of the capabilities this process's
# bounding set lacks among those above.
missing() {
	local hex bnd i out=()
	hex=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
	bnd=$((16#$hex))
	for i in "${!caps[@]}"; do
		if ((((bnd >> i) & 1) == 0)); then
			out+=("\"${caps[$i]}\"")
		fi
	done
	local IFS=,
	printf '[%s]' "${out[*]}"
}

# strip FILE JQPATH removes the missing capabilities from every list under
# JQPATH (the process object) of the JSON file FILE, in place.
strip() {
	local file=$1 path=$2 drop tmp
	drop=$(missing)
	[[ $drop == "[]" ]] && return 0
	tmp="$file.kit-runc.$$"
	jq --argjson drop "$drop" \
		"if $path.capabilities then $path.capabilities |= with_entries(.value |= ((. // []) - \$drop)) else . end" \
		"$file" >"$tmp"
	# Keep the file's mode: runc reads it as it was written.
	chmod --reference="$file" "$tmp"
	mv "$tmp" "$file"
}

if [[ ${1:-} == --kit-missing-capabilities ]]; then
	jq -r '.[]' <<<"$(missing)"
	exit 0
fi

# Find the command (the first argument that is not a global option) and the
# bundle or process file among its options.
command="" bundle="" process=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	a=${args[$i]}
	if [[ -z $command ]]; then
		case $a in
		--root | --log | --log-format | --criu | --rootless) i=$((i + 1)) ;;
		-*) ;;
		*) command=$a ;;
		esac
		continue
	fi
	case $a in
	--bundle | -b) bundle=${args[$((i + 1))]} ;;
	--bundle=*) bundle=${a#--bundle=} ;;
	--process | -p) process=${args[$((i + 1))]} ;;
	--process=*) process=${a#--process=} ;;
	esac
done

case $command in
create | run)
	strip "${bundle:-.}/config.json" .process
	;;
exec)
	[[ -n $process ]] && strip "$process" ""
	;;
esac
exec "$runc" "$@"
