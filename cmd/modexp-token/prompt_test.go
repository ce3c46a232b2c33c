package main

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestConfirm: on a terminal the question is asked and only y/yes goes on;
// without one, nothing goes on without --yes.
func TestConfirm(t *testing.T) {
	oldIn, oldTerm := stdin, isTerminal
	defer func() { stdin, isTerminal = oldIn, oldTerm }()
	for _, c := range []struct {
		answer string
		term   bool
		yes    bool
		ok     bool
	}{
		{"y\n", true, false, true}, {"yes\n", true, false, true}, {"Y\n", true, false, true},
		{"n\n", true, false, false}, {"\n", true, false, false}, {"", true, false, false},
		{"y\n", false, false, false}, {"", false, true, true},
	} {
		stdin = strings.NewReader(c.answer)
		isTerminal = func() bool { return c.term }
		var prompt bytes.Buffer
		err := (&safety{yes: c.yes}).confirm(&prompt, "Delete it?")
		if (err == nil) != c.ok {
			t.Errorf("answer %q, terminal %v, --yes %v: err %v", c.answer, c.term, c.yes, err)
		}
		var ee *exitError
		if err != nil && (!errors.As(err, &ee) || ee.code != exitDeclined) {
			t.Errorf("refusal %v does not exit with %d", err, exitDeclined)
		}
		if c.term && !c.yes && !strings.Contains(prompt.String(), "Delete it? [y/N]") {
			t.Errorf("question not asked: %q", prompt.String())
		}
	}
}

// openPTY returns both ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestProgress: a step longer than the tick shows a ticking line on a
// terminal and says when it is done; a shorter one, or any step on a
// non-terminal, shows nothing. The tick is made short for the slow step
// (the test waits for its line, not for a second) and an hour for the
// quick one (no pause of a loaded machine makes it slow).
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	stop := showProgress(&buf, "generating")
	stop()
	if buf.Len() != 0 {
		t.Errorf("progress on a buffer: %q", buf.String())
	}
	master, slave := openPTY(t)
	var mu sync.Mutex
	var all []byte
	ended := make(chan struct{})
	go func() { // until the slave side is closed (EIO)
		defer close(ended)
		out := make([]byte, 4096)
		for {
			n, err := master.Read(out)
			mu.Lock()
			all = append(all, out[:n]...)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shown := func() string {
		mu.Lock()
		defer mu.Unlock()
		return string(all)
	}
	defer func(old time.Duration) { progressTick = old }(progressTick)
	progressTick = 10 * time.Millisecond
	stop = showProgress(slave, "generating rsa:8192 key pair")
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(shown(), "generating rsa:8192 key pair… "); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no progress line after 2 minutes: %q", shown())
		}
	}
	stop()
	progressTick = time.Hour
	stop = showProgress(slave, "quick")
	stop()
	slave.Close()
	select {
	case <-ended:
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("no end of the terminal's output")
	}
	got := shown()
	if !regexp.MustCompile(`generating rsa:8192 key pair… \d+s`).MatchString(got) || !strings.Contains(got, "generating rsa:8192 key pair: done in") {
		t.Errorf("terminal shows %q", got)
	}
	if strings.Contains(got, "quick") {
		t.Errorf("a step under the tick showed progress: %q", got)
	}
}
