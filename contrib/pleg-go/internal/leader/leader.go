// Package leader is the leader election of the single-active services, as
// libs/leader-election/src/leader-election.ts (after client-go's
// tools/leaderelection), on one key of the `leases` KV bucket,
// `<node>.leader.<service>`; every write is a compare-and-set on its revision.
//
//	standby ── CAS (key absent/released, or unchanged for leaseDuration by OUR clock, or ours) ──▶ leader
//	   ▲                                                                                  │ renew (CAS) every retryPeriod
//	   └──── no successful renewal for renewDeadline, or the CAS lost: step down ◀────────┘
//	Stop() (SIGTERM): stop acting, then delete the key: a standby leads at its next try.
//
// A candidate is one process start (an incarnation); a standby counts the
// lease duration from when IT saw the revision change; the fencing token of
// a term is the revision of the write that won it, and FencingToken() is
// empty the moment this replica may no longer act (docs/adr/0011).
package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Record is the lease's value, as client-go's LeaderElectionRecord.
type Record struct {
	HolderIdentity    string `json:"holderIdentity"`
	HolderIncarnation string `json:"holderIncarnation,omitempty"`
	LeaseDurationMs   int64  `json:"leaseDurationMs"`
	AcquireTime       string `json:"acquireTime"`
	RenewTime         string `json:"renewTime"`
	LeaderTransitions int    `json:"leaderTransitions"`
}

// Snapshot is the lease as read; Record is nil when the key was released.
type Snapshot struct {
	Record   *Record
	Revision uint64
}

// ErrLostRace is a compare-and-set another write came first to.
var ErrLostRace = errors.New("lost the compare-and-set")

// Store is one service's leader lease.
type Store interface {
	// Get returns nil when the key was never written.
	Get(ctx context.Context) (*Snapshot, error)
	// Put writes r if the key is still at revision (0: absent or deleted);
	// ErrLostRace when another write came first.
	Put(ctx context.Context, r Record, revision uint64) (uint64, error)
	// Release deletes the lease if it is still at revision.
	Release(ctx context.Context, revision uint64) error
}

// Clock is time, injected.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) interface{ Stop() bool }
}

// Logger is a structured logger.
type Logger interface {
	Info(msg string, kv ...any)
	Warn(msg string, kv ...any)
}

// Options are client-go's LeaseDuration, RenewDeadline and RetryPeriod, and who this is.
type Options struct {
	Identity      string
	Incarnation   string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// Problem says why options are unsafe ("" when they are fine), in the TypeScript elector's words.
func Problem(o Options) string {
	switch {
	case o.RenewDeadline >= o.LeaseDuration:
		return "the renew deadline (" + ms(o.RenewDeadline) + ") must be shorter than the lease duration (" + ms(o.LeaseDuration) + "), or a deposed leader may still act when a standby takes over"
	case o.RetryPeriod >= o.RenewDeadline:
		return "the retry period (" + ms(o.RetryPeriod) + ") must be shorter than the renew deadline (" + ms(o.RenewDeadline) + "), or a leader steps down before its first retry"
	case o.RetryPeriod <= 0:
		return "the retry period must be positive"
	}
	return ""
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

// Listener hears leadership come and go.
type Listener struct {
	OnStartedLeading func(token uint64)
	OnStoppedLeading func(reason string)
}

type term struct {
	token, revision uint64
	record          Record
	renewedAt       time.Time
}

type observed struct {
	revision      uint64
	holder        string
	ours          bool
	leaseDuration time.Duration
	at            time.Time
}

// Status is what /readyz and /info say of the election (LeadershipInfo).
type Status struct {
	Role     string  `json:"role"`
	Identity string  `json:"identity"`
	Leader   string  `json:"leader,omitempty"`
	Token    *uint64 `json:"token,omitempty"`
	Since    string  `json:"since"`
}

// Elector campaigns for and holds the lease.
type Elector struct {
	store Store
	clock Clock
	log   Logger
	o     Options

	mu        sync.Mutex
	term      *term
	observed  *observed
	listeners []Listener
	nextTry   interface{ Stop() bool }
	deadline  interface{ Stop() bool }
	started   bool
	stopped   bool
	since     time.Time
	round     sync.Mutex
}

// New makes an elector; Problem(o) must be "".
func New(store Store, clock Clock, log Logger, o Options) *Elector {
	if o.Incarnation == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		o.Incarnation = hex.EncodeToString(b)
	}
	return &Elector{store: store, clock: clock, log: log, o: o, since: clock.Now()}
}

// FencingToken is the current term's token while this replica may act as leader.
func (e *Elector) FencingToken() (uint64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tokenLocked()
}

func (e *Elector) tokenLocked() (uint64, bool) {
	t := e.term
	if t != nil && e.clock.Now().Before(t.renewedAt.Add(e.o.RenewDeadline)) {
		return t.token, true
	}
	return 0, false
}

// Status is the election as /info shows it.
func (e *Elector) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := Status{Role: "standby", Identity: e.o.Identity, Since: iso(e.since)}
	if tok, ok := e.tokenLocked(); ok {
		s.Role, s.Leader, s.Token = "leader", e.o.Identity, &tok
	} else if e.observed != nil {
		s.Leader = e.observed.holder
	}
	return s
}

// Subscribe registers a listener; before Start.
func (e *Elector) Subscribe(l Listener) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.listeners = append(e.listeners, l)
}

// Start campaigns, at once.
func (e *Elector) Start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started || e.stopped {
		return
	}
	e.started = true
	e.scheduleLocked(0)
}

// Stop stops campaigning; a leader stops acting (listeners called) and then
// deletes the lease, so a standby takes over at its next try.
func (e *Elector) Stop(ctx context.Context) {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return
	}
	e.stopped = true
	if e.nextTry != nil {
		e.nextTry.Stop()
	}
	e.mu.Unlock()
	e.round.Lock() // the round in flight, if any, ends first
	defer e.round.Unlock()
	e.mu.Lock()
	t := e.term
	if t == nil {
		e.mu.Unlock()
		return
	}
	e.endTermLocked()
	ls := append([]Listener{}, e.listeners...)
	e.mu.Unlock()
	for _, l := range ls {
		if l.OnStoppedLeading != nil {
			l.OnStoppedLeading("shutting down")
		}
	}
	if err := e.store.Release(ctx, t.revision); err != nil {
		e.log.Warn("could not release the leader lease; a standby takes over when it expires", "err", err.Error())
		return
	}
	e.log.Info("released the leader lease", "token", t.token)
}

func (e *Elector) scheduleLocked(d time.Duration) {
	if e.nextTry != nil {
		e.nextTry.Stop()
	}
	if e.stopped {
		return
	}
	e.nextTry = e.clock.AfterFunc(d, e.tryOnce)
}

func (e *Elector) tryOnce() {
	if !e.round.TryLock() {
		return
	}
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		e.round.Unlock()
		return
	}
	t := e.term
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	var err error
	if t != nil {
		e.renew(ctx, t)
	} else {
		err = e.campaign(ctx)
	}
	cancel()
	if err != nil {
		e.log.Warn("leader election round failed", "err", err.Error())
	}
	e.mu.Lock()
	if !e.stopped {
		e.scheduleLocked(e.nextDelayLocked())
	}
	e.mu.Unlock()
	e.round.Unlock()
}

// nextDelayLocked: a leader renews every retry period; a standby looks every
// retry period, or at the moment the lease it saw expires.
func (e *Elector) nextDelayLocked() time.Duration {
	o := e.observed
	if e.term != nil || o == nil || o.holder == "" || o.ours {
		return e.o.RetryPeriod
	}
	until := o.at.Add(o.leaseDuration).Sub(e.clock.Now())
	if until > 0 {
		return min(e.o.RetryPeriod, until)
	}
	return e.o.RetryPeriod
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (e *Elector) renew(ctx context.Context, t *term) {
	startedAt := e.clock.Now()
	rec := t.record
	rec.RenewTime = iso(startedAt)
	rev, err := e.store.Put(ctx, rec, t.revision)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil && !errors.Is(err, ErrLostRace) {
		// Try again at the next retry; the deadline timer steps down if this lasts.
		e.log.Warn("could not renew the leader lease", "err", err.Error())
		return
	}
	if e.term != t {
		return // stepped down meanwhile
	}
	if err != nil {
		e.stepDownLocked("the leader lease was taken by another replica")
		return
	}
	t.revision, t.record, t.renewedAt = rev, rec, startedAt
	e.observed = &observed{revision: rev, holder: rec.HolderIdentity, ours: true, leaseDuration: time.Duration(rec.LeaseDurationMs) * time.Millisecond, at: e.clock.Now()}
	e.armDeadlineLocked(t)
}

func (e *Elector) isOurs(r *Record) bool {
	return r.HolderIdentity == e.o.Identity && r.HolderIncarnation == e.o.Incarnation
}

func (e *Elector) campaign(ctx context.Context) error {
	snap, err := e.store.Get(ctx)
	if err != nil {
		return err
	}
	seenAt := e.clock.Now()
	if snap == nil || snap.Record == nil {
		var rev uint64
		if snap != nil {
			rev = snap.Revision
		}
		return e.acquire(ctx, rev, nil)
	}
	r := snap.Record
	ours := e.isOurs(r)
	e.mu.Lock()
	if e.observed == nil || e.observed.revision != snap.Revision {
		if e.observed == nil || e.observed.holder != r.HolderIdentity {
			e.log.Info("leader seen", "leader", r.HolderIdentity, "incarnation", r.HolderIncarnation)
		}
		e.observed = &observed{revision: snap.Revision, holder: r.HolderIdentity, ours: ours, leaseDuration: time.Duration(r.LeaseDurationMs) * time.Millisecond, at: seenAt}
	}
	expired := !seenAt.Before(e.observed.at.Add(time.Duration(r.LeaseDurationMs) * time.Millisecond))
	e.mu.Unlock()
	if ours || expired {
		return e.acquire(ctx, snap.Revision, r)
	}
	return nil
}

func (e *Elector) acquire(ctx context.Context, revision uint64, previous *Record) error {
	startedAt := e.clock.Now()
	at := iso(startedAt)
	transitions := 0
	if previous != nil {
		transitions = previous.LeaderTransitions
		if !e.isOurs(previous) {
			transitions++
		}
	}
	rec := Record{HolderIdentity: e.o.Identity, HolderIncarnation: e.o.Incarnation, LeaseDurationMs: e.o.LeaseDuration.Milliseconds(), AcquireTime: at, RenewTime: at, LeaderTransitions: transitions}
	won, err := e.store.Put(ctx, rec, revision)
	if errors.Is(err, ErrLostRace) {
		return nil // another replica wrote first; the next look sees it
	}
	if err != nil {
		return err
	}
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return e.store.Release(ctx, won)
	}
	e.observed = &observed{revision: won, holder: rec.HolderIdentity, ours: true, leaseDuration: e.o.LeaseDuration, at: e.clock.Now()}
	t := &term{token: won, revision: won, record: rec, renewedAt: startedAt}
	e.term = t
	e.since = e.clock.Now()
	e.armDeadlineLocked(t)
	ls := append([]Listener{}, e.listeners...)
	e.mu.Unlock()
	prev := ""
	if previous != nil {
		prev = previous.HolderIdentity
	}
	e.log.Info("became the leader", "token", won, "previous", prev, "transitions", transitions)
	for _, l := range ls {
		if l.OnStartedLeading != nil {
			go l.OnStartedLeading(won)
		}
	}
	return nil
}

func (e *Elector) armDeadlineLocked(t *term) {
	if e.deadline != nil {
		e.deadline.Stop()
	}
	e.deadline = e.clock.AfterFunc(t.renewedAt.Add(e.o.RenewDeadline).Sub(e.clock.Now()), func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.term == t {
			e.stepDownLocked("no successful renewal within the renew deadline (" + ms(e.o.RenewDeadline) + ")")
		}
	})
}

func (e *Elector) stepDownLocked(reason string) {
	e.endTermLocked()
	e.log.Warn("stopped leading", "reason", reason)
	for _, l := range e.listeners {
		if l.OnStoppedLeading != nil {
			go l.OnStoppedLeading(reason)
		}
	}
}

func (e *Elector) endTermLocked() {
	e.term = nil
	if e.deadline != nil {
		e.deadline.Stop()
	}
	e.since = e.clock.Now()
}
