package device

import (
	"fmt"
	"sync"
	"time"

	"github.com/modexp-token/modexp-token/engine"
)

// State is the circuit breaker's state.
type State int

// Breaker states.
const (
	// StateClosed: requests go to the device.
	StateClosed State = iota
	// StateOpen: the device failed repeatedly; requests fail fast with
	// engine.ErrDevice until the cool-down ends.
	StateOpen
	// StateHalfOpen: the cool-down ended; one probe request goes to the device,
	// the others fail fast until it answers.
	StateHalfOpen
)

// String names the state.
func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateOpen:
		return "open"
	case StateHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// outcome is what a request tells the breaker.
type outcome int

const (
	neutral outcome = iota // the caller gave up: says nothing about the device
	success                // the device answered sensibly
	failure                // timeout, lost connection, device fault, wrong answer
)

// breaker counts consecutive device failures. After threshold of them it
// opens for a cool-down that doubles on each failed probe, up to maxCool.
type breaker struct {
	mu        sync.Mutex
	threshold int
	cool      time.Duration // first cool-down
	maxCool   time.Duration
	cur       time.Duration
	state     State
	fails     int
	openUntil time.Time
	probing   bool
	lastErr   error
	trips     uint64
}

func newBreaker(threshold int, cool, maxCool time.Duration) *breaker {
	return &breaker{threshold: threshold, cool: cool, maxCool: maxCool, cur: cool}
}

// allow admits a request, or returns an error wrapping engine.ErrDevice.
// probe is true when the request is the half-open probe.
func (b *breaker) allow(now time.Time) (probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case StateClosed:
		return false, nil
	case StateOpen:
		if now.Before(b.openUntil) {
			return false, fmt.Errorf("device: unhealthy for %v more after %d failures (last: %v): %w",
				b.openUntil.Sub(now).Round(time.Millisecond), b.fails, b.lastErr, engine.ErrDevice)
		}
		b.state = StateHalfOpen
	}
	if b.probing {
		return false, fmt.Errorf("device: unhealthy, probe in progress (last: %v): %w", b.lastErr, engine.ErrDevice)
	}
	b.probing = true
	return true, nil
}

// done records a request's outcome.
func (b *breaker) done(now time.Time, probe bool, o outcome, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch o {
	case success:
		b.state, b.fails, b.cur = StateClosed, 0, b.cool
	case failure:
		b.fails++
		b.lastErr = err
		switch {
		case b.state == StateHalfOpen && probe:
			b.cur = min(2*b.cur, b.maxCool)
			b.state, b.openUntil = StateOpen, now.Add(b.cur)
			b.trips++
		case b.state == StateClosed && b.fails >= b.threshold:
			b.state, b.openUntil = StateOpen, now.Add(b.cur)
			b.trips++
		}
	}
}
