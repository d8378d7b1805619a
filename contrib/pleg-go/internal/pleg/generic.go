package pleg

// The generic PLEG (pkg/kubelet/pleg/generic.go), as apps/pleg/src/generic-pleg.ts:
// relist every period, compare each pod with the last relist, inspect the
// pods that changed (and those whose inspection failed last time), write
// their statuses to the pod cache, send the events, advance the cache's
// clock. Unlike upstream, each pod's inspection has its own timeout and a
// few pods are inspected at once (kubernetes#94829), and one pod can be
// inspected at once outside the relist (InspectPod, docs/adr/0017). Every
// write goes through CacheWriter; a pod's events are computed against the
// view its last write came from, when that write is made, so a transition
// is reported once.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options are the generic PLEG's settings.
type Options struct {
	InspectTimeout     time.Duration
	InspectConcurrency int
	RelistThreshold    time.Duration
	// Node: only pods this node's stack made (LabelNode); all pods when empty.
	Node string
}

// Deps are what the generic PLEG works with.
type Deps struct {
	Runtime Runtime
	Cache   PodCacheStore
	Sink    EventSink
	Clock   Clock
	Logger  Logger
	Metrics Metrics    // optional
	Files   FileReader // optional: without it, messages are the runtime's alone
	// Traced gives each changed pod of a relist a trace of its own (its CRI
	// calls and its events are hops under it). Optional.
	Traced func(ctx context.Context, podUID string) context.Context
}

// RelistResult says what one relist did.
type RelistResult struct {
	Events    []Event
	Inspected []string
	Failed    []string
}

// InspectResult says what one immediate inspection did.
type InspectResult struct {
	Timestamp int64
	Written   bool
	Events    []Event
}

// syncEndSlackMs: how far a pod worker's sync end may lie ahead of this
// clock for an inspection to be stamped just after it.
const syncEndSlackMs = 1

// Generic is the generic PLEG.
type Generic struct {
	d      Deps
	o      Options
	writer *CacheWriter

	mu          sync.Mutex
	records     map[string]*PodView
	toReinspect map[string]bool
	// absent: pods an inspection found nothing of in the runtime, written as
	// empty entries until a relist removes them (InspectPod).
	absent        map[string]bool
	lastTimestamp int64
	lastRelistAt  *time.Time
	// lastGlobal is the cache's time as the last successful relist wrote it
	// (UpdateTime); 0: none known.
	lastGlobal int64
	// graceFrom: since when a shortened threshold counts (RelistPeriodChanged);
	// zero: since the last relist.
	graceFrom       time.Time
	lastRelistStart *time.Time
	relisting       bool
	relistThreshold time.Duration
	lastRelistError string
	inFlight        map[int64]int

	// globalMu orders the writes of `<node>.global`: the widened threshold
	// (RelistPeriodChanged, written in the background) must never land after
	// a newer relist's time and put the cache's clock back.
	globalMu sync.Mutex
	// writtenThreshold is the relist threshold `<node>.global` carries (a
	// widened one after a fallback), for the heartbeat to write again.
	writtenThreshold time.Duration
}

// NewGeneric makes a generic PLEG.
func NewGeneric(d Deps, o Options) *Generic {
	if o.InspectConcurrency < 1 {
		o.InspectConcurrency = 1
	}
	return &Generic{d: d, o: o, writer: NewCacheWriter(d.Cache), records: map[string]*PodView{}, toReinspect: map[string]bool{}, absent: map[string]bool{}, relistThreshold: o.RelistThreshold, inFlight: map[int64]int{}}
}

// RelistPeriodChanged is told the relist period changed (evented mode
// relists every 5 minutes): the health threshold becomes at least twice the
// period, as upstream's eventedPlegRelistThreshold (10m) is to its
// eventedPlegRelistPeriod (5m).
//
// A shorter threshold (evented mode fell back) counts from now, not from a
// relist up to 5 minutes old, so neither this PLEG's health nor the sync
// loop's gate (the threshold written beside the cache's time) trips before
// the relist that runs at once could; a relist that keeps failing still
// does. The widened threshold is written to `<node>.global` in the
// background (the caller holds the runner's lock; ours does not wait either).
func (g *Generic) RelistPeriodChanged(period time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	threshold := max(g.o.RelistThreshold, 2*period)
	if threshold < g.relistThreshold && g.lastGlobal != 0 {
		now := g.d.Clock.Now()
		g.graceFrom = now
		ts := g.lastGlobal
		widened := WidenedThreshold(ts, now, threshold)
		go g.writeWidenedThreshold(ts, widened)
	}
	g.relistThreshold = threshold
}

// WidenedThreshold is the threshold that, written beside the cache's time
// relistedAt (ms), lets the sync loop's gate trip only `threshold` after now.
func WidenedThreshold(relistedAt int64, now time.Time, threshold time.Duration) time.Duration {
	return now.Sub(time.UnixMilli(relistedAt)) + threshold
}

func (g *Generic) writeWidenedThreshold(ts int64, threshold time.Duration) {
	g.globalMu.Lock()
	defer g.globalMu.Unlock()
	g.mu.Lock()
	superseded := g.lastGlobal != ts
	g.mu.Unlock()
	if superseded {
		return // a relist wrote a newer time, with the threshold of now
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.d.Cache.UpdateGlobal(ctx, g.global(ts, threshold)); err != nil {
		g.d.Logger.Warn("PLEG: the shorter relist threshold could not be written to the pod cache", "err", err.Error())
		return
	}
	g.mu.Lock()
	g.writtenThreshold = threshold
	g.mu.Unlock()
}

// global is the `<node>.global` record for the cache's time ts and the
// relist threshold, with a sign of life of now.
func (g *Generic) global(ts int64, threshold time.Duration) PodCacheGlobal {
	thresholdMs, aliveAt, aliveThresholdMs := threshold.Milliseconds(), g.d.Clock.Now().UnixMilli(), g.o.RelistThreshold.Milliseconds()
	return PodCacheGlobal{Timestamp: ts, RelistThresholdMs: &thresholdMs, AliveAt: &aliveAt, AliveThresholdMs: &aliveThresholdMs}
}

// HeartbeatPeriod is how often evented mode must show it is alive
// (Heartbeat) for the sync loop's gate to see it within RELIST_THRESHOLD: a
// third of it, between 1 and 10 seconds.
func (g *Generic) HeartbeatPeriod() time.Duration {
	return min(10*time.Second, max(time.Second, (g.o.RelistThreshold/3).Truncate(time.Millisecond)))
}

// Heartbeat is a sign of life between relists (evented mode relists every
// 5 minutes): `<node>.global` written again with the same time and
// threshold and a new aliveAt, so that a PLEG that stops is noticed within
// RELIST_THRESHOLD. Nothing before a relist time is known. The cache's time
// does not move: no pod worker waiting for news is released.
func (g *Generic) Heartbeat(ctx context.Context) error {
	g.globalMu.Lock()
	defer g.globalMu.Unlock()
	g.mu.Lock()
	ts, threshold := g.lastGlobal, max(g.relistThreshold, g.writtenThreshold)
	g.mu.Unlock()
	if ts == 0 {
		return nil
	}
	return g.d.Cache.UpdateGlobal(ctx, g.global(ts, threshold))
}

// Restore brings the previous view back from the cache, so the first relist
// reports only what changed while the PLEG was away. Returns how many pods.
func (g *Generic) Restore(ctx context.Context) (int, error) {
	entries, global, err := g.d.Cache.Load(ctx)
	if err != nil {
		return 0, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.records = map[string]*PodView{}
	g.toReinspect = map[string]bool{}
	g.absent = map[string]bool{}
	g.lastRelistAt = nil
	g.lastTimestamp = max(g.lastTimestamp, global)
	g.lastGlobal = global
	for _, e := range entries {
		// An empty entry is a pod its predecessor found nothing of: the next relist removes it if that still holds.
		if IsEmptyEntry(e) {
			g.absent[e.UID] = true
		} else {
			g.records[e.UID] = ViewFromCache(e)
		}
		g.lastTimestamp = max(g.lastTimestamp, e.Timestamp)
	}
	g.writer.Restore(entries)
	return len(entries), nil
}

// Healthy is Healthy(): the last successful relist is within the threshold.
func (g *Generic) Healthy() (bool, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	failing := ""
	if g.lastRelistError != "" {
		failing = "; relist failing: " + g.lastRelistError
	}
	if g.lastRelistAt == nil {
		return true, "no relist yet" + failing
	}
	now := g.d.Clock.Now()
	age := now.Sub(*g.lastRelistAt)
	since := *g.lastRelistAt
	if g.graceFrom.After(since) {
		since = g.graceFrom
	}
	if now.Sub(since) > g.relistThreshold {
		return false, fmt.Sprintf("pleg was last seen active %ds ago; threshold is %ds%s", int(math.Round(age.Seconds())), int(math.Round(g.relistThreshold.Seconds())), failing)
	}
	return true, fmt.Sprintf("last relist %dms ago%s", age.Milliseconds(), failing)
}

// LastSeen is when the last successful relist finished.
func (g *Generic) LastSeen() (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lastRelistAt == nil {
		return time.Time{}, false
	}
	return *g.lastRelistAt, true
}

// NextTimestamp is a cache timestamp (ms) that never goes back, at least atLeast.
func (g *Generic) NextTimestamp(atLeast int64) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.nextTimestampLocked(atLeast)
}

func (g *Generic) nextTimestampLocked(atLeast int64) int64 {
	g.lastTimestamp = max(g.d.Clock.Now().UnixMilli(), g.lastTimestamp+1, atLeast)
	return g.lastTimestamp
}

func (g *Generic) done(ts int64) {
	g.mu.Lock()
	if g.inFlight[ts]--; g.inFlight[ts] <= 0 {
		delete(g.inFlight, ts)
	}
	oldest, has := int64(math.MaxInt64), false
	for t := range g.inFlight {
		oldest, has = min(oldest, t), true
	}
	g.mu.Unlock()
	g.writer.Prune(oldest, has)
}

// record returns the pod's events since the view last recorded and records
// the new one (nil: the pod is gone). Called while the pod's write holds its lock.
func (g *Generic) record(uid string, view *PodView) []Event {
	g.mu.Lock()
	defer g.mu.Unlock()
	events := PodEvents(uid, g.records[uid], view)
	if view != nil {
		g.records[uid] = view
	} else {
		delete(g.records, uid)
	}
	delete(g.toReinspect, uid)
	return events
}

func (g *Generic) publish(ctx context.Context, events []Event) {
	discarded := 0
	for _, e := range events {
		if !g.d.Sink.Publish(ctx, e) {
			discarded++
		}
	}
	if discarded > 0 && g.d.Metrics != nil {
		g.d.Metrics.Discarded(discarded)
	}
}

type listSandboxes struct {
	Items []Sandbox `json:"items"`
}
type listContainers struct {
	Containers []Container `json:"containers"`
}

func (g *Generic) list(ctx context.Context, filter any) ([]Sandbox, []Container, error) {
	var sb listSandboxes
	var cs listContainers
	var sbErr, csErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); sbErr = g.d.Runtime.Call(ctx, "ListPodSandbox", filter, &sb) }()
	go func() { defer wg.Done(); csErr = g.d.Runtime.Call(ctx, "ListContainers", filter, &cs) }()
	wg.Wait()
	if err := errors.Join(sbErr, csErr); err != nil {
		return nil, nil, err
	}
	return sb.Items, cs.Containers, nil
}

// InspectPod inspects one pod now, as a relist would, without waiting for
// the next one: a pod worker changed it in a sync that ended at syncEnd
// (ms). The entry is stamped after syncEnd unless syncEnd is ahead of this
// clock by more than its resolution. Errors when the runtime cannot be read.
func (g *Generic) InspectPod(ctx context.Context, uid string, syncEnd int64) (InspectResult, error) {
	g.mu.Lock()
	now := g.d.Clock.Now().UnixMilli()
	atLeast := int64(0)
	if syncEnd < now+syncEndSlackMs {
		atLeast = syncEnd + 1
	}
	ts := g.nextTimestampLocked(atLeast)
	g.inFlight[ts]++
	g.mu.Unlock()
	defer g.done(ts)

	var view *PodView
	var entry PodCacheEntry
	// The runtime's reads are bounded; the write is not cut short (its events would be lost).
	err := g.withTimeout(ctx, uid, func(ctx context.Context) error {
		filter := map[string]any{"filter": map[string]any{"labelSelector": map[string]string{LabelPodUID: uid}}}
		sandboxes, containers, err := g.list(ctx, filter)
		if err != nil {
			return err
		}
		view = GroupByPod(sandboxes, containers, g.o.Node)[uid]
		if view != nil {
			entry, err = g.inspect(ctx, view, ts)
		}
		return err
	})
	if err != nil {
		return InspectResult{Timestamp: ts}, err
	}
	var events []Event
	onWritten := func() {
		g.mu.Lock()
		if view == nil {
			g.absent[uid] = true
		} else {
			delete(g.absent, uid)
		}
		g.mu.Unlock()
		events = g.record(uid, view)
	}
	if view == nil {
		// Nothing in the runtime: an empty entry, not a removal, so that the pod worker waiting for news of the
		// pod newer than its sync gets it now (a removal is no news for a key the cache never had: it waits for
		// the next relist, 5 minutes in evented mode). The next relist removes it if the runtime still has nothing.
		entry = AbsentEntry(uid, ts)
	}
	written, err := g.writer.Set(ctx, entry, onWritten)
	if err != nil {
		return InspectResult{Timestamp: ts}, err
	}
	if written {
		g.publish(ctx, events)
	}
	return InspectResult{Timestamp: ts, Written: written, Events: events}, nil
}

// Relist is one relist. Errors when the runtime cannot be listed.
func (g *Generic) Relist(ctx context.Context) (RelistResult, error) {
	g.mu.Lock()
	if g.relisting {
		g.mu.Unlock()
		return RelistResult{}, nil
	}
	g.relisting = true
	started := g.d.Clock.Now()
	ts := g.nextTimestampLocked(0)
	g.inFlight[ts]++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.relisting = false
		g.mu.Unlock()
		g.done(ts)
	}()
	fail := func(err error) (RelistResult, error) {
		g.mu.Lock()
		g.lastRelistError = err.Error()
		g.mu.Unlock()
		return RelistResult{}, err
	}

	sandboxes, containers, err := g.list(ctx, map[string]any{})
	if err != nil {
		return fail(err)
	}
	current := GroupByPod(sandboxes, containers, g.o.Node)

	g.mu.Lock()
	uids := map[string]bool{}
	for uid := range g.records {
		uids[uid] = true
	}
	for uid := range current {
		uids[uid] = true
	}
	for uid := range g.absent {
		uids[uid] = true
	}
	var changed []string
	for uid := range uids {
		if g.toReinspect[uid] || g.absent[uid] || len(PodEvents(uid, g.records[uid], current[uid])) > 0 {
			changed = append(changed, uid)
		}
	}
	g.mu.Unlock()
	sort.Strings(changed)

	var res RelistResult
	var resMu sync.Mutex
	type podEvents struct {
		ctx    context.Context
		events []Event
	}
	perPod := map[string]podEvents{}
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(g.o.InspectConcurrency, len(changed)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for uid := range work {
				pctx := ctx
				if g.d.Traced != nil {
					pctx = g.d.Traced(ctx, uid)
				}
				events, ok := g.inspectChanged(pctx, uid, current[uid], ts)
				resMu.Lock()
				if ok {
					res.Inspected = append(res.Inspected, uid)
					perPod[uid] = podEvents{pctx, events}
				} else {
					res.Failed = append(res.Failed, uid)
				}
				resMu.Unlock()
			}
		}()
	}
	for _, uid := range changed {
		work <- uid
	}
	close(work)
	wg.Wait()

	for _, uid := range changed {
		if p, ok := perPod[uid]; ok && len(p.events) > 0 {
			res.Events = append(res.Events, p.events...)
			g.publish(p.ctx, p.events)
		}
	}
	// The threshold of now, not of when the relist began: a fallback during it shortened it.
	g.globalMu.Lock()
	g.mu.Lock()
	threshold := g.relistThreshold
	g.mu.Unlock()
	err = g.d.Cache.UpdateGlobal(ctx, g.global(ts, threshold))
	if err == nil {
		g.mu.Lock()
		g.lastGlobal, g.writtenThreshold = ts, threshold
		g.mu.Unlock()
	}
	g.globalMu.Unlock()
	if err != nil {
		return fail(err)
	}
	finished := g.d.Clock.Now()
	g.mu.Lock()
	if g.d.Metrics != nil {
		var interval time.Duration
		if g.lastRelistStart != nil {
			interval = started.Sub(*g.lastRelistStart)
		}
		g.d.Metrics.Relisted(finished.Sub(started), interval, g.lastRelistStart != nil, finished)
	}
	g.lastRelistStart = &started
	g.lastRelistAt = &finished
	g.lastRelistError = ""
	g.mu.Unlock()
	return res, nil
}

// inspectChanged inspects one changed pod into the cache; its events are
// returned once the cache has it. ok is false when the inspection failed
// (the pod is inspected again on the next relist). An inspection newer than
// this relist may have written the pod meanwhile: then nothing is written
// and no event sent for the pod.
func (g *Generic) inspectChanged(ctx context.Context, uid string, view *PodView, ts int64) ([]Event, bool) {
	var events []Event
	onWritten := func() {
		g.mu.Lock()
		delete(g.absent, uid)
		g.mu.Unlock()
		events = g.record(uid, view)
	}
	var err error
	if view == nil {
		_, err = g.writer.Delete(ctx, uid, ts, onWritten)
	} else {
		var entry PodCacheEntry
		err = g.withTimeout(ctx, uid, func(ctx context.Context) error {
			var e error
			entry, e = g.inspect(ctx, view, ts)
			return e
		})
		if err == nil {
			_, err = g.writer.Set(ctx, entry, onWritten)
		}
	}
	if err != nil {
		g.mu.Lock()
		g.toReinspect[uid] = true
		g.mu.Unlock()
		g.d.Logger.Warn("PLEG: pod inspection failed; will retry on the next relist", "uid", uid, "err", err.Error())
		return nil, false
	}
	return events, true
}

// sandboxStatusView is the part of a PodSandboxStatus read here.
type sandboxStatusView struct {
	ID        string          `json:"id"`
	State     string          `json:"state"`
	CreatedAt json.RawMessage `json:"createdAt"`
	Network   *struct {
		IP            string `json:"ip"`
		AdditionalIPs []struct {
			IP string `json:"ip"`
		} `json:"additionalIps"`
	} `json:"network"`
}

type statusReply struct {
	Status json.RawMessage `json:"status"`
}

func int64Of(raw json.RawMessage) int64 {
	n, _ := strconv.ParseInt(strings.Trim(string(raw), `"`), 10, 64)
	return n
}

// inspect is GetPodStatus: every sandbox's and container's status, as one entry.
func (g *Generic) inspect(ctx context.Context, view *PodView, ts int64) (PodCacheEntry, error) {
	type sb struct {
		raw json.RawMessage
		v   sandboxStatusView
	}
	var sandboxes []sb
	for _, id := range view.SandboxIDs {
		var r statusReply
		if err := g.d.Runtime.Call(ctx, "PodSandboxStatus", map[string]string{"podSandboxId": id}, &r); err != nil {
			return PodCacheEntry{}, err
		}
		if len(r.Status) == 0 || string(r.Status) == "null" {
			continue
		}
		var v sandboxStatusView
		_ = json.Unmarshal(r.Status, &v)
		sandboxes = append(sandboxes, sb{r.Status, v})
	}
	sort.SliceStable(sandboxes, func(i, j int) bool { return int64Of(sandboxes[i].v.CreatedAt) > int64Of(sandboxes[j].v.CreatedAt) })
	containers := []json.RawMessage{}
	for _, id := range view.ContainerIDs {
		var r statusReply
		if err := g.d.Runtime.Call(ctx, "ContainerStatus", map[string]string{"containerId": id}, &r); err != nil {
			return PodCacheEntry{}, err
		}
		if len(r.Status) == 0 || string(r.Status) == "null" {
			continue
		}
		st := r.Status
		if g.d.Files != nil {
			st = WithTerminationMessage(st, g.d.Files)
		}
		containers = append(containers, st)
	}
	entry := PodCacheEntry{UID: view.UID, Name: view.Name, Namespace: view.Namespace, Timestamp: ts, SandboxStatuses: []json.RawMessage{}, ContainerStatuses: containers, IPs: []string{}}
	readyFound := false
	for _, s := range sandboxes {
		entry.SandboxStatuses = append(entry.SandboxStatuses, s.raw)
		if !readyFound && s.v.State == "SANDBOX_READY" {
			readyFound = true
			if s.v.Network != nil && s.v.Network.IP != "" {
				entry.IPs = append(entry.IPs, s.v.Network.IP)
				for _, a := range s.v.Network.AdditionalIPs {
					entry.IPs = append(entry.IPs, a.IP)
				}
			}
		}
	}
	return entry, nil
}

// errInspectTimeout is an inspection that took longer than InspectTimeout.
type errInspectTimeout struct {
	uid string
	d   time.Duration
}

func (e errInspectTimeout) Error() string {
	return fmt.Sprintf("inspecting pod %s took longer than %dms", e.uid, e.d.Milliseconds())
}

// withTimeout runs f, giving up after InspectTimeout by the injected clock
// (f's context is cancelled then; a write it still makes is checked by the
// writer as any other).
func (g *Generic) withTimeout(ctx context.Context, uid string, f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	timedOut := make(chan struct{})
	t := g.d.Clock.AfterFunc(g.o.InspectTimeout, func() { close(timedOut) })
	defer t.Stop()
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		return err
	case <-timedOut:
		return errInspectTimeout{uid, g.o.InspectTimeout}
	}
}

// ViewFromCache is the view a cache entry implies.
func ViewFromCache(e PodCacheEntry) *PodView {
	v := &PodView{UID: e.UID, Name: e.Name, Namespace: e.Namespace, States: map[string]State{}}
	for _, raw := range e.SandboxStatuses {
		var s sandboxStatusView
		if json.Unmarshal(raw, &s) == nil {
			v.States[s.ID] = ContainerState(s.State)
			v.SandboxIDs = append(v.SandboxIDs, s.ID)
		}
	}
	for _, raw := range e.ContainerStatuses {
		var c containerStatusView
		if json.Unmarshal(raw, &c) == nil {
			v.States[c.ID] = ContainerState(c.State)
			v.ContainerIDs = append(v.ContainerIDs, c.ID)
		}
	}
	return v
}

// AbsentEntry is the entry of a pod the runtime has nothing of, as of ts
// (ms): no sandboxes, no containers. Byte for byte ours (absentEntry): the
// empty lists are `[]`, never null.
func AbsentEntry(uid string, ts int64) PodCacheEntry {
	return PodCacheEntry{UID: uid, Timestamp: ts, SandboxStatuses: []json.RawMessage{}, ContainerStatuses: []json.RawMessage{}, IPs: []string{}}
}

// IsEmptyEntry says whether an entry says the runtime had nothing of the pod.
func IsEmptyEntry(e PodCacheEntry) bool {
	return len(e.SandboxStatuses) == 0 && len(e.ContainerStatuses) == 0
}
