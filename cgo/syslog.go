package main

// The system log, for a module run without a log file.
//
// A PKCS#11 module must not print (stdout may be an RPC pipe), so without
// MODEXP_TOKEN_LOG the reasons behind a bare CKR_FUNCTION_FAILED used to be
// lost. Now warnings and errors go to the system log (the /dev/log socket:
// journald or a syslog daemon reads it), as SoftHSMv2 does, each with what
// to do. A log file, when configured, still takes everything instead.
//
// Where there is no system log (no /dev/log, as in containers and CI
// runners, or a socket nobody reads), the lines go to the per-user file
// config.StateLogFile ($XDG_STATE_HOME/modexp-token/module.log), created
// 0600 in a directory 0700, so that nothing is silently lost; `modexp-token
// info` names the same place (config.FallbackLogTarget).
//
// The writer never blocks a PKCS#11 call for long and never fails one: a
// full socket buffer waits at most syslogTimeout, a dead socket is
// redialled at most every syslogRedial (the file takes the lines
// meanwhile), and a file that cannot be written drops them. The same line
// repeated within syslogRepeat is written once.

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modexp-token/modexp-token/token/config"
)

// syslogTimeout bounds the dial and each write; read with sysLog.mu held
// (tests raise it: a goroutine paused past it on a loaded machine would
// send the line to the per-user file instead).
var syslogTimeout = 50 * time.Millisecond

const (
	syslogTag    = "modexp-pkcs11"
	syslogRedial = 10 * time.Second
	syslogRepeat = 10 * time.Second
	// syslogHint ends every line: where to look next.
	syslogHint = "(run 'modexp-token info' with the same environment to see the configuration and token files in use; set MODEXP_TOKEN_LOG=FILE for a full log)"
)

// syslogPath is the system log socket (tests point it elsewhere).
var syslogPath = config.SyslogSocket

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
			w.toFile(now, line)
			return n, nil
		}
		c, err := net.DialTimeout("unixgram", syslogPath, syslogTimeout)
		if err != nil {
			w.failedAt = now
			w.toFile(now, line)
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
		w.toFile(now, line)
	}
	return n, nil
}

// toFile appends line to the per-user log file (config.StateLogFile),
// creating it 0600 and its directory 0700. Called with w.mu held; a file
// that cannot be written drops the line (the module never prints).
func (w *syslogWriter) toFile(now time.Time, line []byte) {
	path, err := config.StateLogFile()
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	msg := fmt.Sprintf("time=%s %s[%d]: %s %s\n", now.Format(time.RFC3339Nano), syslogTag, os.Getpid(), line, syslogHint)
	_, _ = f.WriteString(msg)
	_ = f.Close()
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
