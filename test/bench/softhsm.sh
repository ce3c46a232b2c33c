# Sourced by the benchmark scripts: sets SOFTHSM to SoftHSMv2's PKCS#11
# module (Debian softhsm2) unless the caller set it; empty when none is found.
if [[ -z "${SOFTHSM:-}" ]]; then
	for c in /usr/lib/softhsm/libsofthsm2.so /usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so \
		/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so /usr/local/lib/softhsm/libsofthsm2.so; do
		if [[ -f $c ]]; then SOFTHSM=$c; break; fi
	done
fi
