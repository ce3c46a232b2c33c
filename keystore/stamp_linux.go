package keystore

import (
	"bytes"
	"syscall"
	"unsafe"
)

// readStamp reads the stamp of the file at pathz (NUL-terminated) into st
// (stamp.go); false when it cannot (no file, a short file, not a bbolt
// file): Changes then takes the long way, which reports what is wrong.
func readStamp(pathz []byte, st *fileStamp) bool {
	if bytes.IndexByte(pathz, 0) != len(pathz)-1 {
		return false // a NUL inside the path: no such file
	}
	// openat without syscall.Open's copy of the path.
	dir := atFDCWD
	r, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dir), uintptr(unsafe.Pointer(&pathz[0])),
		uintptr(syscall.O_RDONLY|syscall.O_CLOEXEC), 0, 0, 0)
	if errno != 0 {
		return false
	}
	fd := int(r)
	defer syscall.Close(fd)
	var fi syscall.Stat_t
	if syscall.Fstat(fd, &fi) != nil {
		return false
	}
	st.dev, st.ino, st.size = uint64(fi.Dev), uint64(fi.Ino), int64(fi.Size)
	st.mtimeSec, st.mtimeNsec = int64(fi.Mtim.Sec), int64(fi.Mtim.Nsec)
	st.ctimeSec, st.ctimeNsec = int64(fi.Ctim.Sec), int64(fi.Ctim.Nsec)
	if n, err := syscall.Pread(fd, st.meta0[:], 0); err != nil || n != len(st.meta0) {
		return false
	}
	ps := metaPageSize(st.meta0[:])
	if ps == 0 || 2*ps > st.size {
		return false
	}
	if n, err := syscall.Pread(fd, st.meta1[:], ps); err != nil || n != len(st.meta1) {
		return false
	}
	return true
}

// atFDCWD is AT_FDCWD: openat's directory argument for a path relative to
// the working directory.
const atFDCWD int = -0x64
