package fork

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/test/internal/e2e"
	"github.com/modexp-token/modexp-token/token/ck"
)

// The requests of csrc/forkrpc.c (its enum; the values must agree).
const (
	opInitialize = iota + 1
	opFinalize
	opGetInfo
	opSlots
	opMechList
	opMechInfo
	opOpen
	opClose
	opLogin
	opCreate
	opFind
	opGetAttr
	opDestroy
	opGenKey
	opGenPair
	opInit
	opOneShot
	opUpdate
	opFinal
	opWrap
	opUnwrap
	opDerive
	opEncap
	opDecap
	opMsg
	opMsgFinal
)

// The host actions and the acknowledgement flag of csrc/forkrpc.c.
const (
	opFork   = 100
	opThread = 101
	opWait   = 102
	opExit   = 103
	opAck    = 1 << 32
)

// The operation kinds of opInit, opOneShot, opUpdate, opFinal and opMsg.
const (
	kEncrypt = iota
	kDecrypt
	kDigest
	kSign
	kVerify
	kMsgEncrypt
	kMsgDecrypt
	kMsgSign
	kMsgVerify
)

// The interfaces of opGetInfo and opMechList.
const (
	if32 = iota
	if30
	if240
)

// rpcHost is a running forkrpc: the process, the socket its processes and
// threads connect to, and the connection of its first thread.
type rpcHost struct {
	t    *testing.T
	cmd  *exec.Cmd
	ln   *net.UnixListener
	main *rpc
}

// rpc is one connection to a thread of a forkrpc process.
type rpc struct {
	t    *testing.T
	name string
	c    net.Conn
	pid  int // the process's pid when it is a forked child, else 0
}

// startRPC builds and starts forkrpc on the module in the token's
// environment (plus extraEnv) and accepts its first connection.
func startRPC(t *testing.T, tk *token, extraEnv ...string) *rpcHost {
	t.Helper()
	e2e.NeedTool(t, "gcc")
	dir := t.TempDir()
	bin := filepath.Join(dir, "forkrpc")
	src := filepath.Join(repoRoot, "test", "fork", "csrc", "forkrpc.c")
	if out, err := exec.Command("gcc", "-Wall", "-Wextra", "-Werror", "-O1", "-I", filepath.Join(repoRoot, "cgo"),
		"-o", bin, src, "-ldl", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	h := &rpcHost{t: t, ln: ln}
	h.cmd = exec.Command(bin, libPath, sock)
	h.cmd.Env = append(append([]string{}, tk.env...), extraEnv...)
	// The module writes nothing, in any process; forkrpc only its fatal
	// errors. Both streams are kept, and anything in them fails the test.
	var output strings.Builder
	h.cmd.Stdout, h.cmd.Stderr = &output, &output
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The whole group: the host and any child the test left.
		_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
		_ = h.cmd.Wait()
		_ = ln.Close()
		if s := output.String(); s != "" {
			t.Errorf("forkrpc or the module wrote to stdout or stderr: %q", s)
		}
	})
	h.main = h.accept("parent", 0)
	return h
}

// accept takes the next connection, from a new child or thread.
func (h *rpcHost) accept(name string, pid int) *rpc {
	h.t.Helper()
	_ = h.ln.SetDeadline(time.Now().Add(60 * time.Second))
	c, err := h.ln.Accept()
	if err != nil {
		h.t.Fatalf("%s: no connection from forkrpc: %v", name, err)
	}
	h.t.Cleanup(func() { _ = c.Close() })
	return &rpc{t: h.t, name: name, c: c, pid: pid}
}

// fork forks the process behind r; the child connects as name.
func (h *rpcHost) fork(r *rpc, name string) *rpc {
	h.t.Helper()
	rv, out := r.call(opFork)
	if rv != 0 || len(out) != 1 {
		h.t.Fatalf("%s: fork: %s", r.name, ck.Name("CKR_", rv))
	}
	return h.accept(name, int(u64of(out[0])))
}

// thread starts a thread in the process behind r, which connects as name.
func (h *rpcHost) thread(r *rpc, name string) *rpc {
	h.t.Helper()
	if rv, _ := r.call(opThread); rv != 0 {
		h.t.Fatalf("%s: thread: %s", r.name, ck.Name("CKR_", rv))
	}
	return h.accept(name, r.pid)
}

// mech is a CK_MECHANISM: its parameter's bytes and, at offsets in them,
// the pointer fields' buffers (the host writes their addresses there).
type mech struct {
	typ   uint64
	param []byte
	fix   []fixup
}

// fixup is a pointer field of a parameter and the buffer it points to.
type fixup struct {
	off int
	buf []byte
}

// attr is one CK_ATTRIBUTE of a template.
type attr struct {
	typ uint64
	val []byte
}

// tmpl is a template.
type tmpl []attr

// pb builds a parameter structure in the C layout of amd64 (CK_ULONG and
// pointers of 8 bytes).
type pb struct {
	b   []byte
	fix []fixup
}

// ul appends a CK_ULONG.
func (p *pb) ul(v uint64) *pb { p.b = binary.LittleEndian.AppendUint64(p.b, v); return p }

// ptr appends a pointer to a copy of buf (NULL when buf is nil).
func (p *pb) ptr(buf []byte) *pb {
	if buf != nil {
		p.fix = append(p.fix, fixup{len(p.b), buf})
	}
	return p.ul(0)
}

// raw appends bytes in place (an array member).
func (p *pb) raw(b []byte) *pb { p.b = append(p.b, b...); return p }

// bbool appends a CK_BBOOL and pads to the next CK_ULONG when pad is set.
func (p *pb) bbool(v bool, pad bool) *pb {
	p.b = append(p.b, boolv(v)...)
	for pad && len(p.b)%8 != 0 {
		p.b = append(p.b, 0)
	}
	return p
}

// mech is the CK_MECHANISM of type t with this parameter.
func (p *pb) mech(t uint64) mech { return mech{t, p.b, p.fix} }

// plain is a mechanism without a parameter.
func plain(t uint64) mech { return mech{typ: t} }

// ulv is a CK_ULONG attribute value.
func ulv(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// ulsv is a CK_ULONG array attribute value.
func ulsv(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// boolv is a CK_BBOOL attribute value.
func boolv(v bool) []byte {
	if v {
		return []byte{1}
	}
	return []byte{0}
}

// u64of reads a CK_ULONG output.
func u64of(b []byte) uint64 {
	if len(b) != 8 {
		return ^uint64(0)
	}
	return binary.LittleEndian.Uint64(b)
}

// encode lays out a request's arguments.
func encode(b []byte, args ...any) []byte {
	bs := func(v []byte) { b = binary.LittleEndian.AppendUint64(b, uint64(len(v))); b = append(b, v...) }
	for _, a := range args {
		switch a := a.(type) {
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, a)
		case int:
			b = binary.LittleEndian.AppendUint64(b, uint64(a))
		case []byte:
			bs(a)
		case string:
			bs([]byte(a))
		case mech:
			b = binary.LittleEndian.AppendUint64(b, a.typ)
			bs(a.param)
			b = binary.LittleEndian.AppendUint64(b, uint64(len(a.fix)))
			for _, f := range a.fix {
				b = binary.LittleEndian.AppendUint64(b, uint64(f.off))
				bs(f.buf)
			}
		case tmpl:
			b = binary.LittleEndian.AppendUint64(b, uint64(len(a)))
			for _, at := range a {
				b = binary.LittleEndian.AppendUint64(b, at.typ)
				bs(at.val)
			}
		default:
			panic(fmt.Sprintf("encode: %T", a))
		}
	}
	return b
}

// errNoReply is a request that got its acknowledgement but no reply.
var errNoReply = errors.New("no reply")

// send writes one request.
func (r *rpc) send(op uint64, args ...any) error {
	body := encode(binary.LittleEndian.AppendUint64(nil, op), args...)
	frame := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	_ = r.c.SetDeadline(time.Now().Add(120 * time.Second))
	_, err := r.c.Write(append(frame, body...))
	return err
}

// recv reads one frame: a reply, or the empty acknowledgement (nil, nil).
func (r *rpc) recv() (uint64, [][]byte, bool, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r.c, hdr[:]); err != nil {
		return 0, nil, false, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n == 0 {
		return 0, nil, true, nil
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.c, body); err != nil {
		return 0, nil, false, err
	}
	if n < 16 {
		return 0, nil, false, fmt.Errorf("short reply of %d bytes", n)
	}
	rv, cnt := binary.LittleEndian.Uint64(body), binary.LittleEndian.Uint64(body[8:])
	body = body[16:]
	var outs [][]byte
	for range cnt {
		if len(body) < 8 {
			return 0, nil, false, errors.New("truncated reply")
		}
		l := binary.LittleEndian.Uint64(body)
		if uint64(len(body)-8) < l {
			return 0, nil, false, errors.New("truncated reply")
		}
		outs = append(outs, body[8:8+l])
		body = body[8+l:]
	}
	return rv, outs, false, nil
}

// tryCall makes one request and returns its CK_RV and outputs, or the
// transport's error.
func (r *rpc) tryCall(op uint64, args ...any) (uint64, [][]byte, error) {
	if err := r.send(op, args...); err != nil {
		return 0, nil, fmt.Errorf("%s: send: %w", r.name, err)
	}
	rv, out, ack, err := r.recv()
	if err == nil && ack {
		err = fmt.Errorf("%s: an acknowledgement nobody asked for", r.name)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("%s: recv: %w", r.name, err)
	}
	return rv, out, nil
}

// call is tryCall that fails the test on a transport error.
func (r *rpc) call(op uint64, args ...any) (uint64, [][]byte) {
	r.t.Helper()
	rv, out, err := r.tryCall(op, args...)
	if err != nil {
		r.t.Fatal(err)
	}
	return rv, out
}
