# Sourced by the benchmark scripts: proc_cpu PID prints the CPU time (ns)
# the process has used so far, the sum of its threads' schedstat run times.
proc_cpu() {
	local sum=0 run rest f
	for f in /proc/"$1"/task/*/schedstat; do
		read -r run rest <"$f" 2>/dev/null || continue
		sum=$((sum + run))
	done
	echo "$sum"
}
