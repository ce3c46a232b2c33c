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
	if len(pathz) < 2 || bytes.IndexByte(pathz, 0) != len(pathz)-1 {
		return false // no path, or a NUL inside: no such file
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
	// Both meta pages in one read when the pages are of the usual 4 KiB.
	var buf [usualPageSize + stampMetaBytes]byte
	n, err := syscall.Pread(fd, buf[:min(int64(len(buf)), st.size)], 0)
	if err != nil || n < stampMetaBytes {
		return false
	}
	copy(st.meta0[:], buf[:])
	ps := metaPageSize(st.meta0[:])
	if ps == 0 || 2*ps > st.size {
		return false
	}
	if ps == usualPageSize && n == len(buf) {
		copy(st.meta1[:], buf[usualPageSize:])
		return true
	}
	if n, err := syscall.Pread(fd, st.meta1[:], ps); err != nil || n != len(st.meta1) {
		return false
	}
	return true
}

// usualPageSize is bbolt's page size on the usual hosts (the memory page).
const usualPageSize = 4096

// atFDCWD is AT_FDCWD: openat's directory argument for a path relative to
// the working directory.
const atFDCWD int = -0x64
