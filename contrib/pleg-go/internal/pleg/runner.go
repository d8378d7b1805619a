package pleg

// The PLEG's relist loop, as apps/pleg/src/pleg-runner.ts in generic mode:
// relist every RELIST_PERIOD while leading, and inspect one pod at once when
// a pod worker asks (`kubelet.<node>.pleg.inspect.<uid>`). Evented mode
// (the runtime's container events relayed by cri-gateway) is not
// implemented here: the mode command says so (docs/adr/0035).

import (
	"context"
	"sync"
	"time"
)

// Mode is what `kubelet.<node>.service.pleg.mode` and GET /mode answer.
type Mode struct {
	Desired        string `json:"desired"`
	Effective      string `json:"effective"`
	FallbackReason string `json:"fallbackReason,omitempty"`
}

// Runner drives a Generic PLEG.
type Runner struct {
	pleg   *Generic
	clock  Clock
	log    Logger
	period time.Duration

	mu      sync.Mutex
	timer   Timer
	stopped bool
	cancel  context.CancelFunc
	ctx     context.Context
	wg      sync.WaitGroup
}

// NewRunner relists pleg every period once started.
func NewRunner(pleg *Generic, clock Clock, log Logger, period time.Duration) *Runner {
	pleg.RelistPeriodChanged(period)
	return &Runner{pleg: pleg, clock: clock, log: log, period: period, stopped: true}
}

// Mode is the PLEG's mode: generic, always.
func (r *Runner) Mode() Mode { return Mode{Desired: "generic", Effective: "generic"} }

// Start relists at once, then every period.
func (r *Runner) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		return
	}
	r.stopped = false
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.log.Info("PLEG mode", "mode", "generic", "why", "start")
	r.scheduleLocked(0)
}

// Stop stops relisting (a standby does not relist) and waits for the relist in flight.
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

// Running is whether the runner relists (this instance leads).
func (r *Runner) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.stopped
}

func (r *Runner) scheduleLocked(d time.Duration) {
	if r.stopped {
		return
	}
	r.timer = r.clock.AfterFunc(d, r.tick)
}

func (r *Runner) tick() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	ctx := r.ctx
	r.wg.Add(1)
	r.mu.Unlock()
	if _, err := r.pleg.Relist(ctx); err != nil {
		r.log.Warn("PLEG relist failed", "err", err.Error())
	}
	r.wg.Done()
	r.mu.Lock()
	r.scheduleLocked(r.period)
	r.mu.Unlock()
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
