package pleg

// The PLEG's two modes and the switch between them, as
// apps/pleg/src/pleg-runner.ts:
//   - generic: relist every RELIST_PERIOD (1s);
//   - evented: the runtime's container events (GetContainerEvents, relayed
//     by cri-gateway on `cri.<node>.events`) update the cache and send the
//     events; a relist every EVENTED_RELIST_PERIOD (300s) is the safety
//     net. When the relay says events do not flow (unsupported, or
//     reconnecting three times in a row) or says nothing for 90s, it falls
//     back to generic by itself.
// The mode can be switched while running. Cache timestamps come from the
// PLEG's own monotonic clock in both modes, never from the runtime's events
// (kubernetes#121003, #123087). A pod worker's inspection request is served
// in either mode; everything is ignored while stopped (a standby).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"
)

// Mode is what `kubelet.<node>.service.pleg.mode` and GET /mode answer.
type Mode struct {
	Desired        string `json:"desired"`
	Effective      string `json:"effective"`
	FallbackReason string `json:"fallbackReason,omitempty"`
}

// RelayStatus is a ContainerEventsStatusMessage (`kubelet.v1.container_events_status`).
type RelayStatus struct {
	Type   string `json:"type"`
	State  string `json:"state"`
	Detail string `json:"detail"`
}

// RelayStatusType is the `type` of the relay's status messages.
const RelayStatusType = "kubelet.v1.container_events_status"

// RunnerOptions are the modes' periods.
type RunnerOptions struct {
	RelistPeriod        time.Duration
	EventedRelistPeriod time.Duration
	// EventedSilence: silence from the relay after which evented mode gives up.
	EventedSilence time.Duration
}

// eventedCheck is how often evented mode checks that the relay still speaks.
const eventedCheck = 10 * time.Second

var eventTypes = map[string]EventType{
	"CONTAINER_STARTED_EVENT": ContainerStarted,
	"CONTAINER_STOPPED_EVENT": ContainerDied,
	"CONTAINER_DELETED_EVENT": ContainerRemoved,
}

// Runner drives a Generic PLEG in either mode.
type Runner struct {
	pleg     *Generic
	sink     EventSink
	clock    Clock
	log      Logger
	o        RunnerOptions
	askRelay func(context.Context) (*RelayStatus, bool)

	mu               sync.Mutex
	desired          string
	effective        string
	fallbackReason   string
	badStatuses      int
	lastRelayMessage time.Time
	lastRelistAt     *time.Time
	timer            Timer
	stopped          bool
	cancel           context.CancelFunc
	ctx              context.Context
	wg               sync.WaitGroup
}

// NewRunner drives pleg in mode ("generic" or "evented") once started;
// askRelay asks cri-gateway how its event relay is doing (false: no answer).
func NewRunner(pleg *Generic, sink EventSink, clock Clock, log Logger, o RunnerOptions, mode string, askRelay func(context.Context) (*RelayStatus, bool)) *Runner {
	if askRelay == nil {
		askRelay = func(context.Context) (*RelayStatus, bool) { return nil, false }
	}
	return &Runner{pleg: pleg, sink: sink, clock: clock, log: log, o: o, askRelay: askRelay, desired: mode, effective: "generic", stopped: true}
}

// ParseMode checks a requested mode, in the words of ours.
func ParseMode(v any) (string, error) {
	if s, ok := v.(string); ok && (s == "generic" || s == "evented") {
		return s, nil
	}
	b, _ := json.Marshal(v)
	return "", fmt.Errorf(`mode must be "generic" or "evented", got %s`, b)
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
	r.desired, r.effective, r.fallbackReason, r.badStatuses = mode, mode, "", 0
	r.lastRelayMessage = r.clock.Now()
	r.lastRelistAt = nil // relist at once in the new mode
	r.pleg.RelistPeriodChanged(r.periodLocked())
	r.log.Info("PLEG mode", "mode", mode, "why", why)
	r.scheduleLocked(0)
	ctx := r.ctx
	r.mu.Unlock()
	// Evented mode on a runtime that does not stream events falls back at once, not at the relay's next heartbeat.
	if mode == "evented" && ctx != nil {
		go func() {
			if s, ok := r.askRelay(ctx); ok {
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

func (r *Runner) scheduleLocked(d time.Duration) {
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.stopped {
		return
	}
	r.timer = r.clock.AfterFunc(d, r.tick)
}

func (r *Runner) fallBackLocked(reason string) {
	if r.effective == "generic" {
		return
	}
	r.log.Warn("evented PLEG falls back to the generic relist", "reason", reason)
	r.effective, r.fallbackReason, r.lastRelistAt = "generic", reason, nil
	r.pleg.RelistPeriodChanged(r.o.RelistPeriod)
	r.scheduleLocked(0)
}

func (r *Runner) tick() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	now := r.clock.Now()
	if r.effective == "evented" && now.Sub(r.lastRelayMessage) > r.o.EventedSilence {
		r.fallBackLocked(fmt.Sprintf("no word from the container event relay for %ds", int(math.Round(r.o.EventedSilence.Seconds()))))
	}
	period := r.periodLocked()
	relist := r.lastRelistAt == nil || now.Sub(*r.lastRelistAt) >= period
	if relist {
		r.lastRelistAt = &now
	}
	ctx := r.ctx
	r.wg.Add(1)
	r.mu.Unlock()
	if relist {
		if _, err := r.pleg.Relist(ctx); err != nil {
			r.log.Warn("PLEG relist failed", "err", err.Error())
		}
	}
	r.wg.Done()
	r.mu.Lock()
	// In evented mode, wake up often enough to notice a silent relay.
	next := r.periodLocked()
	if r.effective == "evented" {
		next = min(next, eventedCheck)
	}
	r.scheduleLocked(next)
	r.mu.Unlock()
}

func (r *Runner) onRelayStatus(s RelayStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.effective != "evented" {
		return
	}
	switch s.State {
	case "streaming":
		r.badStatuses = 0
	case "unsupported":
		r.fallBackLocked("the runtime does not stream container events: " + s.Detail)
	case "reconnecting":
		if r.badStatuses++; r.badStatuses >= 3 {
			r.fallBackLocked("the container event stream keeps failing: " + s.Detail)
		}
	}
}

// containerEvent is a ContainerEventResponse as the relay sends it.
type containerEvent struct {
	ContainerID        string            `json:"containerId"`
	ContainerEventType string            `json:"containerEventType"`
	PodSandboxStatus   json.RawMessage   `json:"podSandboxStatus"`
	ContainersStatuses []json.RawMessage `json:"containersStatuses"`
}

type eventSandbox struct {
	ID       string    `json:"id"`
	Metadata *Metadata `json:"metadata"`
	Network  *struct {
		IP string `json:"ip"`
	} `json:"network"`
}

// OnRuntimeMessage is a message on `cri.<node>.events`: a container event,
// or the relay's status. Ignored while stopped (a standby).
func (r *Runner) OnRuntimeMessage(ctx context.Context, data []byte) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.lastRelayMessage = r.clock.Now()
	evented := r.effective == "evented"
	r.wg.Add(1)
	r.mu.Unlock()
	defer r.wg.Done()
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
	if !evented {
		return
	}
	var e containerEvent
	var sb eventSandbox
	if json.Unmarshal(data, &e) != nil || len(e.PodSandboxStatus) == 0 || json.Unmarshal(e.PodSandboxStatus, &sb) != nil || sb.Metadata == nil || sb.Metadata.UID == "" {
		return
	}
	uid := sb.Metadata.UID
	entry := PodCacheEntry{UID: uid, Name: sb.Metadata.Name, Namespace: sb.Metadata.Namespace, Timestamp: r.pleg.NextTimestamp(0), SandboxStatuses: []json.RawMessage{e.PodSandboxStatus}, ContainerStatuses: e.ContainersStatuses, IPs: []string{}}
	if entry.ContainerStatuses == nil {
		entry.ContainerStatuses = []json.RawMessage{}
	}
	if sb.Network != nil && sb.Network.IP != "" {
		entry.IPs = []string{sb.Network.IP}
	}
	var written bool
	var err error
	if e.ContainerEventType == "CONTAINER_DELETED_EVENT" && e.ContainerID == sb.ID {
		written, err = r.pleg.Forget(ctx, uid, entry.Timestamp)
	} else {
		written, err = r.pleg.Observe(ctx, entry)
	}
	if err != nil {
		r.log.Warn("PLEG: a container event could not be written to the pod cache; the next relist will see the pod", "uid", uid, "err", err.Error())
		return
	}
	if t, ok := eventTypes[e.ContainerEventType]; ok && written {
		r.sink.Publish(ctx, event(uid, t, e.ContainerID))
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
	if _, err := r.pleg.InspectPod(ctx, podUID, syncEnd); err != nil {
		r.log.Warn("PLEG: the inspection a pod worker asked for failed; the next relist will see the pod", "uid", podUID, "err", err.Error())
	}
}
