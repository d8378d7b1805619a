package main

// Trace records (libs/tracing trace-records.ts, docs/adr/0015): one small
// JSON record per hop of a pod's flow that this PLEG takes part in (an
// inspection request handled, a CRI call, a pod-cache write, an event
// published), kept in the JetStream stream KUBELET_TRACES under
// `trace.<node>.pleg.<uid>`. Off the hot path: a record goes into a bounded
// buffer published in batches with core NATS publishes; a full buffer drops
// it. TRACING=off records nothing.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	traceStream     = "KUBELET_TRACES"
	traceSubjects   = "trace.*.*.*"
	traceRecordType = "kubelet.v1.trace_hop"
	traceBuffer     = 10_000
	traceFlush      = 50 * time.Millisecond
)

// traceHop is a TraceRecord without its type and instance.
type traceHop struct {
	TraceID      string         `json:"traceId"`
	SpanID       string         `json:"spanId"`
	ParentSpanID string         `json:"parentSpanId,omitempty"`
	Kind         string         `json:"kind"`
	PodUID       string         `json:"podUid"`
	At           int64          `json:"at"`
	DurationMs   float64        `json:"durationMs"`
	Subject      string         `json:"subject,omitempty"`
	From         string         `json:"from,omitempty"`
	Method       string         `json:"method,omitempty"`
	MessageType  string         `json:"messageType,omitempty"`
	Detail       map[string]any `json:"detail,omitempty"`
	Bucket       string         `json:"bucket,omitempty"`
	Key          string         `json:"key,omitempty"`
	Revision     uint64         `json:"revision,omitempty"`
	Error        string         `json:"error,omitempty"`
}

type traceRecord struct {
	Type     string `json:"type"`
	Instance string `json:"instance"`
	traceHop
}

// tracer records hops; a nil *tracer records nothing.
type tracer struct {
	nc       *nats.Conn
	node     string
	instance string

	mu      sync.Mutex
	buf     []traceRecord
	timer   *time.Timer
	dropped int64
}

// ensureTraceStream makes KUBELET_TRACES, or brings its limits and subjects to these, as every service does at boot.
func ensureTraceStream(ctx context.Context, js jetstream.JetStream, maxAge time.Duration, maxBytes int64) error {
	s, err := js.Stream(ctx, traceStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: traceStream, Subjects: []string{traceSubjects}, Storage: jetstream.FileStorage, Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, MaxAge: maxAge, MaxBytes: maxBytes})
		return err
	}
	if err != nil {
		return err
	}
	cfg := s.CachedInfo().Config
	if len(cfg.Subjects) != 1 || cfg.Subjects[0] != traceSubjects || cfg.MaxAge != maxAge || cfg.MaxBytes != maxBytes {
		cfg.Subjects, cfg.MaxAge, cfg.MaxBytes = []string{traceSubjects}, maxAge, maxBytes
		_, err = js.UpdateStream(ctx, cfg)
	}
	return err
}

// record takes one hop; never blocks, never fails. A hop of no pod is not recorded.
func (t *tracer) record(h traceHop) {
	if t == nil || h.PodUID == "" || h.TraceID == "" || h.SpanID == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) >= traceBuffer {
		t.dropped++
		return
	}
	t.buf = append(t.buf, traceRecord{Type: traceRecordType, Instance: t.instance, traceHop: h})
	if t.timer == nil {
		t.timer = time.AfterFunc(traceFlush, t.flush)
	}
}

// flush publishes what is buffered.
func (t *tracer) flush() {
	if t == nil {
		return
	}
	t.mu.Lock()
	batch := t.buf
	t.buf = nil
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	t.mu.Unlock()
	for _, r := range batch {
		if strings.ContainsAny(r.PodUID, ".*> \t\r\n") {
			continue // a pod UID no subject token can carry (it came in a header)
		}
		b, err := json.Marshal(r)
		if err != nil || t.nc.Publish("trace."+t.node+".pleg."+r.PodUID, b) != nil {
			t.mu.Lock()
			t.dropped++
			t.mu.Unlock()
		}
	}
}

func msSince(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
