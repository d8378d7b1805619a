package pleg

// The PLEG's two modes and the switch between them, as
// apps/pleg/src/pleg-runner.ts (docs/adr/0040):
//   - generic: relist every RELIST_PERIOD (1s);
//   - evented: the runtime's container events (GetContainerEvents, relayed
//     by cri-gateway on `cri.<node>.events`) each make the PLEG inspect that
//     pod at once; a relist every EVENTED_RELIST_PERIOD (300s) is the safety
//     net (KEP-3386).
//
// An event is a hint, not a state: the pod is read from the runtime after
// the event arrived (InspectPod) and written with the same monotonic writer
// as an immediate inspection, stamped with the PLEG's own clock, never the
// runtime's. So an event for an older state that arrives after a newer
// inspection cannot move the cache back (kubernetes#121003, #123087), and
// an event's own statuses, empty on some runtimes (#129818), are not used.
//
// Evented mode falls back to the 1s relist at once, with a relist at once,
// and says so (the log, Mode, the ModeReporter: metrics and an event on the
// Node), when the relay says its stream broke, stopped or is unsupported,
// when it says nothing for EventedSilence (90s), or when an event arrives
// more than EventedLag (10s) after the runtime made it. It returns to events,
// with a relist at once, once the relay has said it streams for
// EventedReturnAfter (30s), doubled for each fallback within 5 minutes of a
// return, up to 5 minutes: never "generic forever" (#129827). A new stream
// name seen while evented (a reconnect, a restarted cri-gateway) means
// events may have been missed between the two: a relist at once
// (cri-o#6627).
//
// The state machine, per instance (desired is what was asked for):
//
//	desired generic:  effective generic
//	desired evented:  effective evented --(broke, stopped, unsupported, silent, lagging)--> generic
//	                  effective generic --(relay streaming for ReturnWait)--> evented
//
// A pod worker's inspection request is served in either mode; everything is
// ignored while stopped (a standby).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Mode is what `kubelet.<node>.service.pleg.mode` and GET /mode answer.
type Mode struct {
	Desired        string `json:"desired"`
	Effective      string `json:"effective"`
	FallbackReason string `json:"fallbackReason,omitempty"`
}

// RelayStatus is a ContainerEventsStatusMessage (`kubelet.v1.container_events_status`,
// libs/contracts messages.ts; docs/contract/asyncapi.yaml containerEventsStatus).
type RelayStatus struct {
	Type   string `json:"type"`
	State  string `json:"state"`
	Detail string `json:"detail"`
	// Stream names the relay's stream: it changes whenever the relay opens a
	// new one (a reconnect, a restarted cri-gateway). Empty: a relay older
	// than the field.
	Stream string `json:"stream,omitempty"`
}

// RelayStatusType is the `type` of the relay's status messages.
const RelayStatusType = "kubelet.v1.container_events_status"

// ModeReporter is where the evented PLEG tells how its container events
// are doing: the kubelet's kubelet_evented_pleg_connection_* metrics, and
// an event on the Node at each fallback and each return. Its methods are
// called with the runner's lock held: they must not block.
type ModeReporter interface {
	// Connected: events are used, at the start of evented mode (resumed
	// false) or again after a fallback (resumed true).
	Connected(resumed bool)
	// FellBack: evented mode fell back to the 1s relist for reason; fault
	// when events failed (not when the runtime offers none).
	FellBack(reason string, fault bool)
	// Latency is the seconds from the runtime making an event to its arrival.
	Latency(seconds float64)
}

type noReporter struct{}

func (noReporter) Connected(bool)        {}
func (noReporter) FellBack(string, bool) {}
func (noReporter) Latency(float64)       {}

// RunnerOptions are the modes' periods and evented mode's limits.
type RunnerOptions struct {
	RelistPeriod        time.Duration
	EventedRelistPeriod time.Duration
	// EventedSilence: silence from the relay after which evented mode gives up.
	EventedSilence time.Duration
	// EventedLag: an event arriving later than this after the runtime made
	// it means the stream lags, and evented mode falls back. Default 10s.
	EventedLag time.Duration
	// EventedReturnAfter: after a fallback, how long the relay must say it
	// streams before events are used again. Default 30s.
	EventedReturnAfter time.Duration
}

const (
	defaultEventedLag         = 10 * time.Second
	defaultEventedReturnAfter = 30 * time.Second
	// maxReturnAfter is the longest wait before events are used again, however often they failed.
	maxReturnAfter = 5 * time.Minute
	// stableAfterReturn: a fallback this long after a return starts the doubling of the wait over.
	stableAfterReturn = 5 * time.Minute
	// eventedCheck is how often evented mode checks that the relay still speaks.
	eventedCheck = 10 * time.Second
)

// RunnerDeps are what the modes work with.
type RunnerDeps struct {
	Pleg   *Generic
	Clock  Clock
	Logger Logger
	// AskRelay asks cri-gateway how its event relay is doing (false: no
	// answer). Optional: it never answers.
	AskRelay func(context.Context) (*RelayStatus, bool)
	// Reporter is told of each fallback and return, and of events' latency. Optional.
	Reporter ModeReporter
	// EventTrace is the trace an event's inspection runs in: the relay
	// message's (in ctx, when it carried one) with the pod filled in, or a
	// new one. Optional.
	EventTrace func(ctx context.Context, podUID string) context.Context
}

// Runner drives a Generic PLEG in either mode.
type Runner struct {
	d RunnerDeps
	o RunnerOptions

	mu               sync.Mutex
	desired          string
	effective        string
	fallbackReason   string
	lastRelayMessage time.Time
	lastRelistAt     *time.Time
	// relistFailing: the last relist failed, and the next comes at the
	// generic period whatever the mode: until one succeeds the cache has no
	// time, the sync loop's gate stays shut (a PLEG started before
	// cri-gateway answers) and no heartbeat is written.
	relistFailing bool
	// relayStream is the relay's stream last heard of (RelayStatus.Stream).
	relayStream string
	// streamingSince: since when the relay has said it streams, while fallen
	// back; nil once it says otherwise.
	streamingSince  *time.Time
	lastReturnAt    *time.Time
	fallbacksInARow int
	// inspecting: pods being inspected for an event, and whether another
	// event for the pod came meanwhile.
	inspecting map[string]*eventInspection
	timer      Timer
	stopped    bool
	cancel     context.CancelFunc
	ctx        context.Context
	wg         sync.WaitGroup
}

type eventInspection struct{ again bool }

// NewRunner drives d.Pleg in mode ("generic" or "evented") once started.
func NewRunner(d RunnerDeps, o RunnerOptions, mode string) *Runner {
	if d.AskRelay == nil {
		d.AskRelay = func(context.Context) (*RelayStatus, bool) { return nil, false }
	}
	if d.Reporter == nil {
		d.Reporter = noReporter{}
	}
	if d.EventTrace == nil {
		d.EventTrace = func(ctx context.Context, _ string) context.Context { return ctx }
	}
	if o.EventedLag <= 0 {
		o.EventedLag = defaultEventedLag
	}
	if o.EventedReturnAfter <= 0 {
		o.EventedReturnAfter = defaultEventedReturnAfter
	}
	return &Runner{d: d, o: o, desired: mode, effective: "generic", stopped: true, inspecting: map[string]*eventInspection{}}
}

// ParseMode checks a requested mode, in the words of ours.
func ParseMode(v any) (string, error) {
	if s, ok := v.(string); ok && (s == "generic" || s == "evented") {
		return s, nil
	}
	b, _ := json.Marshal(v)
	return "", fmt.Errorf(`mode must be "generic" or "evented", got %s`, b)
}

// ReturnWait is how long the relay must stream before events are used
// again after the fallbacksInARow-th fallback in a row: base, doubled for
// each fallback after the first, at most 5 minutes.
func ReturnWait(base time.Duration, fallbacksInARow int) time.Duration {
	wait := base
	for i := 1; i < fallbacksInARow && wait < maxReturnAfter; i++ {
		wait *= 2
	}
	return min(wait, maxReturnAfter)
}

// FallbacksInARow counts a fallback at now: one more when it comes within 5
// minutes of the last return to events, else the first of a new row.
func FallbacksInARow(previous int, lastReturn *time.Time, now time.Time) int {
	if lastReturn != nil && now.Sub(*lastReturn) < stableAfterReturn {
		return previous + 1
	}
	return 1
}

// RuntimeTime is a container event's createdAt (nanoseconds since the
// epoch, a decimal string or a JSON number) as a time; false when absent,
// zero or not a time. Only the lag check uses it: the runtime's clock is
// never a cache time (kubernetes#127814).
func RuntimeTime(createdAt json.RawMessage) (time.Time, bool) {
	s := strings.Trim(strings.TrimSpace(string(createdAt)), `"`)
	ns, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ns/1_000_000 <= 0 {
		return time.Time{}, false
	}
	// Milliseconds, as ours reads it (BigInt / 1e6): the lag is compared in whole milliseconds.
	return time.UnixMilli(ns / 1_000_000), true
}

// Mode is the desired and effective mode, and why it fell back.
func (r *Runner) Mode() Mode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Mode{Desired: r.desired, Effective: r.effective, FallbackReason: r.fallbackReason}
}

// Start runs the desired mode, relisting at once.
func (r *Runner) Start() {
	r.mu.Lock()
	if !r.stopped {
		r.mu.Unlock()
		return
	}
	r.stopped = false
	r.ctx, r.cancel = context.WithCancel(context.Background())
	mode := r.desired
	r.mu.Unlock()
	r.SetMode(mode, "start")
}

// Stop stops relisting (a standby does not relist) and waits for the work in flight.
func (r *Runner) Stop() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.stopped = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.cancel()
	r.mu.Unlock()
	r.wg.Wait()
}

// SetMode switches mode now (a command over NATS or HTTP); evented mode may fall back by itself later.
func (r *Runner) SetMode(mode, why string) {
	r.mu.Lock()
	r.desired, r.effective, r.fallbackReason = mode, mode, ""
	r.streamingSince, r.fallbacksInARow = nil, 0
	r.lastRelayMessage = r.d.Clock.Now()
	r.lastRelistAt = nil // relist at once in the new mode
	r.d.Pleg.RelistPeriodChanged(r.periodLocked())
	r.d.Logger.Info("PLEG mode", "mode", mode, "why", why)
	r.scheduleLocked(0)
	if mode == "evented" {
		r.d.Reporter.Connected(false)
	}
	ctx := r.ctx
	r.mu.Unlock()
	// Evented mode on a runtime that does not stream events falls back at once, not at the relay's next heartbeat.
	if mode == "evented" && ctx != nil {
		go func() {
			if s, ok := r.d.AskRelay(ctx); ok {
				r.onRelayStatus(*s)
			}
		}()
	}
}

func (r *Runner) periodLocked() time.Duration {
	if r.effective == "evented" {
		return r.o.EventedRelistPeriod
	}
	return r.o.RelistPeriod
}

// relistEveryLocked is how far apart relists are now: the mode's period, or
// the generic one while relists fail.
func (r *Runner) relistEveryLocked() time.Duration {
	if r.relistFailing {
		return r.o.RelistPeriod
	}
	return r.periodLocked()
}

func (r *Runner) scheduleLocked(d time.Duration) {
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.stopped {
		return
	}
	r.timer = r.d.Clock.AfterFunc(d, r.tick)
}

func (r *Runner) relistNowLocked() {
	r.lastRelistAt = nil
	r.scheduleLocked(0)
}

func (r *Runner) returnWaitLocked() time.Duration {
	return ReturnWait(r.o.EventedReturnAfter, r.fallbacksInARow)
}

func (r *Runner) fallBackLocked(reason string, fault bool) {
	if r.effective == "generic" {
		return
	}
	now := r.d.Clock.Now()
	r.fallbacksInARow = FallbacksInARow(r.fallbacksInARow, r.lastReturnAt, now)
	r.d.Logger.Warn("evented PLEG falls back to the generic relist", "reason", reason, "retryAfterMs", r.returnWaitLocked().Milliseconds())
	r.effective, r.fallbackReason, r.streamingSince = "generic", reason, nil
	r.d.Pleg.RelistPeriodChanged(r.o.RelistPeriod)
	r.d.Reporter.FellBack(reason, fault)
	r.relistNowLocked()
}

// resumeLocked: events flow again: used again, with a relist at once for what happened while they did not.
func (r *Runner) resumeLocked() {
	was := r.fallbackReason
	now := r.d.Clock.Now()
	r.effective, r.fallbackReason, r.streamingSince, r.lastReturnAt = "evented", "", nil, &now
	r.d.Pleg.RelistPeriodChanged(r.o.EventedRelistPeriod)
	r.d.Logger.Info("evented PLEG uses the container events again", "after", was)
	r.d.Reporter.Connected(true)
	r.relistNowLocked()
}

func (r *Runner) tick() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	now := r.d.Clock.Now()
	if r.effective == "evented" && now.Sub(r.lastRelayMessage) > r.o.EventedSilence {
		r.fallBackLocked(fmt.Sprintf("no word from the container event relay for %ds", int(math.Round(r.o.EventedSilence.Seconds()))), true)
	}
	if r.desired == "evented" && r.effective == "generic" && r.streamingSince != nil && now.Sub(*r.streamingSince) >= r.returnWaitLocked() {
		r.resumeLocked()
	}
	relist := r.lastRelistAt == nil || now.Sub(*r.lastRelistAt) >= r.relistEveryLocked()
	if relist {
		r.lastRelistAt = &now
	}
	// Between evented mode's rare relists, a sign of life for the sync loop's gate (a relist is one).
	heartbeat := !relist && r.effective == "evented"
	ctx := r.ctx
	r.wg.Add(1)
	r.mu.Unlock()
	if relist {
		_, err := r.d.Pleg.Relist(ctx)
		if err != nil {
			r.d.Logger.Warn("PLEG relist failed", "err", err.Error())
		}
		r.mu.Lock()
		r.relistFailing = err != nil
		r.mu.Unlock()
	} else if heartbeat {
		if err := r.d.Pleg.Heartbeat(ctx); err != nil {
			r.d.Logger.Warn("PLEG: the heartbeat could not be written to the pod cache", "err", err.Error())
		}
	}
	r.wg.Done()
	r.mu.Lock()
	// The mode may have changed during the relist (a fallback while it ran): the next wake-up is the mode's now.
	// In evented mode, often enough to notice a silent relay and to show it is alive.
	next := r.relistEveryLocked()
	if r.effective == "evented" && !r.relistFailing {
		next = min(next, eventedCheck, r.d.Pleg.HeartbeatPeriod())
	}
	r.scheduleLocked(next)
	r.mu.Unlock()
}

func (r *Runner) onRelayStatus(s RelayStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// A standby does nothing (ours would still switch its effective mode and tell the Node: nothing a standby should say).
	if r.stopped || r.desired != "evented" {
		return
	}
	newStream := s.Stream != "" && r.relayStream != "" && s.Stream != r.relayStream
	if s.Stream != "" {
		r.relayStream = s.Stream
	}
	switch s.State {
	case "streaming":
		if r.effective == "generic" {
			if r.streamingSince == nil {
				now := r.d.Clock.Now()
				r.streamingSince = &now
			}
		} else if newStream {
			// A stream this PLEG did not see open: what happened between the two was never relayed.
			r.d.Logger.Info("a new container event stream: relisting now for what the last one missed", "stream", s.Stream)
			r.relistNowLocked()
		}
	case "unsupported":
		r.streamingSince = nil
		r.fallBackLocked("the runtime does not stream container events: "+s.Detail, false)
	case "reconnecting":
		r.streamingSince = nil
		r.fallBackLocked("the container event stream broke: "+s.Detail, true)
	case "stopped":
		r.streamingSince = nil
		r.fallBackLocked("the container event stream stopped (cri-gateway shutting down)", true)
	}
}

// containerEvent is the part of a ContainerEventResponse read here: the
// pod it names and when the runtime made it; its statuses are not used.
type containerEvent struct {
	CreatedAt        json.RawMessage `json:"createdAt"`
	PodSandboxStatus *struct {
		Metadata *Metadata `json:"metadata"`
	} `json:"podSandboxStatus"`
}

// OnRuntimeMessage is a message on `cri.<node>.events`: a container event,
// or the relay's status. Ignored while stopped (a standby). The relay's
// statuses are handled before it returns, in the order they arrive; an
// event's inspection runs on its own (nats.go calls a subscription's
// handler one message at a time, and a status must not wait for a read of
// the runtime).
func (r *Runner) OnRuntimeMessage(ctx context.Context, data []byte) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.lastRelayMessage = r.d.Clock.Now()
	r.mu.Unlock()
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &head) != nil {
		return
	}
	if head.Type == RelayStatusType {
		var s RelayStatus
		if json.Unmarshal(data, &s) == nil {
			r.onRelayStatus(s)
		}
		return
	}
	var e containerEvent
	// An event without a pod UID is ignored (kubernetes#114371): the next relist sees the pod.
	if json.Unmarshal(data, &e) != nil || e.PodSandboxStatus == nil || e.PodSandboxStatus.Metadata == nil || e.PodSandboxStatus.Metadata.UID == "" {
		return
	}
	r.onContainerEvent(ctx, e.PodSandboxStatus.Metadata.UID, e.CreatedAt)
}

func (r *Runner) onContainerEvent(ctx context.Context, uid string, createdAt json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.effective != "evented" {
		return
	}
	if madeAt, ok := RuntimeTime(createdAt); ok {
		lag := r.d.Clock.Now().Sub(madeAt)
		// A runtime clock ahead of ours is a lag of 0 (kubernetes#127814); seconds, not nanoseconds (#124297).
		r.d.Reporter.Latency(max(0, lag).Seconds())
		if lag > r.o.EventedLag {
			r.fallBackLocked(fmt.Sprintf("container events arrive %ds after the runtime made them (more than %ds)", int(math.Round(lag.Seconds())), int(math.Round(r.o.EventedLag.Seconds()))), true)
			return
		}
	}
	// Events for a pod being inspected fold into one more read after it, so a
	// burst costs two reads and the last read is after the last event.
	if running := r.inspecting[uid]; running != nil {
		running.again = true
		return
	}
	state := &eventInspection{again: true}
	r.inspecting[uid] = state
	r.wg.Add(1)
	// The inspection, its cache write and its events are hops of this pod (in the relay message's trace, when it carried one).
	ictx := r.d.EventTrace(ctx, uid)
	go func() {
		defer r.wg.Done()
		r.inspectForEvent(ictx, uid, state)
	}()
}

// inspectForEvent reads the pod from the runtime now (InspectPod: the same
// monotonic writer and the same events as an immediate inspection), again
// while events for it came meanwhile.
func (r *Runner) inspectForEvent(ctx context.Context, uid string, state *eventInspection) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer delete(r.inspecting, uid)
	for state.again && r.effective == "evented" && !r.stopped {
		state.again = false
		runnerCtx := r.ctx
		r.mu.Unlock()
		ictx, cancel := context.WithCancel(ctx)
		// Stopping the runner (leadership lost) cancels the read.
		unhook := context.AfterFunc(runnerCtx, cancel)
		if _, err := r.d.Pleg.InspectPod(ictx, uid, 0); err != nil {
			r.d.Logger.Warn("PLEG: the inspection a container event asked for failed; the next relist will see the pod", "uid", uid, "err", err.Error())
		}
		unhook()
		cancel()
		r.mu.Lock()
	}
}

// OnInspectRequest inspects the pod a pod worker just changed; ignored while
// stopped (a standby). A failure waits for the next relist, the safety net.
func (r *Runner) OnInspectRequest(ctx context.Context, podUID string, syncEnd int64) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	defer r.wg.Done()
	if _, err := r.d.Pleg.InspectPod(ctx, podUID, syncEnd); err != nil {
		r.d.Logger.Warn("PLEG: the inspection a pod worker asked for failed; the next relist will see the pod", "uid", podUID, "err", err.Error())
	}
}
