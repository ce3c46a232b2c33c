package device

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modexp-token/modexp-token/engine"
	"github.com/modexp-token/modexp-token/engine/backend/device/wire"
)

// StatusError is a device's answer other than OK. It matches the engine
// sentinels with errors.Is: INVALID_MODULUS is engine.ErrInvalidModulus,
// TOO_LARGE engine.ErrOperandTooLarge, UNSUPPORTED, UNSUPPORTED_CURVE and
// UNKNOWN_OP engine.ErrUnsupported, every status that means the device
// (not the request) is at fault engine.ErrDevice, and TIMEOUT also
// context.DeadlineExceeded.
type StatusError struct {
	Op      wire.Op
	Status  wire.Status
	Message string
}

// Error describes the answer.
func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("device: %v: %v", e.Op, e.Status)
	}
	return fmt.Sprintf("device: %v: %v: %s", e.Op, e.Status, e.Message)
}

// deviceFault reports statuses that blame the device.
func deviceFault(st wire.Status) bool {
	switch st {
	case wire.StatusOK, wire.StatusBadArgument, wire.StatusTooLarge, wire.StatusInvalidModulus,
		wire.StatusUnsupported, wire.StatusUnsupportedCurve, wire.StatusPointNotOnCurve,
		wire.StatusUnknownOp, wire.StatusCancelled:
		return false
	}
	return true
}

// Is matches the engine sentinels.
func (e *StatusError) Is(target error) bool {
	switch target {
	case engine.ErrDevice:
		return deviceFault(e.Status)
	case context.DeadlineExceeded:
		return e.Status == wire.StatusTimeout
	case engine.ErrInvalidModulus:
		return e.Status == wire.StatusInvalidModulus
	case engine.ErrOperandTooLarge:
		return e.Status == wire.StatusTooLarge
	case engine.ErrUnsupported:
		return e.Status == wire.StatusUnsupported || e.Status == wire.StatusUnsupportedCurve || e.Status == wire.StatusUnknownOp
	}
	return false
}

// call sends req (its id is assigned here) and returns the OK answer. It
// applies the default deadline, the breaker, one retry of a request lost
// with its connection, waits on BUSY and SHUTTING_DOWN, and CANCEL when ctx
// ends first.
//
// predicted is the device time the cost model expects (0: unknown); when
// set, the request's deadline is also bounded by deadlineFor(predicted).
func (e *Engine) call(ctx context.Context, req *wire.Frame, predicted time.Duration) (*wire.Frame, error) {
	now := time.Now()
	dl, has := ctx.Deadline()
	if !has {
		dl = now.Add(e.cfg.Timeout)
	}
	costBound := false
	if predicted > 0 {
		if c := now.Add(e.deadlineFor(predicted)); c.Before(dl) {
			dl, costBound = c, true
		}
	}
	parent := ctx
	if !has || costBound {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl)
		defer cancel()
	}
	probe, err := e.br.allow(now)
	if err != nil {
		return nil, err
	}
	resp, o, err := e.callLoop(ctx, req)
	e.br.done(time.Now(), probe, o, err)
	if err != nil && costBound && parent.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("device: %s: %v: predicted %v, deadline %v from the cost model: %w",
			e.cfg.Name, req.Op, predicted.Round(time.Microsecond), dl.Sub(now).Round(time.Millisecond), err)
	}
	return resp, err
}

// deadlineFor is a request's budget from its predicted device time:
// CostFactor × predicted × rounds + CostSlack, at least DeadlineFloor,
// where rounds counts the turns of the device's cores needed to serve the
// requests this client has in flight.
func (e *Engine) deadlineFor(predicted time.Duration) time.Duration {
	cores := max(e.info.Cores, 1)
	rounds := (len(e.slots) + cores) / cores // this request included
	d := time.Duration(CostFactor*rounds)*predicted + CostSlack
	return max(d, e.cfg.DeadlineFloor)
}

func (e *Engine) callLoop(ctx context.Context, req *wire.Frame) (*wire.Frame, outcome, error) {
	lost := 0
	for {
		resp, err := e.once(ctx, req)
		switch {
		case err == nil && resp.Status == wire.StatusOK:
			return resp, success, nil
		case err == nil && (resp.Status == wire.StatusBusy || resp.Status == wire.StatusShuttingDown):
			wait := 100 * time.Millisecond
			if ms, ok, _ := resp.Uint(wire.TagRetryAfterMS); ok && ms > 0 && ms < 60_000 {
				wait = time.Duration(ms) * time.Millisecond
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				return nil, e.ctxOutcome(ctx), e.ctxError(req.Op, ctx)
			}
		case err == nil:
			se := &StatusError{Op: req.Op, Status: resp.Status, Message: resp.Message()}
			if resp.Status == wire.StatusCancelled {
				return nil, e.ctxOutcome(ctx), e.ctxError(req.Op, ctx)
			}
			if deviceFault(resp.Status) {
				return nil, failure, se
			}
			return nil, success, se // the device is fine; the request was refused
		case errors.Is(err, errConnLost) && ctx.Err() == nil && lost == 0:
			lost++ // the operations are pure: a lost request is safe to resend
			continue
		case ctx.Err() != nil:
			return nil, e.ctxOutcome(ctx), e.ctxError(req.Op, ctx)
		case isNeutralDial(err):
			return nil, neutral, err
		default:
			return nil, failure, err
		}
	}
}

// isNeutralDial reports a dial error that says nothing against the device
// (see dialError).
func isNeutralDial(err error) bool {
	var de *dialError
	return errors.As(err, &de) && de.neutral
}

// ctxOutcome: an expired deadline blames the device; a cancel does not.
func (e *Engine) ctxOutcome(ctx context.Context) outcome {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failure
	}
	return neutral
}

func (e *Engine) ctxError(op wire.Op, ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("device: %s: %v: no answer before the deadline: %w", e.cfg.Name, op, errors.Join(engine.ErrDevice, ctx.Err()))
	}
	return fmt.Errorf("device: %s: %v: %w", e.cfg.Name, op, ctx.Err())
}

// once sends req on a connection and waits for its answer.
func (e *Engine) once(ctx context.Context, req *wire.Frame) (*wire.Frame, error) {
	slots := e.slots
	select {
	case slots <- struct{}{}:
		defer func() { <-slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s, solo, err := e.session(ctx)
	if err != nil {
		return nil, err
	}
	defer s.users.Add(-1)
	f := *req
	f.ID = e.newID()
	deadline, _ := ctx.Deadline()
	budget := time.Until(deadline)
	if budget <= 0 {
		return nil, context.DeadlineExceeded
	}
	f.Fields = append(append([]wire.TLV(nil), req.Fields...),
		wire.TLV{Tag: wire.TagDeadlineMS, Value: u32(uint32(min(budget.Milliseconds()+1, 1<<31)))})
	if solo {
		// Alone on its connection: nothing more is sent on it until this is
		// answered (but a best-effort CANCEL if ctx ends first).
		f.Fields = append(f.Fields, wire.TLV{Tag: wire.TagSolo, Value: []byte{1}})
	}
	ch, ok := s.register(f.ID)
	if !ok {
		e.dropSession(s, errConnLost)
		return nil, errConnLost
	}
	if err := s.send(&f, deadline); err != nil {
		e.dropSession(s, err)
		return nil, err
	}
	wait := e.readWait()
	resp, err := s.await(ctx, f.ID, ch, wait)
	if wait > 0 {
		e.waiters.Add(-1)
	}
	switch {
	case err == nil:
		if resp.Op != f.Op {
			err := fmt.Errorf("device: %s: answer to %v came as %v: %w", e.cfg.Name, f.Op, resp.Op, engine.ErrDevice)
			e.dropSession(s, err)
			return nil, err
		}
		if resp.Status == wire.StatusShuttingDown {
			e.dropSession(s, errConnLost)
		}
		return resp, nil
	case errors.Is(err, errConnLost):
		e.dropSession(s, errConnLost)
		return nil, errConnLost
	default: // ctx ended
		s.forget(f.ID)
		if solo {
			// The daemon may be computing it on the connection's reading
			// thread, where a CANCEL would be read only afterwards and the
			// next request would wait behind it: close the connection
			// instead (its end cancels what runs on it).
			e.retireSession(s, ctx.Err())
			return nil, ctx.Err()
		}
		c := wire.NewRequest(wire.OpCancel, e.newID()).AddU32(wire.TagTargetID, f.ID)
		s.send(c, time.Now().Add(cancelTimeout)) // best effort; a failure ends the session
		return nil, ctx.Err()
	}
}

// readWait is how long this request's reads may wait in the kernel,
// keeping the caller's P (Config.ReadWait): the configured wait while
// fewer than waitSlots callers wait so, else none: the caller parks on the
// netpoller and its P goes to the other callers. A thread waiting in the
// kernel holds a P, and with a P held per waiting caller the callers
// beyond GOMAXPROCS could not even send their requests: the device would
// see at most GOMAXPROCS of them at once, however many threads sign, and
// have nothing to batch. A positive result takes a slot, which the
// caller gives back (waiters.Add(-1)).
func (e *Engine) readWait() time.Duration {
	if e.cfg.ReadWait <= 0 {
		return 0
	}
	if e.waiters.Add(1) > e.waitSlots {
		e.waiters.Add(-1)
		return 0
	}
	return e.cfg.ReadWait
}

func u32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
