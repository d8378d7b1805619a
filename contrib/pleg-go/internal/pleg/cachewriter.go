package pleg

// The PLEG's writes to the pod cache, kept monotonic per pod, as
// apps/pleg/src/pod-cache-writer.ts (and container/cache.go Set): a write
// (an entry, or the pod's removal) stamped older than the last one made for
// that pod is dropped. The relist, the immediate inspections and the
// evented updates race here; a relist that listed the runtime before an
// inspection and finishes after it must not put the older view back.
//
// Each pod's writes are made one at a time (a lock per pod), and the check
// is made under that lock, so the bucket receives them in the order the
// check decided them. A pod's removal is remembered (its tombstone) until no
// write stamped before it can still arrive (Prune).

import (
	"context"
	"encoding/json"
	"sync"
)

// sandboxState is the part of a PodSandboxStatus the writer reads.
type sandboxState struct {
	State string `json:"state"`
}

// GetPodIPs is pleg/generic.go getPodIPs: the IPs of a pod's new entry given
// those of the entry it replaces. The runtime's own when it reports any or a
// sandbox is ready; for a pod with no ready sandbox, the previous entry's.
func GetPodIPs(e PodCacheEntry, previous []string) []string {
	if len(e.IPs) > 0 || len(previous) == 0 {
		return e.IPs
	}
	for _, raw := range e.SandboxStatuses {
		var s sandboxState
		if json.Unmarshal(raw, &s) == nil && s.State == "SANDBOX_READY" {
			return e.IPs
		}
	}
	return append([]string{}, previous...)
}

// CacheWriter decides and makes the PLEG's pod cache writes.
type CacheWriter struct {
	store PodCacheStore

	mu       sync.Mutex
	newest   map[string]int64
	removed  map[string]bool
	ips      map[string][]string
	podLocks map[string]*podLock
}

type podLock struct {
	sync.Mutex
	users int
}

// NewCacheWriter writes through store.
func NewCacheWriter(store PodCacheStore) *CacheWriter {
	return &CacheWriter{store: store, newest: map[string]int64{}, removed: map[string]bool{}, ips: map[string][]string{}, podLocks: map[string]*podLock{}}
}

// Restore starts from what the cache holds (a PLEG leading after another).
func (w *CacheWriter) Restore(entries []PodCacheEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.newest = map[string]int64{}
	w.removed = map[string]bool{}
	w.ips = map[string][]string{}
	for _, e := range entries {
		w.newest[e.UID] = e.Timestamp
		w.ips[e.UID] = e.IPs
	}
}

// Set writes the pod's entry (its IPs kept as GetPodIPs says) unless a newer
// write was made for it. onWritten, when the write was made, runs before the
// pod's next write may start. Returns whether it was written.
func (w *CacheWriter) Set(ctx context.Context, e PodCacheEntry, onWritten func()) (bool, error) {
	return w.serially(e.UID, e.Timestamp, false, func() error {
		w.mu.Lock()
		ips := GetPodIPs(e, w.ips[e.UID])
		w.ips[e.UID] = ips
		w.mu.Unlock()
		e.IPs = ips
		if e.IPs == nil {
			e.IPs = []string{}
		}
		return w.store.Set(ctx, e)
	}, onWritten)
}

// Delete removes the pod (the runtime has nothing of it at timestamp) unless
// a newer write was made for it.
func (w *CacheWriter) Delete(ctx context.Context, uid string, timestamp int64, onWritten func()) (bool, error) {
	return w.serially(uid, timestamp, true, func() error {
		w.mu.Lock()
		delete(w.ips, uid)
		w.mu.Unlock()
		return w.store.Delete(ctx, uid)
	}, onWritten)
}

// NewestOf is the newest timestamp written for the pod, if remembered.
func (w *CacheWriter) NewestOf(uid string) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.newest[uid]
	return t, ok
}

// Prune forgets the removals older than oldestInFlight (the oldest relist or
// inspection still running; none: pass hasInFlight false): no write a
// removal must win over can come after that.
func (w *CacheWriter) Prune(oldestInFlight int64, hasInFlight bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for uid := range w.removed {
		if _, busy := w.podLocks[uid]; busy {
			continue
		}
		if !hasInFlight || w.newest[uid] < oldestInFlight {
			delete(w.newest, uid)
			delete(w.removed, uid)
		}
	}
}

func (w *CacheWriter) serially(uid string, ts int64, removal bool, write func() error, onWritten func()) (bool, error) {
	w.mu.Lock()
	l := w.podLocks[uid]
	if l == nil {
		l = &podLock{}
		w.podLocks[uid] = l
	}
	l.users++
	w.mu.Unlock()
	l.Lock()
	defer func() {
		l.Unlock()
		w.mu.Lock()
		l.users--
		if l.users == 0 {
			delete(w.podLocks, uid)
		}
		w.mu.Unlock()
	}()

	w.mu.Lock()
	if n, ok := w.newest[uid]; ok && ts < n {
		w.mu.Unlock()
		return false, nil
	}
	// Decided before the write: a write that fails after it reached the bucket must not let an older one in.
	w.newest[uid] = ts
	if removal {
		w.removed[uid] = true
	} else {
		delete(w.removed, uid)
	}
	w.mu.Unlock()
	if err := write(); err != nil {
		return false, err
	}
	if onWritten != nil {
		onWritten()
	}
	return true, nil
}
