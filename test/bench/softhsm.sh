# Sourced by the benchmark scripts: sets SOFTHSM to SoftHSMv2's PKCS#11
# module (Debian softhsm2) unless the caller set it; empty when none is found.
if [[ -z "${SOFTHSM:-}" ]]; then
	for c in /usr/lib/softhsm/libsofthsm2.so /usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so \
		/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so /usr/local/lib/softhsm/libsofthsm2.so; do
		if [[ -f $c ]]; then SOFTHSM=$c; break; fi
	done
fi

# softhsm_config dir writes a throwaway SoftHSMv2 configuration,
# dir/softhsm2.conf with its tokens in dir/tokens, and exports it as
# SOFTHSM2_CONF.
softhsm_config() {
	mkdir -p "$1/tokens"
	cat >"$1/softhsm2.conf" <<EOF
directories.tokendir = $1/tokens
objectstore.backend = file
log.level = ERROR
slots.removable = false
EOF
	export SOFTHSM2_CONF=$1/softhsm2.conf
}
