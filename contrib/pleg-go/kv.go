package main

// The KV buckets, through nats.go's jetstream package, as libs/nats and the
// TypeScript PLEG's adapters use them: `pod-cache` (`<node>.pod.<uid>` per
// pod, `<node>.global` for the relist time; every write fenced by the
// leader's term) and `leases` (`<node>.leader.pleg`, compare-and-set only).

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/kubelet-split/contrib/pleg-go/internal/leader"
	"github.com/kubelet-split/contrib/pleg-go/internal/pleg"
	"github.com/nats-io/nats.go/jetstream"
)

// nodeToken is a node name as a NATS token: dots become underscores.
func nodeToken(node string) string { return strings.ReplaceAll(node, ".", "_") }

// openBucket binds to a bucket, making it as libs/nats ensureBuckets does when it is absent.
func openBucket(ctx context.Context, js jetstream.JetStream, name, id, writer string) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, History: 1, Description: "kubelet-split " + id + "; writer: " + writer})
	}
	return kv, err
}

// errNotLeader is a write refused because this instance may no longer act as leader.
type errNotLeader struct{ what string }

func (e errNotLeader) Error() string { return "not the leader: refused to " + e.what }

// fence is the current term's fencing token, or none.
type fence interface {
	FencingToken() (uint64, bool)
}

type kvPodCache struct {
	kv     jetstream.KeyValue
	node   string
	fence  fence
	tracer *tracer
}

func (s *kvPodCache) check() error {
	if _, ok := s.fence.FencingToken(); !ok {
		return errNotLeader{"write the pod cache"}
	}
	return nil
}

func (s *kvPodCache) Load(ctx context.Context) ([]pleg.PodCacheEntry, int64, error) {
	prefix := nodeToken(s.node) + ".pod."
	w, err := s.kv.WatchFiltered(ctx, []string{prefix + "*"}, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = w.Stop() }()
	var entries []pleg.PodCacheEntry
	for {
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case e := <-w.Updates():
			if e == nil { // the initial values are all delivered
				var global pleg.PodCacheGlobal
				g, err := s.kv.Get(ctx, nodeToken(s.node)+".global")
				if err == nil && len(g.Value()) > 0 {
					_ = json.Unmarshal(g.Value(), &global)
				} else if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted) {
					return nil, 0, err
				}
				return entries, global.Timestamp, nil
			}
			if e.Operation() != jetstream.KeyValuePut || len(e.Value()) == 0 {
				continue
			}
			var entry pleg.PodCacheEntry
			if err := json.Unmarshal(e.Value(), &entry); err != nil {
				continue // not ours to repair: the next relist writes the pod again
			}
			entries = append(entries, entry)
		}
	}
}

func (s *kvPodCache) Set(ctx context.Context, e pleg.PodCacheEntry) error {
	if err := s.check(); err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	key := nodeToken(s.node) + ".pod." + e.UID
	t0 := time.Now()
	rev, err := s.kv.Put(ctx, key, b)
	// A `kv.put` hop of the pod's trace: a watcher's hop links to it by bucket, key and revision.
	if cur := currentTrace(ctx); err == nil && cur != nil && cur.PodUID != "" {
		s.tracer.record(traceHop{Kind: "kv.put", TraceID: cur.TraceID, SpanID: nextSpan(cur).SpanID, ParentSpanID: cur.SpanID, PodUID: cur.PodUID, Bucket: "pod-cache", Key: key, Revision: rev, At: t0.UnixMilli(), DurationMs: msSince(t0)})
	}
	return err
}

func (s *kvPodCache) Delete(ctx context.Context, uid string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.kv.Delete(ctx, nodeToken(s.node)+".pod."+uid)
}

func (s *kvPodCache) UpdateGlobal(ctx context.Context, g pleg.PodCacheGlobal) error {
	if err := s.check(); err != nil {
		return err
	}
	b, _ := json.Marshal(g)
	_, err := s.kv.Put(ctx, nodeToken(s.node)+".global", b)
	return err
}

var _ pleg.PodCacheStore = (*kvPodCache)(nil)

// kvLease is one service's leader lease in `leases`.
type kvLease struct {
	kv  jetstream.KeyValue
	key string
}

func newKvLease(kv jetstream.KeyValue, node, service string) *kvLease {
	return &kvLease{kv: kv, key: nodeToken(node) + ".leader." + service}
}

func (l *kvLease) Get(ctx context.Context) (*leader.Snapshot, error) {
	e, err := l.kv.Get(ctx, l.key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if errors.Is(err, jetstream.ErrKeyDeleted) {
		// Released: Create (revision 0) writes over the delete marker, as nats.js's create does.
		return &leader.Snapshot{Revision: 0}, nil
	}
	if err != nil {
		return nil, err
	}
	if e.Operation() != jetstream.KeyValuePut || len(e.Value()) == 0 {
		return &leader.Snapshot{Revision: e.Revision()}, nil
	}
	var r leader.Record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return nil, err
	}
	return &leader.Snapshot{Record: &r, Revision: e.Revision()}, nil
}

func isLostRace(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyExists) || strings.Contains(strings.ToLower(err.Error()), "wrong last sequence")
}

func (l *kvLease) Put(ctx context.Context, r leader.Record, revision uint64) (uint64, error) {
	b, _ := json.Marshal(r)
	var rev uint64
	var err error
	if revision == 0 {
		rev, err = l.kv.Create(ctx, l.key, b)
	} else {
		rev, err = l.kv.Update(ctx, l.key, b, revision)
	}
	if err != nil && isLostRace(err) {
		return 0, leader.ErrLostRace
	}
	return rev, err
}

func (l *kvLease) Release(ctx context.Context, revision uint64) error {
	err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(revision))
	if err != nil && isLostRace(err) {
		return nil // the lease is someone else's already
	}
	return err
}

var _ leader.Store = (*kvLease)(nil)
