package main

// The CRI as cri-gateway serves it over NATS (libs/cri client.ts): JSON
// request on `cri.<node>.runtime.<Method>`, the deadline in Cri-Timeout-Ms,
// progress asked every Cri-Progress-Ms; the answer, or an `{error: {code,
// description}}` reply, comes to one wildcard subscription under this
// connection's inbox (`<inbox>.*`, each call its last token). A call whose
// gateway went silent (no answer, no progress for 5 s) fails Unavailable;
// no gateway at all (a 503 status) fails Unavailable at once.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubelet-split/contrib/pleg-go/internal/pleg"
	"github.com/nats-io/nats.go"
)

const (
	criTimeoutHeader  = "Cri-Timeout-Ms"
	criProgressHeader = "Cri-Progress-Ms"
	criListTimeout    = 30 * time.Second // the reads' deadline (DEFAULT_CRI_TIMEOUTS.listMs)
	criReplyMargin    = 2 * time.Second
	criProgressEvery  = time.Second
	criProgressStall  = 5 * time.Second
)

type natsCri struct {
	nc      *nats.Conn
	node    string
	service string
	sender  string
	tracer  *tracer
	// heard is told the headers of every reply (the gateway's contract version is judged there).
	heard func(h nats.Header, subject string)

	once    sync.Once
	subErr  error
	prefix  string
	next    atomic.Uint64
	mu      sync.Mutex
	waiting map[string]chan *nats.Msg
	// bytesOut/bytesIn count the payloads sent and received (the bench's NATS bytes per relist).
	bytesOut, bytesIn atomic.Int64
}

func newNatsCri(nc *nats.Conn, node, service, sender string, t *tracer) *natsCri {
	return &natsCri{nc: nc, node: node, service: service, sender: sender, tracer: t, waiting: map[string]chan *nats.Msg{}}
}

func (c *natsCri) subscribe() error {
	c.once.Do(func() {
		c.prefix = c.nc.NewInbox() + "."
		_, c.subErr = c.nc.Subscribe(c.prefix+"*", func(m *nats.Msg) {
			c.mu.Lock()
			ch := c.waiting[m.Subject[len(c.prefix):]]
			c.mu.Unlock()
			if ch != nil {
				select {
				case ch <- m:
				default:
				}
			}
		})
	})
	return c.subErr
}

type errorReply struct {
	Error *struct {
		Code        string `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
}

var grpcCodes = map[string]bool{"OK": true, "Canceled": true, "Unknown": true, "InvalidArgument": true, "DeadlineExceeded": true, "NotFound": true, "AlreadyExists": true, "PermissionDenied": true, "ResourceExhausted": true, "FailedPrecondition": true, "Aborted": true, "OutOfRange": true, "Unimplemented": true, "Internal": true, "Unavailable": true, "DataLoss": true, "Unauthenticated": true}

// Call makes one RuntimeService read with the list deadline, recorded as a `cri` hop of the pod's trace.
func (c *natsCri) Call(ctx context.Context, method string, req any, resp any) error {
	h, span := messageHeadersSpan(ctx, c.service, c.sender, "")
	t0 := time.Now()
	err := c.call(ctx, method, req, resp, h)
	hop := traceHop{Kind: "cri", TraceID: span.TraceID, SpanID: span.SpanID, ParentSpanID: parentSpan(ctx), PodUID: span.PodUID, Subject: fmt.Sprintf("cri.%s.runtime.%s", nodeToken(c.node), method), Method: method, At: t0.UnixMilli(), DurationMs: msSince(t0)}
	var ce *pleg.CriError
	if errors.As(err, &ce) {
		hop.Error = ce.Code
	}
	c.tracer.record(hop)
	return err
}

func (c *natsCri) call(ctx context.Context, method string, req any, resp any, h nats.Header) error {
	subject := fmt.Sprintf("cri.%s.runtime.%s", nodeToken(c.node), method)
	if err := c.subscribe(); err != nil {
		return &pleg.CriError{Code: "Unavailable", Description: subject + ": " + err.Error()}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	token := strconv.FormatUint(c.next.Add(1), 36)
	ch := make(chan *nats.Msg, 8)
	c.mu.Lock()
	c.waiting[token] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, token)
		c.mu.Unlock()
	}()
	h.Set(criTimeoutHeader, strconv.FormatInt(criListTimeout.Milliseconds(), 10))
	h.Set(criProgressHeader, strconv.FormatInt(criProgressEvery.Milliseconds(), 10))
	msg := &nats.Msg{Subject: subject, Reply: c.prefix + token, Header: h, Data: body}
	if err := c.nc.PublishMsg(msg); err != nil {
		return &pleg.CriError{Code: "Unavailable", Description: subject + ": " + err.Error()}
	}
	c.bytesOut.Add(int64(len(body)))
	wait := criListTimeout + criReplyMargin
	overall := time.NewTimer(wait)
	defer overall.Stop()
	stall := time.NewTimer(criProgressStall)
	defer stall.Stop()
	for {
		select {
		case <-ctx.Done():
			return &pleg.CriError{Code: "Canceled", Description: subject + ": context canceled"}
		case <-overall.C:
			return &pleg.CriError{Code: "DeadlineExceeded", Description: fmt.Sprintf("no answer on %s within %dms", subject, wait.Milliseconds())}
		case <-stall.C:
			return &pleg.CriError{Code: "Unavailable", Description: fmt.Sprintf("the cri-gateway went silent on %s: no answer and no progress for %dms", subject, criProgressStall.Milliseconds())}
		case m := <-ch:
			if m.Header.Get("Status") == "503" {
				return &pleg.CriError{Code: "Unavailable", Description: "no cri-gateway answers on " + subject}
			}
			if m.Header.Get(criProgressHeader) != "" {
				stall.Reset(criProgressStall)
				continue
			}
			if c.heard != nil {
				c.heard(m.Header, subject)
			}
			c.bytesIn.Add(int64(len(m.Data)))
			var e errorReply
			if json.Unmarshal(m.Data, &e) == nil && e.Error != nil {
				code := e.Error.Code
				if !grpcCodes[code] {
					code = "Unknown"
				}
				return &pleg.CriError{Code: code, Description: e.Error.Description}
			}
			if err := json.Unmarshal(m.Data, resp); err != nil {
				return &pleg.CriError{Code: "Unknown", Description: subject + ": " + err.Error()}
			}
			return nil
		}
	}
}

var _ pleg.Runtime = (*natsCri)(nil)
