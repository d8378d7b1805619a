// Package pleg is the generic PLEG (pkg/kubelet/pleg/generic.go) of
// kubelet-split, in Go: relist the runtime through cri-gateway, compare each
// pod with the last relist, inspect the pods that changed, write the pod
// cache, send the lifecycle events. What it works with are the ports below;
// the NATS adapters live in package main.
package pleg

import (
	"context"
	"encoding/json"
	"time"
)

// Runtime is the CRI's RuntimeService as cri-gateway serves it over NATS
// (`cri.<node>.runtime.<Method>`, JSON in and out): the reads a PLEG makes.
type Runtime interface {
	// Call makes one RuntimeService call; resp is filled from the JSON reply.
	// An error reply comes back as a *CriError with its gRPC code.
	Call(ctx context.Context, method string, req any, resp any) error
}

// PodCacheStore is the `pod-cache` bucket; the PLEG is its only writer.
type PodCacheStore interface {
	Load(ctx context.Context) (entries []PodCacheEntry, global int64, err error)
	Set(ctx context.Context, e PodCacheEntry) error
	Delete(ctx context.Context, uid string) error
	// UpdateGlobal writes `<node>.global`: the cache's clock (a successful
	// relist's time), the thresholds past which the PLEG counts as
	// unhealthy, and its sign of life.
	UpdateGlobal(ctx context.Context, g PodCacheGlobal) error
}

// EventSink is plegCh on NATS: `kubelet.<node>.pleg.<uid>`.
type EventSink interface {
	// Publish returns false when the event could not be sent (counted as discarded).
	Publish(ctx context.Context, e Event) bool
}

// Metrics are the kubelet's kubelet_pleg_* metrics.
type Metrics interface {
	Relisted(duration time.Duration, interval time.Duration, hasInterval bool, at time.Time)
	Discarded(n int)
}

// FileReader reads the host's files a container's status points at (its
// termination message file and its CRI log).
type FileReader interface {
	// ReadTail returns at most the last maxBytes of the file, and whether it
	// was longer; ok is false when the file does not exist.
	ReadTail(path string, maxBytes int) (text string, truncated bool, ok bool, err error)
}

// Clock is time, injected: tests step a fake one.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f in its own goroutine after d; Stop cancels it.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface{ Stop() bool }

// Logger is a structured logger (pino's shape on stdout, in package main).
type Logger interface {
	Info(msg string, kv ...any)
	Warn(msg string, kv ...any)
}

// PodCacheEntry is the `pod-cache` record, key `<node>.pod.<uid>`: the
// statuses as the CRI's JSON, kept as the gateway sent them.
type PodCacheEntry struct {
	UID               string            `json:"uid"`
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	Timestamp         int64             `json:"timestamp"`
	SandboxStatuses   []json.RawMessage `json:"sandboxStatuses"`
	ContainerStatuses []json.RawMessage `json:"containerStatuses"`
	IPs               []string          `json:"ips"`
}

// PodCacheGlobal is the record at `<node>.global`: the cache's clock, and
// what the sync loop's gate reads of the PLEG's health.
type PodCacheGlobal struct {
	Timestamp         int64  `json:"timestamp"`
	RelistThresholdMs *int64 `json:"relistThresholdMs,omitempty"`
	// AliveAt is the PLEG's last sign of life (ms since the epoch): each
	// write of the record, a relist's and, between evented mode's rare
	// relists, a heartbeat's (Generic.Heartbeat).
	AliveAt *int64 `json:"aliveAt,omitempty"`
	// AliveThresholdMs is RELIST_THRESHOLD as configured, never widened:
	// the gate trips once AliveAt is older.
	AliveThresholdMs *int64 `json:"aliveThresholdMs,omitempty"`
}

// EventType is pleg.PodLifecycleEventType.
type EventType string

const (
	ContainerStarted EventType = "ContainerStarted"
	ContainerDied    EventType = "ContainerDied"
	ContainerRemoved EventType = "ContainerRemoved"
	PodSync          EventType = "PodSync"
	ContainerChanged EventType = "ContainerChanged"
)

// EventMessageType is the versioned `type` of a pod lifecycle event message.
const EventMessageType = "kubelet.v1.pod_lifecycle_event"

// Event is a PodLifecycleEventMessage: ID the pod UID, Data the container ID.
type Event struct {
	Type      string    `json:"type"`
	ID        string    `json:"id"`
	EventType EventType `json:"eventType"`
	Data      string    `json:"data,omitempty"`
}

// CriError is an error reply of cri-gateway, its gRPC code kept by name.
type CriError struct {
	Code        string
	Description string
}

func (e *CriError) Error() string { return e.Code + ": " + e.Description }
