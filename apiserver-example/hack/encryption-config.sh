#!/usr/bin/env bash
# encryption-config.sh is make encryption-config (lesson 6, encryption at rest): it
# writes, for the cluster KIT_CLUSTER names, a key and the two EncryptionConfiguration
# files kube-apiserver's --encryption-provider-config takes, under
# _output/encryption/CLUSTER/, and prints their paths:
#
#   key           32 random bytes, base64: the aescbc key, key1 (mode 600)
#   encrypt.yaml  Secrets written with aescbc (key1); a value stored before, plain,
#                 still read (identity, second)
#   decrypt.yaml  Secrets written plain (identity first); a value stored with key1
#                 still read (aescbc, second): the way back, before the flag goes
#
# A key that exists is kept, and both files written from it again: a new key would
# leave every Secret stored with the old one unreadable, and the API server's lists
# of Secrets with it. The lesson's make kube-restart FLAGS=... turns each file on.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"
KIT_ME="make encryption-config"

dir="$KIT_OUT/encryption/$KIT_CLUSTER"
mkdir -p "$dir"
umask 077
if [ -s "$dir/key" ]; then
	echo "kept the key of $dir/key (aescbc, key1)"
else
	head -c 32 /dev/urandom | base64 >"$dir/key.new"
	mv "$dir/key.new" "$dir/key"
	echo "wrote a new key into $dir/key (aescbc, key1: 32 random bytes)"
fi
key=$(cat "$dir/key")

# provider NAME prints the entry of provider NAME (aescbc with the key, or identity)
# in an EncryptionConfiguration's list of providers.
provider() {
	case $1 in
	aescbc) printf '  - aescbc:\n      keys:\n      - name: key1\n        secret: %s\n' "$key" ;;
	identity) printf '  - identity: {}\n' ;;
	esac
}
# config FIRST SECOND prints an EncryptionConfiguration whose one resource, Secrets,
# is written with provider FIRST and read with FIRST or SECOND.
config() {
	printf 'apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources:\n  - secrets\n  providers:\n'
	provider "$1"
	provider "$2"
}
config aescbc identity >"$dir/encrypt.yaml"
config identity aescbc >"$dir/decrypt.yaml"
echo "encrypt: $dir/encrypt.yaml"
echo "decrypt: $dir/decrypt.yaml"
