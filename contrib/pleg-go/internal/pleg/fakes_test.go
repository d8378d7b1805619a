package pleg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// fakeClock is stepped by the test; AfterFunc runs f when a step passes its time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool { was := !t.stopped; t.stopped = true; return was }

func newFakeClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1_700_000_000_000)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Step moves time on and runs the timers due, in their order.
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	var rest []*fakeTimer
	for _, t := range c.timers {
		if !t.stopped && !t.at.After(c.now) {
			due = append(due, t)
		} else if !t.stopped {
			rest = append(rest, t)
		}
	}
	c.timers = rest
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
}

var _ Clock = (*fakeClock)(nil)

// fakeRuntime answers from sandboxes and containers the test sets; block holds a method's calls until released.
type fakeRuntime struct {
	mu         sync.Mutex
	sandboxes  []map[string]any
	containers []map[string]any
	fail       map[string]error
	block      map[string]chan struct{}
	calls      []string
}

func (r *fakeRuntime) set(sandboxes, containers []map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sandboxes, r.containers = sandboxes, containers
}

func matches(labels map[string]any, req any) bool {
	m, _ := req.(map[string]any)
	f, _ := m["filter"].(map[string]any)
	sel, _ := f["labelSelector"].(map[string]string)
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (r *fakeRuntime) Call(ctx context.Context, method string, req any, resp any) error {
	r.mu.Lock()
	r.calls = append(r.calls, method)
	err := r.fail[method]
	block := r.block[method]
	r.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out any
	switch method {
	case "ListPodSandbox":
		items := []map[string]any{}
		for _, s := range r.sandboxes {
			if matches(s["labels"].(map[string]any), req) {
				items = append(items, s)
			}
		}
		out = map[string]any{"items": items}
	case "ListContainers":
		items := []map[string]any{}
		for _, c := range r.containers {
			if matches(c["labels"].(map[string]any), req) {
				items = append(items, c)
			}
		}
		out = map[string]any{"containers": items}
	case "PodSandboxStatus":
		id := req.(map[string]string)["podSandboxId"]
		for _, s := range r.sandboxes {
			if s["id"] == id {
				out = map[string]any{"status": map[string]any{"id": id, "state": s["state"], "createdAt": s["createdAt"], "network": map[string]any{"ip": s["ip"]}}}
			}
		}
	case "ContainerStatus":
		id := req.(map[string]string)["containerId"]
		for _, c := range r.containers {
			if c["id"] == id {
				out = map[string]any{"status": map[string]any{"id": id, "state": c["state"], "exitCode": c["exitCode"]}}
			}
		}
	}
	if out == nil {
		return &CriError{Code: "NotFound", Description: method}
	}
	b, _ := json.Marshal(out)
	return json.Unmarshal(b, resp)
}

var _ Runtime = (*fakeRuntime)(nil)

// fakeCache is the pod-cache bucket in memory; failSet makes writes fail.
type fakeCache struct {
	mu      sync.Mutex
	entries map[string]PodCacheEntry
	global  int64
	// threshold is the relistThresholdMs last written beside global.
	threshold int64
	// globals is every `<node>.global` written, in order.
	globals  []PodCacheGlobal
	writes   []string
	failSet  error
	failTime error
}

func newFakeCache() *fakeCache { return &fakeCache{entries: map[string]PodCacheEntry{}} }

func (c *fakeCache) Load(context.Context) ([]PodCacheEntry, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []PodCacheEntry
	for _, e := range c.entries {
		out = append(out, e)
	}
	return out, c.global, nil
}
func (c *fakeCache) Set(_ context.Context, e PodCacheEntry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failSet != nil {
		return c.failSet
	}
	c.entries[e.UID] = e
	c.writes = append(c.writes, "set "+e.UID)
	return nil
}
func (c *fakeCache) Delete(_ context.Context, uid string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, uid)
	c.writes = append(c.writes, "delete "+uid)
	return nil
}
func (c *fakeCache) UpdateGlobal(_ context.Context, g PodCacheGlobal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failTime != nil {
		return c.failTime
	}
	if g.Timestamp < c.global {
		return fmt.Errorf("the cache clock went back: %d < %d", g.Timestamp, c.global)
	}
	c.global, c.threshold = g.Timestamp, *g.RelistThresholdMs
	c.globals = append(c.globals, g)
	return nil
}

// lastGlobal is `<node>.global` as last written.
func (c *fakeCache) lastGlobal() (PodCacheGlobal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.globals) == 0 {
		return PodCacheGlobal{}, false
	}
	return c.globals[len(c.globals)-1], true
}

// globalAndThreshold is `<node>.global` as last written.
func (c *fakeCache) globalAndThreshold() (int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.global, c.threshold
}

func (c *fakeCache) entry(uid string) (PodCacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[uid]
	return e, ok
}

var _ PodCacheStore = (*fakeCache)(nil)

type fakeSink struct {
	mu     sync.Mutex
	events []Event
	refuse bool
}

func (s *fakeSink) Publish(_ context.Context, e Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse {
		return false
	}
	s.events = append(s.events, e)
	return true
}
func (s *fakeSink) take() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.events
	s.events = nil
	return out
}

var _ EventSink = (*fakeSink)(nil)

type nopLogger struct{}

func (nopLogger) Info(string, ...any) {}
func (nopLogger) Warn(string, ...any) {}

type fakeFiles map[string]string

func (f fakeFiles) ReadTail(path string, max int) (string, bool, bool, error) {
	if path == "/broken" {
		return "", false, false, errors.New("permission denied")
	}
	s, ok := f[path]
	if !ok {
		return "", false, false, nil
	}
	if len(s) > max {
		return s[len(s)-max:], true, true, nil
	}
	return s, false, true, nil
}
