#!/usr/bin/env bash
# apt-install.sh PACKAGE... — installs the Debian packages among PACKAGE that
# are missing (one apt-get update first). When another apt-get, dpkg or
# unattended-upgrades holds apt's locks, it waits for them (up to
# APT_LOCK_WAIT seconds, default 600) instead of failing: apt-get is given
# DPkg::Lock::Timeout, and a run that still reports a held lock is retried.
# Used by make deps and make deps-demo.
set -uo pipefail
wait_s=${APT_LOCK_WAIT:-600}
sudo=""
[[ $(id -u) == 0 ]] || sudo=sudo

missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
((${#missing[@]})) || exit 0
echo "installing: ${missing[*]} (waiting up to ${wait_s} s for apt's lock if another apt-get holds it)"

# apt_get ARGS...: apt-get, retried while its failure is a held lock.
apt_get() {
	local end=$((SECONDS + wait_s)) out rc said=""
	while :; do
		out=$($sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$wait_s" "$@" 2>&1)
		rc=$?
		if ((rc == 0)); then
			printf '%s\n' "$out" | tail -n 3
			return 0
		fi
		if ! grep -q -e 'Could not get lock' -e 'Unable to lock' -e 'Unable to acquire the dpkg frontend lock' <<<"$out" || ((SECONDS >= end)); then
			printf '%s\n' "$out" >&2
			return "$rc"
		fi
		if [[ -z $said ]]; then
			echo "apt-get $1: $(grep -m1 -e 'Could not get lock' -e 'Unable to' <<<"$out"); waiting"
			said=1
		fi
		sleep 3
	done
}

apt_get update || exit
apt_get install -y --no-install-recommends "${missing[@]}"
