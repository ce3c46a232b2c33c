package keystore

// A cheap "nothing changed" for Changes on a token file.
//
// A cache asks Changes before every search (C_FindObjectsInit), and behind
// a TLS server that is every handshake. The answer is almost always
// "nothing since": yet a full Changes opens the bbolt file, takes its
// shared lock, maps it, checks its size and identity, opens the sealer and
// reads the generation, about 50 µs of CPU. Every committed bbolt write
// transaction rewrites one of the two meta pages at the start of the file
// (with a new transaction ID and checksum), so when the file at the path
// is the same file (device, inode, size, times) with the same bytes in both
// meta pages as when a Changes last answered generation g, no write was
// committed since and Changes(key, g) would answer "nothing changed" again.
//
// The stamp is read before the transaction whose answer it is remembered
// with: a write committed between the two makes the next stamp differ, and
// that Changes takes the long way (conservative, never wrong). A write in
// flight while the stamp is read has not committed: its meta page is
// written last, after the data and an fsync. A meta page torn by a
// concurrent write differs from the remembered bytes too.
//
// The file is opened only for the few system calls of the read (open,
// fstat, one pread (two for pages other than 4 KiB), close: no lock, no
// map) and never kept open.

import (
	"encoding/binary"
	"sync"
)

// stampMetaBytes is how much of each meta page a stamp keeps: the page
// header (16 bytes) and bbolt's meta (64 bytes: magic, version, page
// size, flags, root, freelist, high water mark, transaction ID, checksum).
const stampMetaBytes = 80

// bboltMagic is the magic number of bbolt's meta pages.
const bboltMagic = 0xED0CDAED

// fileStamp identifies one committed state of a token file.
type fileStamp struct {
	dev, ino            uint64
	size                int64
	mtimeSec, mtimeNsec int64
	ctimeSec, ctimeNsec int64
	meta0, meta1        [stampMetaBytes]byte
}

// stampCache is what a Store remembers of the last Changes that answered.
type stampCache struct {
	mu    sync.Mutex
	pathz []byte // the path, NUL-terminated (made once)
	ok    bool
	stamp fileStamp
	gen   uint64
	key   *Key
	hits  uint64 // answers given from the stamp (tests)
}

// metaPageSize returns the page size a meta page's bytes name, or 0 when
// they are not a bbolt meta page.
func metaPageSize(meta []byte) int64 {
	if len(meta) < 28 || binary.NativeEndian.Uint32(meta[16:20]) != bboltMagic {
		return 0
	}
	ps := int64(binary.NativeEndian.Uint32(meta[24:28]))
	if ps < 512 || ps > 1<<20 || ps&(ps-1) != 0 {
		return 0
	}
	return ps
}

// read reads the stamp of the file at path into st (readStamp).
func (c *stampCache) read(path string, st *fileStamp) bool {
	c.mu.Lock()
	if c.pathz == nil {
		c.pathz = append([]byte(path), 0)
	}
	pathz := c.pathz
	c.mu.Unlock()
	return readStamp(pathz, st)
}

// unchanged reports whether the token file is still in the state of the
// last Changes answer at generation since, for key; st is the stamp just
// read (valid when ok).
func (c *stampCache) unchanged(st *fileStamp, ok bool, since uint64, key *Key) bool {
	if !ok || key.isWiped() {
		return false // a wiped key gets its error the long way
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.gen == since && c.key == key && c.stamp == *st {
		c.hits++
		return true
	}
	return false
}

// remember records that the file in state st (read before the
// transaction) answered generation gen for key.
func (c *stampCache) remember(st *fileStamp, ok bool, gen uint64, key *Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ok, c.gen, c.key = ok, gen, key
	if ok {
		c.stamp = *st
	}
}

// forget drops what is remembered (a failed Changes, Close).
func (c *stampCache) forget() {
	c.mu.Lock()
	c.ok, c.key = false, nil
	c.mu.Unlock()
}
