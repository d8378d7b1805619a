package pleg

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sandbox(id, uid, state string, created int64, ip string) map[string]any {
	return map[string]any{"id": id, "state": state, "createdAt": created, "ip": ip, "metadata": map[string]any{"name": "web", "namespace": "default", "uid": uid},
		"labels": map[string]any{LabelPodUID: uid, LabelPodName: "web", LabelPodNamespace: "default", LabelNode: "n1"}}
}

func container(id, uid, state string) map[string]any {
	return map[string]any{"id": id, "state": state, "exitCode": 0, "labels": map[string]any{LabelPodUID: uid, LabelNode: "n1"}}
}

type rig struct {
	rt    *fakeRuntime
	cache *fakeCache
	sink  *fakeSink
	clock *fakeClock
	g     *Generic
}

func newRig() *rig {
	r := &rig{rt: &fakeRuntime{fail: map[string]error{}, block: map[string]chan struct{}{}}, cache: newFakeCache(), sink: &fakeSink{}, clock: newFakeClock()}
	r.g = NewGeneric(Deps{Runtime: r.rt, Cache: r.cache, Sink: r.sink, Clock: r.clock, Logger: nopLogger{}}, Options{InspectTimeout: 5 * time.Second, InspectConcurrency: 2, RelistThreshold: 3 * time.Minute, Node: "n1"})
	return r
}

func types(es []Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.EventType)+" "+e.Data)
	}
	return out
}

func TestRelistLifecycle(t *testing.T) {
	r := newRig()
	ctx := context.Background()
	steps := []struct {
		name       string
		sandboxes  []map[string]any
		containers []map[string]any
		want       []string
		cached     bool
	}{
		{"a new pod: its sandbox and container started", []map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "10.0.0.5")}, []map[string]any{container("c1", "u1", "CONTAINER_RUNNING")}, []string{"ContainerStarted s1", "ContainerStarted c1"}, true},
		{"nothing changed: no events", []map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "10.0.0.5")}, []map[string]any{container("c1", "u1", "CONTAINER_RUNNING")}, nil, true},
		{"the container exited", []map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "10.0.0.5")}, []map[string]any{container("c1", "u1", "CONTAINER_EXITED")}, []string{"ContainerDied c1"}, true},
		{"restarted: the old one removed, a new one started", []map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "10.0.0.5")}, []map[string]any{container("c2", "u1", "CONTAINER_RUNNING")}, []string{"ContainerRemoved c1", "ContainerStarted c2"}, true},
		{"the pod gone from the runtime: removed from the cache", nil, nil, []string{"ContainerDied s1", "ContainerRemoved s1", "ContainerDied c2", "ContainerRemoved c2"}, false},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r.rt.set(s.sandboxes, s.containers)
			r.clock.Step(time.Second)
			res, err := r.g.Relist(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := types(r.sink.take()); !reflect.DeepEqual(got, s.want) {
				t.Fatalf("events %v, want %v", got, s.want)
			}
			if !reflect.DeepEqual(types(res.Events), s.want) {
				t.Fatalf("result events %v", types(res.Events))
			}
			_, cached := r.cache.entries["u1"]
			if cached != s.cached {
				t.Fatalf("cached %v, want %v", cached, s.cached)
			}
			if r.cache.global != r.clock.Now().UnixMilli() {
				t.Fatalf("the cache's clock is the relist's: %d", r.cache.global)
			}
		})
	}
}

func TestCacheEntryShape(t *testing.T) {
	r := newRig()
	r.rt.set([]map[string]any{sandbox("old", "u1", "SANDBOX_NOTREADY", 1, ""), sandbox("new", "u1", "SANDBOX_READY", 2, "10.0.0.7")}, []map[string]any{container("c1", "u1", "CONTAINER_RUNNING")})
	if _, err := r.g.Relist(context.Background()); err != nil {
		t.Fatal(err)
	}
	e := r.cache.entries["u1"]
	var ids []string
	for _, raw := range e.SandboxStatuses {
		var s struct{ ID string }
		_ = json.Unmarshal(raw, &s)
		ids = append(ids, s.ID)
	}
	if !reflect.DeepEqual(ids, []string{"new", "old"}) || !reflect.DeepEqual(e.IPs, []string{"10.0.0.7"}) || e.Name != "web" || e.Namespace != "default" || e.Timestamp != r.clock.Now().UnixMilli() {
		t.Fatalf("sandboxes newest first, the ready one's IP, the relist's timestamp: %+v %v", e, ids)
	}
	b, _ := json.Marshal(e)
	for _, key := range []string{`"uid":"u1"`, `"sandboxStatuses":[`, `"containerStatuses":[`, `"ips":["10.0.0.7"]`, `"timestamp":`} {
		if !strings.Contains(string(b), key) {
			t.Fatalf("%s not in %s", key, b)
		}
	}
	// The sandbox stopped: no ready sandbox, no IPs from the runtime, the previous ones kept (getPodIPs).
	r.rt.set([]map[string]any{sandbox("new", "u1", "SANDBOX_NOTREADY", 2, "")}, []map[string]any{container("c1", "u1", "CONTAINER_EXITED")})
	r.clock.Step(time.Second)
	if _, err := r.g.Relist(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.cache.entries["u1"].IPs; !reflect.DeepEqual(got, []string{"10.0.0.7"}) {
		t.Fatalf("IPs kept across the sandbox's stop: %v", got)
	}
}

func TestFailedInspectionIsRetriedAndItsEventsWait(t *testing.T) {
	r := newRig()
	r.rt.set([]map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "")}, []map[string]any{container("c1", "u1", "CONTAINER_RUNNING")})
	r.rt.fail["ContainerStatus"] = &CriError{Code: "Unavailable", Description: "down"}
	res, err := r.g.Relist(context.Background())
	if err != nil || !reflect.DeepEqual(res.Failed, []string{"u1"}) || len(r.sink.take()) != 0 {
		t.Fatalf("failed inspection: %+v %v", res, err)
	}
	delete(r.rt.fail, "ContainerStatus")
	r.clock.Step(time.Second)
	res, _ = r.g.Relist(context.Background())
	if !reflect.DeepEqual(res.Inspected, []string{"u1"}) || !reflect.DeepEqual(types(r.sink.take()), []string{"ContainerStarted s1", "ContainerStarted c1"}) {
		t.Fatalf("reinspected next relist with its events: %+v", res)
	}
}

func TestRelistFailureShowsInHealth(t *testing.T) {
	r := newRig()
	if ok, detail := r.g.Healthy(); !ok || detail != "no relist yet" {
		t.Fatalf("%v %s", ok, detail)
	}
	if _, err := r.g.Relist(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.rt.fail["ListContainers"] = errors.New("gateway gone")
	r.clock.Step(2 * time.Minute)
	if _, err := r.g.Relist(context.Background()); err == nil {
		t.Fatal("a relist that cannot list fails")
	}
	if ok, detail := r.g.Healthy(); !ok || !strings.Contains(detail, "relist failing: gateway gone") {
		t.Fatalf("within the threshold, healthy, and it says why relists fail: %s", detail)
	}
	r.clock.Step(90 * time.Second)
	if ok, detail := r.g.Healthy(); ok || !strings.HasPrefix(detail, "pleg was last seen active 210s ago; threshold is 180s") {
		t.Fatalf("past the threshold: unhealthy: %s", detail)
	}
}

func TestInspectionTimeoutLeavesThePodForTheNextRelist(t *testing.T) {
	r := newRig()
	r.rt.set([]map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "")}, nil)
	r.rt.block["PodSandboxStatus"] = make(chan struct{})
	done := make(chan RelistResult)
	go func() { res, _ := r.g.Relist(context.Background()); done <- res }()
	// Step until the inspection's timer has been set and fires (the relist goroutine sets it).
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.clock.Step(time.Second)
		select {
		case res := <-done:
			if !reflect.DeepEqual(res.Failed, []string{"u1"}) {
				t.Fatalf("the hung pod failed: %+v", res)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the relist waited for the hung pod past its timeout")
		}
	}
}

func TestInspectPodStampsAfterTheSyncAndIsNotUndoneByAnOlderRelist(t *testing.T) {
	r := newRig()
	ctx := context.Background()
	r.rt.set([]map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "")}, []map[string]any{container("c1", "u1", "CONTAINER_RUNNING")})
	// A relist lists the runtime, then stalls in the pod's inspection.
	r.rt.block["PodSandboxStatus"] = make(chan struct{})
	relisted := make(chan RelistResult)
	go func() { res, _ := r.g.Relist(ctx); relisted <- res }()
	for i := 0; i < 200 && len(r.rt.callsOf("PodSandboxStatus")) == 0; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	relistTs := r.clock.Now().UnixMilli()
	// Meanwhile a pod worker's sync ended and asked for the pod at once: stamped after syncEnd.
	syncEnd := r.clock.Now().UnixMilli()
	ch := r.rt.block["PodSandboxStatus"]
	r.rt.mu.Lock()
	delete(r.rt.block, "PodSandboxStatus")
	r.rt.mu.Unlock()
	res, err := r.g.InspectPod(ctx, "u1", syncEnd)
	if err != nil || !res.Written || res.Timestamp <= syncEnd {
		t.Fatalf("inspection: %+v %v", res, err)
	}
	if !reflect.DeepEqual(types(r.sink.take()), []string{"ContainerStarted s1", "ContainerStarted c1"}) {
		t.Fatal("the inspection sent the pod's events")
	}
	close(ch)
	rel := <-relisted
	if got := r.cache.entries["u1"].Timestamp; got != res.Timestamp || got <= relistTs {
		t.Fatalf("the older relist did not put its view back: cache at %d, inspection %d", got, res.Timestamp)
	}
	if len(rel.Events) != 0 || len(r.sink.take()) != 0 {
		t.Fatalf("a transition is reported once: %v", types(rel.Events))
	}
}

func (r *fakeRuntime) callsOf(method string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if c == method {
			out = append(out, c)
		}
	}
	return out
}

func TestRestoreReportsOnlyWhatChanged(t *testing.T) {
	r := newRig()
	ctx := context.Background()
	r.rt.set([]map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "")}, []map[string]any{container("c1", "u1", "CONTAINER_RUNNING")})
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	r.sink.take()
	ts := r.cache.entries["u1"].Timestamp
	// A new leader, its clock behind: it restores the view and never stamps older.
	next := NewGeneric(Deps{Runtime: r.rt, Cache: r.cache, Sink: r.sink, Clock: newFakeClock(), Logger: nopLogger{}}, Options{InspectTimeout: time.Second, InspectConcurrency: 1, RelistThreshold: time.Minute, Node: "n1"})
	r.clock = nil
	if n, err := next.Restore(ctx); err != nil || n != 1 {
		t.Fatalf("restored %d %v", n, err)
	}
	r.rt.set([]map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "")}, []map[string]any{container("c1", "u1", "CONTAINER_EXITED")})
	if _, err := next.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if got := types(r.sink.take()); !reflect.DeepEqual(got, []string{"ContainerDied c1"}) {
		t.Fatalf("only the change since the predecessor's view: %v", got)
	}
	if r.cache.entries["u1"].Timestamp <= ts {
		t.Fatal("the cache never goes back in time for a pod")
	}
}

func TestCacheWriterDropsOlderWritesAndKeepsTombstones(t *testing.T) {
	cache := newFakeCache()
	w := NewCacheWriter(cache)
	ctx := context.Background()
	mustWrite := func(ok bool, err error) bool {
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !mustWrite(w.Set(ctx, PodCacheEntry{UID: "u", Timestamp: 10}, nil)) {
		t.Fatal("first write")
	}
	if mustWrite(w.Set(ctx, PodCacheEntry{UID: "u", Timestamp: 9}, nil)) {
		t.Fatal("an older write is dropped")
	}
	if !mustWrite(w.Delete(ctx, "u", 11, nil)) {
		t.Fatal("the removal")
	}
	w.Prune(5, true) // a relist stamped 5 still runs: the tombstone stays
	if mustWrite(w.Set(ctx, PodCacheEntry{UID: "u", Timestamp: 10}, nil)) {
		t.Fatal("a write older than the removal is dropped while its tombstone is kept")
	}
	w.Prune(0, false)
	if _, ok := w.NewestOf("u"); ok {
		t.Fatal("no write in flight: the tombstone goes")
	}
	if !reflect.DeepEqual(cache.writes, []string{"set u", "delete u"}) {
		t.Fatalf("writes %v", cache.writes)
	}
}

func TestInspectPodOfAPodTheRuntimeHasNothingOfWritesAnEmptyEntry(t *testing.T) {
	r := newRig()
	ctx := context.Background()
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	r.clock.Step(100 * time.Millisecond)
	syncEnd := r.clock.Now().UnixMilli()
	res, err := r.g.InspectPod(ctx, "new", syncEnd)
	if err != nil || !res.Written || res.Timestamp <= syncEnd || len(res.Events) != 0 {
		t.Fatalf("a pod not made yet: written, stamped after the sync, no events: %+v %v", res, err)
	}
	e, ok := r.cache.entry("new")
	if !ok {
		t.Fatal("the waiting pod worker gets news now: an entry, not a removal")
	}
	// Byte for byte what ours writes (generic-pleg.ts absentEntry through JSON.stringify).
	b, _ := json.Marshal(e)
	if want := `{"uid":"new","name":"","namespace":"","timestamp":` + strconv.FormatInt(res.Timestamp, 10) + `,"sandboxStatuses":[],"containerStatuses":[],"ips":[]}`; string(b) != want {
		t.Fatalf("the empty entry:\n got %s\nwant %s", b, want)
	}
	if len(r.sink.take()) != 0 {
		t.Fatal("nothing happened to the pod: no events")
	}
	// The next relist that finds nothing of it removes the entry.
	r.clock.Step(time.Second)
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.cache.entry("new"); ok {
		t.Fatal("the relist removes the empty entry")
	}
	// One that finds the pod made meanwhile writes it, with its events.
	if _, err := r.g.InspectPod(ctx, "gone-too", 0); err != nil {
		t.Fatal(err)
	}
	r.rt.set([]map[string]any{sandbox("sb-g", "gone-too", "SANDBOX_READY", 1, "")}, nil)
	r.clock.Step(time.Second)
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if e, _ := r.cache.entry("gone-too"); len(e.SandboxStatuses) != 1 {
		t.Fatalf("a pod made after its empty entry is written by the relist: %+v", e)
	}
	if got := types(r.sink.take()); !reflect.DeepEqual(got, []string{"ContainerStarted sb-g"}) {
		t.Fatalf("events %v", got)
	}
	if !reflect.DeepEqual(r.cache.writes, []string{"set new", "delete new", "set gone-too", "set gone-too"}) {
		t.Fatalf("writes %v", r.cache.writes)
	}
}

func TestInspectPodOfAPodJustTornDownLeavesAnEmptyEntryTheNextRelistRemoves(t *testing.T) {
	r := newRig()
	ctx := context.Background()
	r.rt.set([]map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "10.0.0.5")}, []map[string]any{container("c1", "u1", "CONTAINER_RUNNING")})
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	r.sink.take()
	// syncTerminatedPod removed the sandbox and its container, then asked for the pod's inspection.
	r.rt.set(nil, nil)
	r.clock.Step(100 * time.Millisecond)
	res, err := r.g.InspectPod(ctx, "u1", r.clock.Now().UnixMilli())
	if err != nil || !res.Written {
		t.Fatalf("%+v %v", res, err)
	}
	got := types(r.sink.take())
	sort.Strings(got)
	if want := []string{"ContainerDied c1", "ContainerDied s1", "ContainerRemoved c1", "ContainerRemoved s1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if e, ok := r.cache.entry("u1"); !ok || !IsEmptyEntry(e) || !reflect.DeepEqual(e.IPs, []string{"10.0.0.5"}) {
		t.Fatalf("an empty entry, its IPs kept as getPodIPs keeps them: %+v %v", e, ok)
	}
	r.clock.Step(time.Second)
	res2, err := r.g.Relist(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.cache.entry("u1"); ok || len(res2.Events) != 0 || len(r.sink.take()) != 0 {
		t.Fatalf("the next relist removes it and reports nothing again: %v", types(res2.Events))
	}
}

func TestRestoreTakesEmptyEntriesAsAbsent(t *testing.T) {
	r := newRig()
	ctx := context.Background()
	r.cache.entries["gone"] = AbsentEntry("gone", 5)
	r.cache.global = 5
	if n, err := r.g.Restore(ctx); err != nil || n != 1 {
		t.Fatalf("%d %v", n, err)
	}
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.cache.entry("gone"); ok || len(r.sink.take()) != 0 {
		t.Fatal("the predecessor's empty entry is removed by the first relist, with no events")
	}
}

func TestAShorterThresholdCountsFromTheChange(t *testing.T) {
	r := newRig()
	ctx := context.Background()
	r.g.RelistPeriodChanged(5 * time.Minute) // evented mode
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	relisted, threshold := r.cache.globalAndThreshold()
	if threshold != 600_000 {
		t.Fatalf("the evented threshold, 10m, beside the relist time: %d", threshold)
	}
	r.clock.Step(250 * time.Second)
	// The fallback: every relist fails from now on (containerd gone).
	r.rt.fail["ListPodSandbox"] = errors.New("connection refused")
	r.g.RelistPeriodChanged(time.Second)
	if ok, detail := r.g.Healthy(); !ok {
		t.Fatalf("not unhealthy at once for a relist 250s old: %s", detail)
	}
	waitFor(t, "the widened threshold in the cache", func() bool { _, th := r.cache.globalAndThreshold(); return th != 600_000 })
	if g, th := r.cache.globalAndThreshold(); g != relisted || th != (250*time.Second+3*time.Minute).Milliseconds() {
		t.Fatalf("the cache's time stays the last relist's; the gate gets 3m from the fallback: %d %d", g, th)
	}
	if _, err := r.g.Relist(ctx); err == nil {
		t.Fatal("the runtime is down")
	}
	r.clock.Step(179 * time.Second)
	if ok, detail := r.g.Healthy(); !ok {
		t.Fatalf("within 3m of the fallback: %s", detail)
	}
	r.clock.Step(2 * time.Second)
	if ok, detail := r.g.Healthy(); ok || !strings.HasPrefix(detail, "pleg was last seen active 431s ago; threshold is 180s") {
		t.Fatalf("failing relists for 3m: unhealthy: %s", detail)
	}
}

func TestTheWidenedThresholdNeverPutsTheCachesClockBack(t *testing.T) {
	r := newRig()
	ctx := context.Background()
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	old, _ := r.cache.globalAndThreshold()
	r.clock.Step(time.Second)
	if _, err := r.g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	newer, _ := r.cache.globalAndThreshold()
	// A widened threshold for the older time, written after the newer relist's: dropped.
	r.g.writeWidenedThreshold(old, time.Hour)
	if g, th := r.cache.globalAndThreshold(); g != newer || th != 180_000 {
		t.Fatalf("the newer relist's time and threshold stay: %d %d", g, th)
	}
}

func TestWidenedThreshold(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	if got := WidenedThreshold(1_000_000-250_000, now, 3*time.Minute); got != 430*time.Second {
		t.Fatalf("%v", got)
	}
}
