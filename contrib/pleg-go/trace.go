package main

// The message headers that let one pod's flow be traced across services
// (libs/tracing headers.ts): W3C traceparent, the pod UID, the sending
// service and instance, and a leader's fencing token.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

const (
	hdrTraceparent    = "traceparent"
	hdrPodUID         = "Kubelet-Pod-UID"
	hdrService        = "Kubelet-Service"
	hdrLeaderRevision = "Kubelet-Leader-Revision"
	hdrSender         = "Kubelet-Sender"
)

// trace is the work running now: its trace and span, and its pod.
type trace struct {
	TraceID, SpanID string
	Sampled         bool
	PodUID          string
}

type traceKey struct{}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// nextSpan is a new span of parent's trace, or of a new trace.
func nextSpan(parent *trace) trace {
	if parent == nil || parent.TraceID == "" {
		return trace{TraceID: randomHex(16), SpanID: randomHex(8), Sampled: true}
	}
	return trace{TraceID: parent.TraceID, SpanID: randomHex(8), Sampled: parent.Sampled, PodUID: parent.PodUID}
}

func withTrace(ctx context.Context, t trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

func currentTrace(ctx context.Context) *trace {
	if t, ok := ctx.Value(traceKey{}).(trace); ok {
		return &t
	}
	return nil
}

// podTrace is a new trace for one pod's hop (a relist is caused by no message).
func podTrace(ctx context.Context, uid string) context.Context {
	t := nextSpan(nil)
	t.PodUID = uid
	return withTrace(ctx, t)
}

var traceparentRe = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)

// traceFromHeaders is the trace an incoming message continues.
func traceFromHeaders(h nats.Header) *trace {
	if h == nil {
		return nil
	}
	m := traceparentRe.FindStringSubmatch(strings.ToLower(strings.TrimSpace(h.Get(hdrTraceparent))))
	t := &trace{PodUID: h.Get(hdrPodUID)}
	if m != nil && strings.Trim(m[1], "0") != "" && strings.Trim(m[2], "0") != "" {
		t.TraceID, t.SpanID = m[1], m[2]
		flags, _ := strconv.ParseUint(m[3], 16, 8)
		t.Sampled = flags&1 == 1
	}
	return t
}

// messageHeaders are an outgoing message's: a child span of the current work's trace, its pod, the sender.
func messageHeaders(ctx context.Context, service, sender, podUID string) nats.Header {
	h, _ := messageHeadersSpan(ctx, service, sender, podUID)
	return h
}

// messageHeadersSpan is messageHeaders and the span they carry (its pod filled in), for the message's trace record.
func messageHeadersSpan(ctx context.Context, service, sender, podUID string) (nats.Header, trace) {
	h := nats.Header{}
	cur := currentTrace(ctx)
	span := nextSpan(cur)
	flags := "00"
	if span.Sampled {
		flags = "01"
	}
	h.Set(hdrTraceparent, "00-"+span.TraceID+"-"+span.SpanID+"-"+flags)
	if podUID == "" && cur != nil {
		podUID = cur.PodUID
	}
	if podUID != "" {
		h.Set(hdrPodUID, podUID)
	}
	h.Set(hdrService, service)
	if sender != "" {
		h.Set(hdrSender, sender)
	}
	h.Set(hdrContract, strconv.Itoa(contractVersion))
	span.PodUID = podUID
	return h, span
}

// contractVersion is the version this process claims (CONTRACT_VERSION), set once at start.
var contractVersion = buildContractVersion

// replyHeaders are a reply's: who answers and the contract version it speaks.
func replyHeaders(service, sender string) nats.Header {
	h := nats.Header{}
	h.Set(hdrService, service)
	if sender != "" {
		h.Set(hdrSender, sender)
	}
	h.Set(hdrContract, strconv.Itoa(contractVersion))
	return h
}

// parentSpan is the span of the work running now, the parent of its hops.
func parentSpan(ctx context.Context) string {
	if t := currentTrace(ctx); t != nil {
		return t.SpanID
	}
	return ""
}
