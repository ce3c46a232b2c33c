package device_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modexp-token/modexp-token/engine/backend/device"
)

const nobody = 65534

// TestRelayHelper is not a test: run by startRelay as another user, it
// listens on MODEXP_RELAY_SOCKET, says "ready", accepts one connection,
// and prints how many bytes its first read got (0: the client closed it
// without sending).
func TestRelayHelper(t *testing.T) {
	path := os.Getenv("MODEXP_RELAY_SOCKET")
	if path == "" {
		t.Skip("helper process only")
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	// No clock decides: a client that refuses the listener closes the
	// connection unread (EOF, 0 bytes), one that talks sends at once.
	// The deadlines are hang guards.
	l.(*net.UnixListener).SetDeadline(time.Now().Add(2 * time.Minute))
	n := 0
	if c, err := l.Accept(); err == nil {
		c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		buf := make([]byte, 4096)
		for n == 0 {
			k, err := c.Read(buf)
			n += k
			if err != nil {
				break
			}
		}
	}
	fmt.Println("received", n)
	os.Exit(0)
}

// relay is a listener run by another uid.
type relay struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

// startRelay runs TestRelayHelper as uid nobody, listening at dir/sock
// (dir is given to nobody for the bind, then back to root, mode 0700, so
// the path itself passes the client's checks).
func startRelay(t *testing.T) (*relay, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a listener as another uid")
	}
	base, err := os.MkdirTemp("", "relay") // t.TempDir's parent is closed to others
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	must(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, "relay.test")
	self, err := os.ReadFile(os.Args[0])
	must(t, err)
	must(t, os.WriteFile(bin, self, 0o755))
	dir := filepath.Join(base, "run")
	must(t, os.Mkdir(dir, 0o700))
	must(t, os.Chown(dir, nobody, nobody))
	sock := filepath.Join(dir, "mxp.sock")
	cmd := exec.Command(bin, "-test.run=^TestRelayHelper$")
	cmd.Env = append(os.Environ(), "MODEXP_RELAY_SOCKET="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := &relay{cmd: cmd, out: bufio.NewReader(stdout)}
	line, err := r.out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("relay: %q, %v", line, err)
	}
	must(t, os.Chown(dir, 0, 0))
	return r, sock
}

// received waits for the relay's count of bytes received.
func (r *relay) received(t *testing.T) int {
	t.Helper()
	line, err := r.out.ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 || f[0] != "received" {
		t.Fatalf("relay: %q, %v", line, err)
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func dialRelay(ctx context.Context, cfg device.Config) error {
	e, err := device.New(ctx, cfg)
	if err == nil {
		e.Close()
	}
	return err
}

// TestRelayOfAnotherUserSeesNothing is issue 17's second attack: a
// listener run by another local user at the configured path received the
// key's primes. The client now reads the listener's uid (SO_PEERCRED)
// before it sends anything: the relay gets not one byte. The control:
// told to expect that uid (peeruid), the client does talk to it.
func TestRelayOfAnotherUserSeesNothing(t *testing.T) {
	r, sock := startRelay(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard: the refusal is at once
	defer cancel()
	err := dialRelay(ctx, device.Config{Network: "unix", Address: sock})
	if !errors.Is(err, device.ErrPeerRefused) {
		t.Fatalf("dial to another user's listener: %v, want ErrPeerRefused", err)
	}
	if n := r.received(t); n != 0 {
		t.Fatalf("the relay received %d bytes", n)
	}

	// The control talks, gets no answer and waits for one: it is ended
	// once the relay has counted what it received.
	r, sock = startRelay(t)
	uid := nobody
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	dialed := make(chan error, 1)
	go func() { dialed <- dialRelay(ctx, device.Config{Network: "unix", Address: sock, PeerUID: &uid}) }()
	n := r.received(t)
	cancel()
	if err := <-dialed; errors.Is(err, device.ErrPeerRefused) {
		t.Fatalf("peeruid=%d refused: %v", nobody, err)
	}
	if n == 0 {
		t.Fatal("control: the expected listener received nothing")
	}
}

// TestSocketPathChecks: a socket whose directory another user owns, or
// that group or others may write without the sticky bit, is refused
// before any dial; the spec option parses.
func TestSocketPathChecks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another uid")
	}
	d := startDaemon(t, nil)
	cfg := d.config()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	must(t, dialRelay(ctx, cfg)) // a sound setup: the daemon's 0700 directory
	dir := filepath.Dir(d.path)
	for _, tc := range []struct {
		name  string
		setup func()
	}{
		{"directory owned by another user", func() { must(t, os.Chown(dir, nobody, nobody)) }},
		{"directory world-writable", func() { must(t, os.Chmod(dir, 0o777)) }},
		{"directory group-writable", func() { must(t, os.Chmod(dir, 0o770)) }},
		{"parent world-writable", func() { must(t, os.Chmod(filepath.Dir(dir), 0o777)) }},
		{"sticky directory, socket of another user", func() {
			must(t, os.Chmod(dir, 0o777|os.ModeSticky))
			must(t, os.Lchown(d.path, nobody, nobody))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			t.Cleanup(func() {
				os.Chown(dir, 0, 0)
				os.Chmod(dir, 0o700)
				os.Chmod(filepath.Dir(dir), 0o700)
				os.Lchown(d.path, 0, 0)
			})
			if err := dialRelay(ctx, cfg); !errors.Is(err, device.ErrPeerRefused) {
				t.Fatalf("%v, want ErrPeerRefused", err)
			}
		})
	}
	// A sticky shared directory with our own socket is fine.
	must(t, os.Chmod(dir, 0o777|os.ModeSticky))
	must(t, dialRelay(ctx, cfg))
	must(t, os.Chmod(dir, 0o700))

	c, err := device.ParseSpec("unix:/run/x.sock,peeruid=123")
	if err != nil || c.PeerUID == nil || *c.PeerUID != 123 {
		t.Fatalf("peeruid: %+v, %v", c.PeerUID, err)
	}
	if _, err := device.ParseSpec("unix:/run/x.sock,peeruid=-1"); err == nil {
		t.Fatal("peeruid=-1 accepted")
	}
}
