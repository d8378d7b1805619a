package pleg

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeReporter records what the runner told, in ours' words (pleg.spec.ts Reporter).
type fakeReporter struct {
	mu        sync.Mutex
	told      []string
	latencies []float64
}

func (f *fakeReporter) Connected(resumed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if resumed {
		f.told = append(f.told, "resumed")
	} else {
		f.told = append(f.told, "connected")
	}
}
func (f *fakeReporter) FellBack(reason string, fault bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fault {
		f.told = append(f.told, "fault: "+reason)
	} else {
		f.told = append(f.told, "fell back: "+reason)
	}
}
func (f *fakeReporter) Latency(s float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latencies = append(f.latencies, s)
}
func (f *fakeReporter) said() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.told...)
}

var _ ModeReporter = (*fakeReporter)(nil)

type runnerRig struct {
	*rig
	run      *Runner
	reporter *fakeReporter
}

// newRunnerRig: a PLEG and its runner, relisting every second in generic mode and every 5 minutes in
// evented mode, falling back after 90s of relay silence; relay answers the runner's question (nil: no answer).
func newRunnerRig(mode string, relay *RelayStatus) *runnerRig {
	r := newRig()
	rep := &fakeReporter{}
	run := NewRunner(RunnerDeps{Pleg: r.g, Clock: r.clock, Logger: nopLogger{}, Reporter: rep, AskRelay: func(context.Context) (*RelayStatus, bool) { return relay, relay != nil }},
		RunnerOptions{RelistPeriod: time.Second, EventedRelistPeriod: 300 * time.Second, EventedSilence: 90 * time.Second}, mode)
	return &runnerRig{rig: r, run: run, reporter: rep}
}

// relists is the cache's time: each relist advances it.
func (r *runnerRig) relists() int64 { g, _ := r.cache.globalAndThreshold(); return g }

// start starts the runner and lets its relist at once and its question to the relay finish.
func (r *runnerRig) start(t *testing.T) {
	r.run.Start()
	r.clock.Step(0)
	time.Sleep(5 * time.Millisecond) // the relay's answer arrives on its own goroutine
}

// send is a message on cri.<node>.events; the inspection it asks for is waited for.
func (r *runnerRig) send(m []byte) {
	r.run.OnRuntimeMessage(context.Background(), m)
	r.run.wg.Wait()
}

// event is a container event as containerd sends it, made ago before now by the runtime's clock,
// carrying what the runtime said then (which the PLEG does not use).
func (r *runnerRig) event(uid, containerID, typ, state string, ago time.Duration) []byte {
	b, _ := json.Marshal(map[string]any{
		"containerId": containerID, "containerEventType": typ,
		"createdAt":          strconv.FormatInt(r.clock.Now().Add(-ago).UnixNano(), 10),
		"podSandboxStatus":   map[string]any{"id": "sb-" + uid, "state": "SANDBOX_READY", "createdAt": "1", "metadata": map[string]any{"name": uid, "namespace": "default", "uid": uid, "attempt": 0}},
		"containersStatuses": []map[string]any{{"id": containerID, "state": state}},
	})
	return b
}

func status(state, detail string) []byte { return streamStatus(state, detail, "") }

func streamStatus(state, detail, stream string) []byte {
	b, _ := json.Marshal(RelayStatus{Type: RelayStatusType, State: state, Detail: detail, Stream: stream})
	return b
}

var streaming = &RelayStatus{Type: RelayStatusType, State: "streaming", Stream: "gw-1"}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func sorted(s []string) []string { sort.Strings(s); return s }

func TestEventedFallsBack(t *testing.T) {
	cases := []struct {
		name   string
		relay  *RelayStatus
		feed   func(r *runnerRig) [][]byte
		step   time.Duration
		reason string
		told   string
	}{
		{"the relay answers unsupported when asked (containerd 1.6): no fault", &RelayStatus{Type: RelayStatusType, State: "unsupported", Detail: "unknown method GetContainerEvents"}, nil, 0,
			"the runtime does not stream container events: unknown method GetContainerEvents", "fell back: "},
		{"the stream broke: at once", streaming, func(*runnerRig) [][]byte { return [][]byte{status("reconnecting", "Unavailable: connection refused")} }, 0,
			"the container event stream broke: Unavailable: connection refused", "fault: "},
		{"cri-gateway shutting down", streaming, func(*runnerRig) [][]byte { return [][]byte{status("stopped", "")} }, 0,
			"the container event stream stopped (cri-gateway shutting down)", "fault: "},
		{"no word from the relay for 90s", nil, nil, 100 * time.Second, "no word from the container event relay for 90s", "fault: "},
		{"events arrive 12s after the runtime made them", streaming, func(r *runnerRig) [][]byte {
			return [][]byte{r.event("l", "c1", "CONTAINER_STARTED_EVENT", "CONTAINER_RUNNING", 12*time.Second)}
		}, 0, "container events arrive 12s after the runtime made them (more than 10s)", "fault: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunnerRig("evented", tc.relay)
			r.start(t)
			defer r.run.Stop()
			if tc.feed != nil {
				if r.run.Mode().Effective != "evented" {
					t.Fatal("evented at start")
				}
				for _, m := range tc.feed(r) {
					r.send(m)
				}
			}
			for i := 0; i < 11 && tc.step > 0; i++ {
				r.clock.Step(tc.step / 10)
			}
			waitFor(t, "the fallback", func() bool { return r.run.Mode().Effective == "generic" })
			if m := r.run.Mode(); m.Desired != "evented" || m.FallbackReason != tc.reason {
				t.Fatalf("%+v", m)
			}
			if got := r.reporter.said(); !reflect.DeepEqual(got, []string{"connected", tc.told + tc.reason}) {
				t.Fatalf("told %q", got)
			}
			// Relisting every second from now on, the first at once.
			t0 := r.relists()
			r.clock.Step(0)
			r.clock.Step(time.Second)
			if r.relists() == t0 {
				t.Fatal("no relist after the fallback")
			}
		})
	}
}

func TestAnEventMakesThePlegReadThePodFromTheRuntime(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.start(t)
	defer r.run.Stop()
	afterFirstRelist := r.relists()
	r.clock.Step(5 * time.Second)
	if r.relists() != afterFirstRelist {
		t.Fatal("no relist every second in evented mode")
	}
	r.rt.set([]map[string]any{sandbox("sb-z", "z", "SANDBOX_READY", 1, "")}, []map[string]any{container("c9", "z", "CONTAINER_RUNNING")})
	r.send(r.event("z", "c9", "CONTAINER_STARTED_EVENT", "CONTAINER_RUNNING", 40*time.Millisecond))
	if got := sorted(types(r.sink.take())); !reflect.DeepEqual(got, []string{"ContainerStarted c9", "ContainerStarted sb-z"}) {
		t.Fatalf("events %v", got)
	}
	if e, _ := r.cache.entry("z"); e.Timestamp <= afterFirstRelist || len(e.ContainerStatuses) != 1 {
		t.Fatalf("the entry as read from the runtime, with the PLEG's own time: %+v", e)
	}
	if !reflect.DeepEqual(r.reporter.latencies, []float64{0.04}) {
		t.Fatalf("latency in seconds: %v", r.reporter.latencies)
	}
	r.send(r.event("z", "c9", "CONTAINER_STARTED_EVENT", "CONTAINER_RUNNING", 0))
	if got := r.sink.take(); len(got) != 0 {
		t.Fatalf("the same state again: no event, got %v", types(got))
	}
	r.rt.set([]map[string]any{sandbox("sb-z", "z", "SANDBOX_READY", 1, "")}, []map[string]any{container("c9", "z", "CONTAINER_EXITED")})
	r.send(r.event("z", "c9", "CONTAINER_STOPPED_EVENT", "CONTAINER_EXITED", 0))
	if got := types(r.sink.take()); !reflect.DeepEqual(got, []string{"ContainerDied c9"}) {
		t.Fatalf("events %v", got)
	}
	r.rt.set([]map[string]any{sandbox("sb-z", "z", "SANDBOX_READY", 1, "")}, nil)
	r.send(r.event("z", "c9", "CONTAINER_DELETED_EVENT", "CONTAINER_EXITED", 0))
	if got := types(r.sink.take()); !reflect.DeepEqual(got, []string{"ContainerRemoved c9"}) {
		t.Fatalf("events %v", got)
	}
	r.rt.set(nil, nil)
	r.send(r.event("z", "sb-z", "CONTAINER_DELETED_EVENT", "CONTAINER_EXITED", 0))
	if e, ok := r.cache.entry("z"); !ok || !IsEmptyEntry(e) {
		t.Fatalf("the sandbox deleted: an empty entry until the next relist, %+v %v", e, ok)
	}
	if got := r.reporter.said(); !reflect.DeepEqual(got, []string{"connected"}) {
		t.Fatalf("told %q", got)
	}
}

func TestAnEventForAnOlderStateAfterANewerInspectionDoesNotGoBackInTime(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.rt.set([]map[string]any{sandbox("sb-a", "a", "SANDBOX_READY", 1, "")}, nil)
	r.start(t)
	defer r.run.Stop()
	r.sink.take()
	// The container started and then exited; a pod worker's inspection saw it exited.
	r.rt.set([]map[string]any{sandbox("sb-a", "a", "SANDBOX_READY", 1, "")}, []map[string]any{container("c1", "a", "CONTAINER_EXITED")})
	r.run.OnInspectRequest(context.Background(), "a", r.clock.Now().UnixMilli())
	if got := types(r.sink.take()); !reflect.DeepEqual(got, []string{"ContainerDied c1"}) {
		t.Fatalf("events %v", got)
	}
	inspected, _ := r.cache.entry("a")
	// Only now does the event for its start arrive, saying "running".
	r.send(r.event("a", "c1", "CONTAINER_STARTED_EVENT", "CONTAINER_RUNNING", 500*time.Millisecond))
	after, _ := r.cache.entry("a")
	if !strings.Contains(string(after.ContainerStatuses[0]), "CONTAINER_EXITED") || after.Timestamp < inspected.Timestamp {
		t.Fatalf("the cache still says exited, and its time did not go back: %+v", after)
	}
	if got := r.sink.take(); len(got) != 0 {
		t.Fatalf("no ContainerStarted for a container that has exited: %v", types(got))
	}
}

func TestEventsForAPodBeingReadFoldIntoOneMoreRead(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.rt.set([]map[string]any{sandbox("sb-b", "b", "SANDBOX_READY", 1, "")}, nil)
	r.start(t)
	defer r.run.Stop()
	before := len(r.rt.callsOf("ListContainers"))
	gate := make(chan struct{})
	r.rt.mu.Lock()
	r.rt.block["ListContainers"] = gate
	r.rt.mu.Unlock()
	r.run.OnRuntimeMessage(context.Background(), r.event("b", "c1", "CONTAINER_CREATED_EVENT", "CONTAINER_CREATED", 0))
	waitFor(t, "the first read", func() bool { return len(r.rt.callsOf("ListContainers")) == before+1 })
	r.rt.mu.Lock()
	delete(r.rt.block, "ListContainers")
	r.rt.mu.Unlock()
	for range 5 {
		r.run.OnRuntimeMessage(context.Background(), r.event("b", "c1", "CONTAINER_STARTED_EVENT", "CONTAINER_RUNNING", 0))
	}
	close(gate)
	r.run.wg.Wait()
	if got := len(r.rt.callsOf("ListContainers")) - before; got != 2 {
		t.Fatalf("six events, two reads: %d", got)
	}
}

func TestEventsAreUsedAgainAfter30sOfStreaming(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.start(t)
	defer r.run.Stop()
	r.send(status("reconnecting", "Unavailable: connection refused"))
	if m := r.run.Mode(); m.Effective != "generic" {
		t.Fatalf("%+v", m)
	}
	t0 := r.relists()
	r.clock.Step(0)
	r.clock.Step(time.Second)
	if r.relists() == t0 {
		t.Fatal("relisting every second")
	}
	r.send(streamStatus("streaming", "", "gw-2"))
	for range 29 {
		r.clock.Step(time.Second)
	}
	if r.run.Mode().Effective != "generic" {
		t.Fatal("not before 30s of streaming")
	}
	r.clock.Step(time.Second)
	if m := r.run.Mode(); m.Effective != "evented" || m.FallbackReason != "" {
		t.Fatalf("%+v", m)
	}
	if _, th := r.cache.globalAndThreshold(); th != 600_000 {
		t.Fatalf("a relist at once on the return, in evented mode (its threshold written): %d", th)
	}
	t1 := r.relists()
	r.clock.Step(5 * time.Second)
	if r.relists() != t1 {
		t.Fatal("then every 5 minutes again")
	}
	if got := r.reporter.said(); !reflect.DeepEqual(got, []string{"connected", "fault: the container event stream broke: Unavailable: connection refused", "resumed"}) {
		t.Fatalf("told %q", got)
	}
}

func TestTheReturnWaitStartsOverAndDoublesWhenEventsFlap(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.start(t)
	defer r.run.Stop()
	steps := func(n int) {
		for range n {
			r.clock.Step(time.Second)
		}
	}
	r.send(status("stopped", ""))
	r.send(streamStatus("streaming", "", "gw-2"))
	steps(20)
	r.send(status("reconnecting", "the stream ended"))
	r.send(streamStatus("streaming", "", "gw-3"))
	steps(20)
	if r.run.Mode().Effective != "generic" {
		t.Fatal("a stream that broke before the 30s were up: the wait started over")
	}
	steps(10)
	if r.run.Mode().Effective != "evented" {
		t.Fatal("30s of streaming: events again")
	}
	steps(60)
	r.send(status("reconnecting", "the stream ended"))
	r.send(streamStatus("streaming", "", "gw-4"))
	steps(30)
	if r.run.Mode().Effective != "generic" {
		t.Fatal("a second fallback within 5 minutes of a return: 60s")
	}
	steps(30)
	if r.run.Mode().Effective != "evented" {
		t.Fatal("60s of streaming: events again")
	}
}

func TestANewStreamWhileEventedMeansARelistAtOnce(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.start(t)
	defer r.run.Stop()
	r.send(streamStatus("streaming", "", "gw-1"))
	t0 := r.relists()
	r.clock.Step(10 * time.Second)
	if r.relists() != t0 {
		t.Fatal("the same stream: no relist")
	}
	r.send(streamStatus("streaming", "", "gw-restarted-1"))
	r.clock.Step(0)
	if r.relists() == t0 || r.run.Mode().Effective != "evented" {
		t.Fatalf("a restarted cri-gateway's stream: a relist at once, still evented (%+v)", r.run.Mode())
	}
}

func TestAFallbackDuringTheFirstRelistRelistsEverySecondAfterIt(t *testing.T) {
	r := newRunnerRig("evented", nil)
	r.rt.set([]map[string]any{sandbox("sb-a", "a", "SANDBOX_READY", 1, "")}, nil)
	gate := make(chan struct{})
	r.rt.block["ListPodSandbox"] = gate
	r.run.Start()
	stepped := make(chan struct{})
	go func() { r.clock.Step(0); close(stepped) }() // the evented relist at start, held by the runtime
	waitFor(t, "the first relist", func() bool { return len(r.rt.callsOf("ListPodSandbox")) == 1 })
	// The relay says the runtime has no stream (containerd 1.6) while the first relist waits on the runtime
	// (a status is handled before OnRuntimeMessage returns; send would wait for the relist too).
	r.run.OnRuntimeMessage(context.Background(), status("unsupported", "unknown method GetContainerEvents"))
	r.rt.mu.Lock()
	delete(r.rt.block, "ListPodSandbox")
	r.rt.mu.Unlock()
	close(gate)
	<-stepped
	defer r.run.Stop()
	if r.run.Mode().Effective != "generic" {
		t.Fatal("fell back")
	}
	t0 := r.relists()
	r.clock.Step(time.Second)
	r.clock.Step(time.Second)
	if r.relists() == t0 {
		t.Fatal("relisting every second, not 5 minutes later")
	}
}

func TestEventedRelistsEvery5MinutesAndStaysHealthy(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.start(t)
	defer r.run.Stop()
	if _, th := r.cache.globalAndThreshold(); th != 600_000 {
		t.Fatalf("the evented threshold written: %d", th)
	}
	for range 29 {
		r.send(status("streaming", ""))
		r.clock.Step(10 * time.Second)
	}
	if ok, detail := r.g.Healthy(); !ok {
		t.Fatal(detail)
	}
	r.run.SetMode("generic", "test")
	r.clock.Step(0)
	waitFor(t, "generic's threshold", func() bool { _, th := r.cache.globalAndThreshold(); return th == 180_000 })
}

// Between evented mode's rare relists the PLEG shows the sync loop's gate it is alive without moving
// the cache's time (no pod worker released), so that a PLEG that stops is noticed within
// RELIST_THRESHOLD, not at the 10-minute evented threshold (pleg.spec.ts, the same case).
func TestEventedHeartbeatsBetweenRelistsWithoutMovingTheCachesTime(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.start(t)
	defer r.run.Stop()
	relisted := r.relists()
	for i := range 29 {
		r.send(status("streaming", ""))
		r.clock.Step(10 * time.Second)
		want := r.clock.Now().UnixMilli()
		waitFor(t, "a heartbeat at "+strconv.Itoa(10*(i+1))+"s", func() bool {
			g, ok := r.cache.lastGlobal()
			return ok && g.AliveAt != nil && *g.AliveAt == want
		})
	}
	g, _ := r.cache.lastGlobal()
	if g.Timestamp != relisted || *g.RelistThresholdMs != 600_000 || *g.AliveThresholdMs != 180_000 {
		t.Fatalf("a heartbeat writes the same time and thresholds: %+v (relisted at %d)", g, relisted)
	}
}

func TestTheHeartbeatComesOftenEnoughForAShortRelistThreshold(t *testing.T) {
	for _, c := range []struct{ threshold, want time.Duration }{{180 * time.Second, 10 * time.Second}, {5 * time.Second, 1666 * time.Millisecond}, {time.Second, time.Second}} {
		g := NewGeneric(Deps{}, Options{RelistThreshold: c.threshold})
		if got := g.HeartbeatPeriod(); got != c.want {
			t.Errorf("RELIST_THRESHOLD %v: a heartbeat every %v, want %v", c.threshold, got, c.want)
		}
	}
}

// Evented mode started before the runtime answers (cri-gateway not up yet): the failed relist is retried
// every second until one succeeds, then relists are 5 minutes apart again (pleg.spec.ts, the same case).
func TestAFailedRelistIsRetriedAtTheGenericPeriodInEventedMode(t *testing.T) {
	r := newRunnerRig("evented", streaming)
	r.rt.mu.Lock()
	r.rt.fail["ListPodSandbox"] = errors.New("no cri-gateway answers")
	r.rt.mu.Unlock()
	r.start(t)
	defer r.run.Stop()
	r.clock.Step(time.Second)
	time.Sleep(5 * time.Millisecond)
	if r.relists() != 0 {
		t.Fatal("a relist succeeded against a runtime that fails")
	}
	r.rt.mu.Lock()
	delete(r.rt.fail, "ListPodSandbox")
	r.rt.mu.Unlock()
	r.clock.Step(time.Second)
	waitFor(t, "a relist within a second of the runtime answering", func() bool { return r.relists() > 0 })
	first := r.relists()
	for range 6 {
		r.send(status("streaming", ""))
		r.clock.Step(10 * time.Second)
	}
	time.Sleep(5 * time.Millisecond)
	if r.relists() != first {
		t.Fatalf("evented again: no relist for a minute, got the cache's time moved from %d to %d", first, r.relists())
	}
}

func TestAStandbyIgnoresEverything(t *testing.T) {
	r := newRunnerRig("evented", nil)
	r.rt.set([]map[string]any{sandbox("s1", "u1", "SANDBOX_READY", 1, "")}, nil)
	r.run.OnRuntimeMessage(context.Background(), r.event("u1", "c1", "CONTAINER_STARTED_EVENT", "CONTAINER_RUNNING", 0))
	r.run.OnRuntimeMessage(context.Background(), status("reconnecting", "x"))
	r.run.OnInspectRequest(context.Background(), "u1", 0)
	r.run.wg.Wait()
	if len(r.cache.writes) != 0 || len(r.rt.calls) != 0 || len(r.reporter.said()) != 0 || r.run.Mode().Effective != "generic" {
		t.Fatalf("a standby wrote %v, called %v, told %v", r.cache.writes, r.rt.calls, r.reporter.said())
	}
}

func TestGenericRelistsEveryPeriod(t *testing.T) {
	r := newRunnerRig("generic", nil)
	r.run.Start()
	defer r.run.Stop()
	r.clock.Step(0) // the relist at once of a new mode
	waitFor(t, "the first relist", func() bool { return len(r.rt.callsOf("ListPodSandbox")) == 1 })
	for i := 2; i <= 4; i++ {
		r.clock.Step(time.Second)
		waitFor(t, "a relist a period later", func() bool { return len(r.rt.callsOf("ListPodSandbox")) == i })
	}
	if got := r.reporter.said(); len(got) != 0 {
		t.Fatalf("generic mode tells nothing: %v", got)
	}
	if _, err := ParseMode("sideways"); err == nil || err.Error() != `mode must be "generic" or "evented", got "sideways"` {
		t.Fatalf("%v", err)
	}
}

func TestReturnWait(t *testing.T) {
	for n, want := range map[int]time.Duration{0: 30 * time.Second, 1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 4: 4 * time.Minute, 5: 5 * time.Minute, 60: 5 * time.Minute} {
		if got := ReturnWait(30*time.Second, n); got != want {
			t.Errorf("after %d fallbacks in a row: %v, want %v", n, got, want)
		}
	}
	now := time.UnixMilli(10_000_000)
	recent, old := now.Add(-4*time.Minute), now.Add(-6*time.Minute)
	for _, tc := range []struct {
		name     string
		previous int
		ret      *time.Time
		want     int
	}{{"never returned", 3, nil, 1}, {"within 5 minutes of a return", 1, &recent, 2}, {"long after a return", 4, &old, 1}} {
		if got := FallbacksInARow(tc.previous, tc.ret, now); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRuntimeTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ms   int64
		good bool
	}{
		{`"1700000000123456789"`, 1_700_000_000_123, true}, // nanoseconds, as a decimal string (kubernetes#124297)
		{`1700000000123456789`, 1_700_000_000_123, true},
		{`"0"`, 0, false}, {``, 0, false}, {`null`, 0, false}, {`"soon"`, 0, false}, {`"999"`, 0, false},
	} {
		got, ok := RuntimeTime(json.RawMessage(tc.in))
		if ok != tc.good || (ok && got.UnixMilli() != tc.ms) {
			t.Errorf("%s: %v %v", tc.in, got, ok)
		}
	}
}
