package server

import (
	"sort"
	"sync"
	"time"

	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// latencyBounds are the upper bounds of the latency histogram's buckets; a
// last, unbounded bucket follows.
var latencyBounds = []time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

type opCounters struct {
	requests uint64
	byStatus map[wire.Status]uint64
	buckets  []uint64
	sum, max time.Duration
}

// stats are the daemon's counters, read by STATUS.
type stats struct {
	mu            sync.Mutex
	start         time.Time
	ops           map[wire.Op]*opCounters
	conns         int
	connsTotal    uint64
	peersRejected uint64
	badFrames     uint64
	faults        uint64
	pairsSplit    uint64
	inline        uint64
	// The batch loop's batches (loop.go), by what ran them: full, every
	// client of the last batch in, the oldest request's wait over.
	loopFull, loopAll, loopWaited, loopPairs uint64
}

func newStats() *stats {
	return &stats{start: time.Now(), ops: map[wire.Op]*opCounters{}}
}

func (s *stats) record(op wire.Op, st wire.Status, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ops[op]
	if c == nil {
		c = &opCounters{byStatus: map[wire.Status]uint64{}, buckets: make([]uint64, len(latencyBounds)+1)}
		s.ops[op] = c
	}
	c.requests++
	c.byStatus[st]++
	i := sort.Search(len(latencyBounds), func(i int) bool { return d <= latencyBounds[i] })
	c.buckets[i]++
	c.sum += d
	c.max = max(c.max, d)
}

func (s *stats) add(p *uint64) {
	s.mu.Lock()
	*p++
	s.mu.Unlock()
}

func (s *stats) connDelta(d int) {
	s.mu.Lock()
	s.conns += d
	if d > 0 {
		s.connsTotal++
	}
	s.mu.Unlock()
}

// Snapshot is the daemon's state as STATUS reports it (JSON).
type Snapshot struct {
	Engine           string   `json:"engine"`
	Faults           []string `json:"faults,omitempty"`
	UptimeSeconds    float64  `json:"uptime_seconds"`
	Draining         bool     `json:"draining"`
	Connections      int      `json:"connections"`
	ConnectionsTotal uint64   `json:"connections_total"`
	PeersRejected    uint64   `json:"peers_rejected"`
	BadFrames        uint64   `json:"bad_frames"`
	FaultsInjected   uint64   `json:"faults_injected"`
	InFlight         int64    `json:"in_flight"`
	PairsSplit       uint64   `json:"pairs_split"`   // MODEXP_PAIRs run on two cores
	ServedInline     uint64   `json:"served_inline"` // requests served by their connection's reader
	Load             float64  `json:"load"`          // recent average of other requests in flight at arrival
	// Batches and BatchLanes are the engine's batches run and the
	// exponentiations they held (an engine with BatchStats, the software
	// engine's scheduler; zero otherwise).
	Batches    int64 `json:"batches"`
	BatchLanes int64 `json:"batch_lanes"`
	// Loop counts the batch loop's batches (loop.go) by what ran them, and
	// the pairs they held.
	Loop LoopSnapshot          `json:"loop"`
	Ops  map[string]OpSnapshot `json:"ops"`
}

// LoopSnapshot counts the batch loop's batches: Full ones, those run
// when every client of the last two batches had sent its next request (All),
// and those run when the oldest request had waited its limit (Waited);
// Pairs is the MODEXP_PAIR requests they held.
type LoopSnapshot struct {
	Full   uint64 `json:"full"`
	All    uint64 `json:"all"`
	Waited uint64 `json:"waited"`
	Pairs  uint64 `json:"pairs"`
}

// OpSnapshot is one operation's counters. Latencies are from receipt of the
// request to the answer being written; percentiles are bucket upper bounds.
type OpSnapshot struct {
	Requests uint64            `json:"requests"`
	Errors   uint64            `json:"errors"`
	Statuses map[string]uint64 `json:"statuses"`
	MeanMS   float64           `json:"mean_ms"`
	P50MS    float64           `json:"p50_ms"`
	P99MS    float64           `json:"p99_ms"`
	MaxMS    float64           `json:"max_ms"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (c *opCounters) quantile(q float64) time.Duration {
	want := uint64(q*float64(c.requests) + 0.999999)
	var seen uint64
	for i, n := range c.buckets {
		seen += n
		if seen >= want {
			if i < len(latencyBounds) {
				return min(latencyBounds[i], c.max)
			}
			return c.max
		}
	}
	return c.max
}

func (s *stats) snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{
		UptimeSeconds: time.Since(s.start).Seconds(), Connections: s.conns,
		ConnectionsTotal: s.connsTotal, PeersRejected: s.peersRejected,
		BadFrames: s.badFrames, FaultsInjected: s.faults, PairsSplit: s.pairsSplit, ServedInline: s.inline,
		Loop: LoopSnapshot{Full: s.loopFull, All: s.loopAll, Waited: s.loopWaited, Pairs: s.loopPairs},
		Ops:  map[string]OpSnapshot{},
	}
	for op, c := range s.ops {
		o := OpSnapshot{Requests: c.requests, Statuses: map[string]uint64{}, MaxMS: ms(c.max)}
		for st, n := range c.byStatus {
			o.Statuses[st.String()] = n
			if st != wire.StatusOK {
				o.Errors += n
			}
		}
		if c.requests > 0 {
			o.MeanMS = ms(c.sum / time.Duration(c.requests))
			o.P50MS = ms(c.quantile(0.5))
			o.P99MS = ms(c.quantile(0.99))
		}
		snap.Ops[op.String()] = o
	}
	return snap
}
