package keystore

import "syscall"

// readStamp reads the stamp of the file at path (stamp.go); false when it
// cannot (no file, a short file, not a bbolt file): Changes then takes the
// long way, which reports what is wrong.
func readStamp(path string, st *fileStamp) bool {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
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
