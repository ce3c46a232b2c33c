// Command modexpd is the ModExp device daemon: it serves MXP/1 (see
// docs/PROTOCOL.md) on behalf of an engine, so that tokens reach it through
// the engine spec "device:unix:/path/to.sock".
//
// Usage:
//
//	modexpd [serve] --listen unix:/path/to.sock --engine soft|chip:NAME [--fault SPEC]...
//	        [--allow-uid UID]... [--log FILE] [--log-level debug|info|warn|error]
//	        [--drain-timeout 10s] [--max-conns N] [--max-inflight N] [--batch-loop] [--cpuprofile FILE]
//	modexpd serve --listen tcp:127.0.0.1:PORT --cert server.crt --key server.key --clients clients.crt ...
//	modexpd status --listen ADDR [--cert F --key F --ca F] [--json]
//	modexpd keygen --cert F --key F [--name NAME]
//
// The unix socket (the default, under $XDG_RUNTIME_DIR, /run/user/UID or /run)
// has mode 0600 in a 0700 directory, and peers are checked by uid. TCP is
// served only with TLS 1.3 and pinned certificates both ways. SIGTERM or
// SIGINT drains: new requests are refused with SHUTTING_DOWN, requests in
// flight are answered, then the daemon exits. It logs through log/slog to
// --log or stderr, never to stdout.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modexp-token/modexp-token/cmd/internal/version"
	"github.com/modexp-token/modexp-token/cmd/modexpd/server"
	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"

	_ "github.com/modexp-token/modexp-token/engine/backend/chip"
	_ "github.com/modexp-token/modexp-token/engine/backend/soft"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// defaultListen is $XDG_RUNTIME_DIR/modexpd/modexpd.sock, else
// /run/user/UID/modexpd/modexpd.sock when /run/user/UID exists, else
// /run/modexpd/modexpd.sock: a per-user or system runtime directory, never
// a directory where another user could take the name first (/tmp).
func defaultListen() string {
	dir := os.Getenv("XDG_RUNTIME_DIR")
	switch user := filepath.Join("/run/user", strconv.Itoa(os.Getuid())); {
	case filepath.IsAbs(dir):
		dir = filepath.Join(dir, "modexpd")
	case dirExists(user):
		dir = filepath.Join(user, "modexpd")
	default:
		dir = "/run/modexpd"
	}
	return "unix:" + filepath.Join(dir, "modexpd.sock")
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "--version" || args[0] == "-version") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "modexpd", version.String())
		return 0
	case "serve":
		err = serve(args, stderr)
	case "status":
		err = status(args, stdout, stderr)
	case "keygen":
		err = keygen(args, stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, "usage: modexpd [serve|status|keygen|version] [flags]; modexpd CMD -h for flags; modexpd --version")
		return 0
	default:
		err = fmt.Errorf("unknown command %q (serve, status, keygen)", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "modexpd:", err)
		return 1
	}
	return 0
}

// parseCost reads --cost: "auto" (nil: the server measures the engine),
// "none" (a zero model), or three integers FIXED_NS,MODEXP_PS,EC_PS.
func parseCost(v string) (*wire.CostModel, error) {
	switch v {
	case "auto":
		return nil, nil
	case "none":
		return &wire.CostModel{}, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) != 3 {
		return nil, fmt.Errorf("--cost %q: want auto, none or FIXED_NS,MODEXP_PS,EC_PS", v)
	}
	var n [3]uint64
	for i, p := range parts {
		x, err := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--cost %q: %w", v, err)
		}
		n[i] = x
	}
	cm := wire.CostModel{FixedNS: n[0], ModExpPS: n[1], ECPS: n[2]}
	if _, err := wire.ParseCostModel(cm.Encode()); err != nil {
		return nil, fmt.Errorf("--cost %q: %w", v, err)
	}
	return &cm, nil
}

func serve(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", defaultListen(), "unix:/path/to.sock or tcp:HOST:PORT")
	spec := fs.String("engine", "soft", "backing engine: soft or chip:NAME")
	var faults, uids listFlag
	fs.Var(&faults, "fault", "inject a fault (repeatable): zero-above:BITS, bitflip:PROB, hang, drop[:EVERY], slow:MS")
	fs.Var(&uids, "allow-uid", "unix peer uid to accept (repeatable; default: the daemon's own)")
	logFile := fs.String("log", "", "log file (default stderr)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	drain := fs.Duration("drain-timeout", 10*time.Second, "how long SIGTERM waits for requests in flight")
	maxConns := fs.Int("max-conns", server.DefaultMaxConns, "concurrent connections")
	maxInflight := fs.Int("max-inflight", server.DefaultMaxInflight, "requests in flight per connection")
	batchLoop := fs.Bool("batch-loop", false, "serve unix clients from one batch loop when the engine batches: for more clients than cores (dearer for 1-2)")
	cert := fs.String("cert", "", "TCP: the daemon's certificate (PEM)")
	key := fs.String("key", "", "TCP: the daemon's private key (PEM)")
	clients := fs.String("clients", "", "TCP: the client certificates accepted (PEM, pinned)")
	costSpec := fs.String("cost", "auto", "cost model sent in INFO: auto (measure the engine at start), none, or FIXED_NS,MODEXP_PS,EC_PS")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of serving to this file, from the first accept to exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	var out io.Writer = stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("--log: %w", err)
		}
		defer f.Close()
		out = f
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: lvl}))

	cfg := server.Config{Logger: log, MaxConns: *maxConns, MaxInflight: *maxInflight, Firmware: "modexpd/1", BatchLoop: *batchLoop}
	for _, f := range faults {
		ft, err := server.ParseFault(f)
		if err != nil {
			return err
		}
		cfg.Faults = append(cfg.Faults, ft)
	}
	for _, u := range uids {
		n, err := strconv.Atoi(u)
		if err != nil || n < 0 {
			return fmt.Errorf("--allow-uid %q", u)
		}
		cfg.AllowUIDs = append(cfg.AllowUIDs, n)
	}
	if strings.HasPrefix(*listen, "tcp:") {
		if *cert == "" || *key == "" || *clients == "" {
			return errors.New("tcp needs --cert, --key and --clients (TLS 1.3 with pinned certificates)")
		}
		tc, err := wire.ServerTLSConfig(*cert, *key, *clients)
		if err != nil {
			return err
		}
		cfg.TLS = tc
	} else if *cert != "" || *key != "" || *clients != "" {
		return errors.New("--cert, --key and --clients are for tcp listeners")
	}

	cost, err := parseCost(*costSpec)
	if err != nil {
		return err
	}
	cfg.Cost = cost
	eng, err := engine.Open(*spec)
	if err != nil {
		return err
	}
	defer eng.Close()
	cfg.Engine = eng
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	l, err := server.Listen(*listen)
	if err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			l.Close()
			return err
		}
		defer stop(log)
	}
	cm := srv.Cost()
	log.Info("modexpd starting", "listen", *listen, "engine", eng.Info().Name, "faults", faults.String(), "pid", os.Getpid(),
		"cost_fixed_ns", cm.FixedNS, "cost_modexp_ps", cm.ModExpPS, "cost_ec_ps", cm.ECPS,
		"predicted_rsa2048_crt", cm.ModExpCRT(2048).String())

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		srv.Close()
		return err
	case sig := <-sigs:
		log.Info("signal: draining", "signal", sig.String(), "timeout", *drain)
		ctx, cancel := context.WithTimeout(context.Background(), *drain)
		defer cancel()
		err := srv.Shutdown(ctx)
		<-served
		if err != nil {
			log.Warn("drain incomplete", "err", err)
			return err
		}
		log.Info("drained, exiting")
		return nil
	}
}

// startCPUProfile starts the CPU profiler writing to path (a new file, mode
// 0600); the returned function stops it and closes the file.
func startCPUProfile(path string) (func(*slog.Logger), error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func(log *slog.Logger) {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Warn("cpu profile", "err", err)
		}
	}, nil
}

func status(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", defaultListen(), "the daemon's address")
	cert := fs.String("cert", "", "TCP: client certificate")
	key := fs.String("key", "", "TCP: client key")
	ca := fs.String("ca", "", "TCP: the daemon's certificate (pinned)")
	asJSON := fs.Bool("json", false, "print the raw JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var tc *tls.Config
	if strings.HasPrefix(*listen, "tcp:") {
		c, err := wire.ClientTLSConfig(*cert, *key, *ca)
		if err != nil {
			return err
		}
		tc = c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	snap, err := server.FetchStatus(ctx, *listen, tc)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(snap)
	}
	fmt.Fprintf(stdout, "engine %s  uptime %.0fs  connections %d (total %d)  in flight %d  draining %v\n",
		snap.Engine, snap.UptimeSeconds, snap.Connections, snap.ConnectionsTotal, snap.InFlight, snap.Draining)
	fmt.Fprintf(stdout, "bad frames %d  peers rejected %d  faults %v (injected %d)\n",
		snap.BadFrames, snap.PeersRejected, snap.Faults, snap.FaultsInjected)
	fmt.Fprintf(stdout, "load %.2f  served inline %d  pairs on two cores %d\n", snap.Load, snap.ServedInline, snap.PairsSplit)
	if snap.Batches > 0 {
		fmt.Fprintf(stdout, "batches %d  lanes %d (%.1f a batch)\n", snap.Batches, snap.BatchLanes, float64(snap.BatchLanes)/float64(snap.Batches))
		if l := snap.Loop; l.Full+l.All+l.Waited > 0 {
			fmt.Fprintf(stdout, "batch loop: %d pairs in %d batches (%.1f a batch): %d full, %d with every client, %d after waiting\n",
				l.Pairs, l.Full+l.All+l.Waited, float64(l.Pairs)/float64(l.Full+l.All+l.Waited), l.Full, l.All, l.Waited)
		}
	}
	names := make([]string, 0, len(snap.Ops))
	for n := range snap.Ops {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(stdout, "%-11s %9s %7s %9s %9s %9s %9s  %s\n", "op", "requests", "errors", "mean ms", "p50 ms", "p99 ms", "max ms", "statuses")
	for _, n := range names {
		o := snap.Ops[n]
		var st []string
		for k, v := range o.Statuses {
			st = append(st, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(st)
		fmt.Fprintf(stdout, "%-11s %9d %7d %9.3f %9.3f %9.3f %9.3f  %s\n", n, o.Requests, o.Errors, o.MeanMS, o.P50MS, o.P99MS, o.MaxMS, strings.Join(st, " "))
	}
	return nil
}

func keygen(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cert := fs.String("cert", "", "certificate file to write (PEM)")
	key := fs.String("key", "", "private key file to write (PEM, mode 0600)")
	name := fs.String("name", "modexpd", "name in the certificate")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cert == "" || *key == "" {
		return errors.New("keygen needs --cert and --key")
	}
	if err := wire.GenerateCredentials(*cert, *key, *name); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", *cert, *key)
	return nil
}
