package leader

import (
	"context"
	"sync"
	"testing"
	"time"
)

// memStore is the leases key with compare-and-set on a revision, as the KV does it.
type memStore struct {
	mu       sync.Mutex
	rec      *Record
	revision uint64
	written  bool
}

func (s *memStore) Get(context.Context) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.written {
		return nil, nil
	}
	var r *Record
	if s.rec != nil {
		c := *s.rec
		r = &c
	}
	return &Snapshot{Record: r, Revision: s.revision}, nil
}
func (s *memStore) Put(_ context.Context, r Record, rev uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.written && s.rec != nil
	if (rev == 0 && live) || (rev != 0 && rev != s.revision) {
		return 0, ErrLostRace
	}
	s.revision++
	s.rec, s.written = &r, true
	return s.revision, nil
}
func (s *memStore) Release(_ context.Context, rev uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev != s.revision {
		return nil
	}
	s.revision++
	s.rec = nil
	return nil
}

// realClock: the election's timings are short here, so real time keeps the test simple and bounded.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) interface{ Stop() bool } {
	return time.AfterFunc(d, f)
}

type nop struct{}

func (nop) Info(string, ...any) {}
func (nop) Warn(string, ...any) {}

func waitUntil(t *testing.T, what string, cond func() bool) {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestOneLeaderThenHandoverOnStop(t *testing.T) {
	store := &memStore{}
	o := Options{LeaseDuration: 400 * time.Millisecond, RenewDeadline: 300 * time.Millisecond, RetryPeriod: 50 * time.Millisecond}
	oa, ob := o, o
	oa.Identity, ob.Identity = "a", "b"
	a, b := New(store, realClock{}, nop{}, oa), New(store, realClock{}, nop{}, ob)
	started := make(chan string, 4)
	a.Subscribe(Listener{OnStartedLeading: func(uint64) { started <- "a" }})
	b.Subscribe(Listener{OnStartedLeading: func(uint64) { started <- "b" }})
	a.Start()
	if first := <-started; first != "a" {
		t.Fatalf("%s led first", first)
	}
	b.Start()
	time.Sleep(600 * time.Millisecond) // longer than a lease: a renews, b waits
	if _, ok := b.FencingToken(); ok {
		t.Fatal("two leaders")
	}
	tokA, ok := a.FencingToken()
	if !ok {
		t.Fatal("a stopped leading while renewing")
	}
	if s := b.Status(); s.Role != "standby" || s.Leader != "a" {
		t.Fatalf("b's status: %+v", s)
	}
	a.Stop(context.Background())
	if _, ok := a.FencingToken(); ok {
		t.Fatal("a stopped acting on Stop")
	}
	waitUntil(t, "b to lead after a released the lease", func() bool { _, ok := b.FencingToken(); return ok })
	tokB, _ := b.FencingToken()
	if tokB <= tokA {
		t.Fatalf("a later term has a higher token: %d <= %d", tokB, tokA)
	}
	// A released lease is deleted: the next term counts from 0, as client-go's and ours do.
	if store.rec.LeaderTransitions != 0 || store.rec.HolderIdentity != "b" {
		t.Fatalf("record %+v", store.rec)
	}
	b.Stop(context.Background())
}

func TestProblem(t *testing.T) {
	if p := Problem(Options{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}); p != "" {
		t.Fatal(p)
	}
	if p := Problem(Options{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 3 * time.Second}); p == "" {
		t.Fatal("a retry period as long as the renew deadline is refused")
	}
}
