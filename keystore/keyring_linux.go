package keystore

import (
	"encoding/binary"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel keyring side of the PIN cache (pincache.go): "user" keys in
// the user keyring (@u, shared by this uid's processes), possessor-only,
// with a kernel timeout. Every failure (no keyctl, seccomp, quota, an
// expired or revoked key) is a miss: the caller falls back to Argon2id.

// keyPossessorAll is every permission for a possessor and none for the
// user, group or others (KEY_POS_VIEW|READ|WRITE|SEARCH|LINK|SETATTR).
const keyPossessorAll = 0x3f000000

const keyringMaxPayload = 256

// keyringRead returns the payload of the user key desc and how long it has
// left to live.
func keyringRead(desc string) (payload []byte, remaining time.Duration, ok bool) {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", desc, 0)
	if err != nil {
		return nil, 0, false
	}
	buf := make([]byte, keyringMaxPayload)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil || n < 8 || n > len(buf) {
		return nil, 0, false
	}
	expires := time.Unix(0, int64(binary.BigEndian.Uint64(buf)))
	remaining = time.Until(expires)
	if remaining <= 0 {
		return nil, 0, false
	}
	return buf[8:n], remaining, true
}

// keyringWrite stores payload as the user key desc for life (replacing
// one of the same name), possessor-only.
func keyringWrite(desc string, payload []byte, life time.Duration) {
	b := binary.BigEndian.AppendUint64(nil, uint64(time.Now().Add(life).UnixNano()))
	b = append(b, payload...)
	if len(b) > keyringMaxPayload {
		return
	}
	id, err := unix.AddKey("user", desc, b, unix.KEY_SPEC_USER_KEYRING)
	if err != nil {
		return
	}
	secs := max(1, int((life+time.Second-1)/time.Second))
	if err := unix.KeyctlSetperm(id, keyPossessorAll); err != nil {
		_, _ = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
		return
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_SET_TIMEOUT, id, secs, 0, 0); err != nil {
		_, _ = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
	}
}

// keyringForget invalidates the user key desc, if there is one.
func keyringForget(desc string) {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", desc, 0)
	if err != nil {
		return
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0); errors.Is(err, unix.EOPNOTSUPP) {
		_, _ = unix.KeyctlInt(unix.KEYCTL_REVOKE, id, 0, 0, 0)
	}
}

// KeyringAvailable reports whether this process may use the kernel
// keyring (keyctl is present and not refused): where it is not, the PIN
// cache stays in the process.
func KeyringAvailable() bool {
	_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, false)
	return err == nil
}
