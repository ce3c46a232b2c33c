#!/usr/bin/env bash
# Module load time and mechanism-list length of two builds of the module
# (before and after a change), in alternating fresh processes (A B B A ...),
# each on its own throwaway token directory with the default configuration.
#
#   test/bench/loadtime.sh OLD.so NEW.so [RUNS]
#
# Prints per module the median and mean over RUNS (default 40) of dlopen
# and of C_GetFunctionList + C_Initialize (ms, wall), of the process CPU
# time to there (ms), the C_GetMechanismList lengths of the 2.40 and 3.2
# lists, and one two-call C_GetMechanismList (µs, wall and CPU), then NEW
# against OLD. The C client is test/bench/loadtime.c.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 2 ]] || { echo "usage: loadtime.sh OLD.so NEW.so [RUNS]" >&2; exit 2; }
old=$(readlink -f "$1")
new=$(readlink -f "$2")
runs=${3:-40}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/modexp-loadtime.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -Wall -Wextra -Werror -o "$tmp/loadtime" "$here/loadtime.c" -ldl
unset MODEXP_TOKEN_CONF MODEXP_TOKEN_LOG_LEVEL MODEXP_TOKEN_ENGINE MODEXP_TOKEN_LOG

one() { # which module
	local m=$1 so=$2
	mkdir -p "$tmp/$m/data" "$tmp/$m/home"
	XDG_DATA_HOME=$tmp/$m/data HOME=$tmp/$m/home "$tmp/loadtime" "$so" >>"$tmp/$m.tsv"
}
one old "$old" >/dev/null # a first load writes the token directory: not counted
one new "$new" >/dev/null
: >"$tmp/old.tsv"
: >"$tmp/new.tsv"
for ((i = 0; i < runs; i++)); do
	if ((i % 2 == 0)); then one old "$old"; one new "$new"; else one new "$new"; one old "$old"; fi
done

stats() { # file column -> "median mean"
	cut -f"$2" "$1" | sort -g | awk '{v[NR]=$1; s+=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%.2f %.2f", m, s/NR}'
}
echo "# $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'); $runs alternating runs each"
echo "# old: $old"
echo "# new: $new"
printf '%-5s %20s %24s %20s %9s %9s %22s %22s\n' module "dlopen ms" "GetFunctionList+Init ms" "load CPU ms" "mechs2.40" "mechs3.2" "GetMechanismList µs" "GetMechList CPU µs"
printf '%-5s %20s %24s %20s %9s %9s %22s %22s\n' "" "median / mean" "median / mean" "median / mean" "" "" "median / mean" "median / mean"
for m in old new; do
	row=()
	for c in 1 2 6 5 7; do
		read -r med mean <<<"$(stats "$tmp/$m.tsv" "$c")"
		row+=("$med / $mean")
	done
	printf '%-5s %20s %24s %20s %9s %9s %22s %22s\n' "$m" "${row[0]}" "${row[1]}" "${row[2]}" \
		"$(cut -f3 "$tmp/$m.tsv" | sort -u | tr '\n' ' ')" "$(cut -f4 "$tmp/$m.tsv" | sort -u | tr '\n' ' ')" "${row[3]}" "${row[4]}"
done
for c in 1 2 6 5 7; do
	read -r o _ <<<"$(stats "$tmp/old.tsv" "$c")"
	read -r n _ <<<"$(stats "$tmp/new.tsv" "$c")"
	name=$(case $c in 1) echo "dlopen (wall)" ;; 2) echo "GetFunctionList+Initialize (wall)" ;; 6) echo "load to C_Initialize (CPU)" ;; 5) echo "GetMechanismList (wall)" ;; 7) echo "GetMechanismList (CPU)" ;; esac)
	awk -v o="$o" -v n="$n" -v name="$name" 'BEGIN {printf "new/old %-34s %+.1f %% (medians)\n", name, 100*(n/o-1)}'
done
