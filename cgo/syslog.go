package main

// The system log, for a module run without a log file.
//
// A PKCS#11 module must not print (stdout may be an RPC pipe), so without
// MODEXP_TOKEN_LOG the reasons behind a bare CKR_FUNCTION_FAILED used to be
// lost. Now warnings and errors go to the system log (the /dev/log socket:
// journald or a syslog daemon reads it), as SoftHSMv2 does, each with what
// to do. A log file, when configured, still takes everything instead.
//
// The writer never blocks a PKCS#11 call for long and never fails one: a
// missing /dev/log (containers) drops the lines, a full socket buffer waits
// at most syslogTimeout, and a dead socket is redialled at most every
// syslogRedial. The same line repeated within syslogRepeat is sent once.

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

const (
	syslogTag     = "modexp-pkcs11"
	syslogTimeout = 50 * time.Millisecond
	syslogRedial  = 10 * time.Second
	syslogRepeat  = 10 * time.Second
	// syslogHint ends every line: where to look next.
	syslogHint = "(run 'modexp-token info' with the same environment to see the configuration and token files in use; set MODEXP_TOKEN_LOG=FILE for a full log)"
)

// syslogPath is the system log socket (tests point it elsewhere).
var syslogPath = "/dev/log"

// syslogWriter sends each Write (one slog record) as one datagram.
type syslogWriter struct {
	mu       sync.Mutex
	conn     net.Conn
	failedAt time.Time
	last     []byte
	lastAt   time.Time
}

var sysLog = &syslogWriter{}

// newSyslogHandler returns a handler sending warnings and errors to the
// system log.
func newSyslogHandler() slog.Handler {
	return slog.NewTextHandler(sysLog, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{} // syslog stamps its own time
			}
			return a
		},
	})
}

// Write sends one record. It always reports success: the system log is
// best effort.
func (w *syslogWriter) Write(p []byte) (int, error) {
	n := len(p)
	line := bytes.TrimRight(p, "\n")
	sev := 4 // warning
	if bytes.HasPrefix(line, []byte("level=ERROR")) {
		sev = 3
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if bytes.Equal(line, w.last) && now.Sub(w.lastAt) < syslogRepeat {
		return n, nil
	}
	w.last, w.lastAt = append(w.last[:0], line...), now
	if w.conn == nil {
		if !w.failedAt.IsZero() && now.Sub(w.failedAt) < syslogRedial {
			return n, nil
		}
		c, err := net.DialTimeout("unixgram", syslogPath, syslogTimeout)
		if err != nil {
			w.failedAt = now
			return n, nil
		}
		w.conn, w.failedAt = c, time.Time{}
	}
	// RFC 3164 as /dev/log readers take it; facility user (1).
	msg := fmt.Sprintf("<%d>%s %s[%d]: %s %s", 1*8+sev, now.Format(time.Stamp), syslogTag, os.Getpid(), line, syslogHint)
	_ = w.conn.SetWriteDeadline(now.Add(syslogTimeout))
	if _, err := w.conn.Write([]byte(msg)); err != nil {
		_ = w.conn.Close()
		w.conn, w.failedAt = nil, now
	}
	return n, nil
}

// reset forgets the connection and the repeat filter (C_Finalize, tests).
func (w *syslogWriter) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil {
		_ = w.conn.Close()
	}
	w.conn, w.failedAt, w.last, w.lastAt = nil, time.Time{}, nil, time.Time{}
}
