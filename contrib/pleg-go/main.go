// Command pleg-go is a second implementation of kubelet-split's PLEG
// (apps/pleg), in Go, that takes its place on a node: the same environment,
// NATS user and subjects, pod-cache records and leader lease, the same
// HTTP endpoints (/healthz, /readyz, /info, /metrics, /mode). See
// docs/adr/0035-pleg-in-go.md for what it does and does not do.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kubelet-split/contrib/pleg-go/internal/leader"
	"github.com/kubelet-split/contrib/pleg-go/internal/pleg"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const service = "pleg"

func main() {
	cfg, err := LoadConfig(os.LookupEnv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s\n", service, err)
		os.Exit(1)
	}
	log := newLogger(cfg.LogLevel, map[string]any{"service": service, "node": cfg.NodeName, "instance": cfg.InstanceID, "pid": os.Getpid(), "impl": "pleg-go"})
	if err := run(cfg, log); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s\n", service, err)
		os.Exit(1)
	}
}

// health is what /healthz and /readyz report, by check name.
type health struct {
	mu        sync.Mutex
	readiness []namedCheck
	liveness  []namedCheck
	draining  bool
}

type check func() (bool, string)
type namedCheck struct {
	name string
	fn   check
	// full, when set, is the check with its degraded flag (contractVersions).
	full func() checkResult
}

type checkResult struct {
	OK       bool   `json:"ok"`
	Degraded bool   `json:"degraded,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

func (h *health) report(checks []namedCheck, draining bool) (bool, map[string]checkResult, []string) {
	out := map[string]checkResult{}
	ok := true
	var degraded []string
	for _, c := range checks {
		var r checkResult
		if c.full != nil {
			r = c.full()
		} else {
			r.OK, r.Detail = c.fn()
		}
		out[c.name] = r
		ok = ok && r.OK
		if r.Degraded {
			degraded = append(degraded, c.name)
		}
	}
	if draining {
		out["shutdown"] = checkResult{OK: false, Detail: "draining after SIGTERM"}
		ok = false
	}
	return ok, out, degraded
}

// natsUsers are the users of libs/nats permissions.ts: the services', and admin.
var natsUsers = map[string]bool{"config-source": true, "sync-loop": true, "pod-worker": true, "pleg": true, "prober": true, "status-manager": true, "kubelet-server": true, "node-status": true, "console": true, "cri-gateway": true, "admin": true}

// inboxPrefix is libs/nats inboxPrefix of the user this connection reads
// replies as: NATS_USER when it is one of the users (`pleg`, or `pleg@<node>`
// on a NATS of several nodes), else pleg's; admin keeps nats' default.
func inboxPrefix(user string) string {
	if user == "admin" {
		return "_INBOX"
	}
	if base, _, _ := strings.Cut(user, "@"); natsUsers[base] && base != "admin" {
		return "_INBOX_" + user
	}
	return "_INBOX_" + service
}

func run(cfg Config, log *jsonLogger) error {
	startedAt := time.Now()
	connName := fmt.Sprintf("%s@%s#%s", service, cfg.NodeName, cfg.InstanceID)
	node := nodeToken(cfg.NodeName)
	var violations []string
	var vmu sync.Mutex
	opts := []nats.Option{
		nats.Name(connName),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.Timeout(10 * time.Second),
		nats.PingInterval(10 * time.Second),
		nats.CustomInboxPrefix(inboxPrefix(cfg.NatsUser)),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("NATS disconnected", "err", err.Error())
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("NATS reconnected", "server", nc.ConnectedUrl()) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) || strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				v := fmt.Sprintf("NATS user %q: %s (grant it in libs/nats/src/permissions.ts NATS_ACCESS, or stop using it)", cfg.NatsUser, err.Error())
				log.Error("NATS permission violation: "+v, "natsUser", cfg.NatsUser)
				vmu.Lock()
				violations = append(violations, v)
				vmu.Unlock()
				return
			}
			log.Error("NATS error", "err", err.Error())
		}),
	}
	if cfg.NatsPasswordFile != "" {
		pw, err := os.ReadFile(cfg.NatsPasswordFile)
		if err != nil {
			return fmt.Errorf("NATS_PASSWORD_FILE %s cannot be read: %w", cfg.NatsPasswordFile, err)
		}
		opts = append(opts, nats.UserInfo(cfg.NatsUser, strings.TrimRight(string(pw), "\r\n")))
	} else {
		log.Warn("NATS_PASSWORD_FILE is not set: connecting to NATS without credentials")
	}
	// As nats.js's waitOnFirstConnect: the first connection is tried for 10 s (a NATS starting beside us), refused credentials at once.
	var nc *nats.Conn
	var err error
	for first := time.Now(); ; time.Sleep(500 * time.Millisecond) {
		nc, err = nats.Connect(strings.Join(cfg.NatsURL, ","), opts...)
		if err == nil || errors.Is(err, nats.ErrAuthorization) || time.Since(first) > 10*time.Second {
			break
		}
	}
	if err != nil {
		if errors.Is(err, nats.ErrAuthorization) {
			return fmt.Errorf("NATS refused the credentials of user %q (%v): check NATS_USER and the password in NATS_PASSWORD_FILE", cfg.NatsUser, err)
		}
		return fmt.Errorf("cannot connect to NATS at %s: %w", strings.Join(cfg.NatsURL, ","), err)
	}
	defer nc.Close()
	log.Info("connected to NATS", "server", nc.ConnectedUrl(), "connection", connName, "user", cfg.NatsUser)
	// Whatever this PLEG sends carries its contract version, whatever it hears is judged (ADR 0034).
	contractVersion = cfg.ContractVersion
	peers := &peerContracts{claim: claimOf(cfg.ContractVersion), self: connName, log: log.child("component", "contract-skew"), outside: map[string]*peerOutside{}}
	if cfg.ContractVersion != buildContractVersion {
		log.Warn("CONTRACT_VERSION overrides the contract version this build speaks", "contractVersion", cfg.ContractVersion, "buildContractVersion", buildContractVersion, "accepts", peers.claim.Accepts.String())
	}
	heard := func(h nats.Header, subject string) {
		if h != nil {
			peers.heard(h.Get(hdrSender), h.Get(hdrService), h.Get(hdrContract), subject)
		}
	}

	ctx, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	bootCtx, cancelBoot := context.WithTimeout(ctx, 30*time.Second)
	podCacheKV, err := openBucket(bootCtx, js, "pod-cache", "podCache", "pleg")
	if err != nil {
		cancelBoot()
		return fmt.Errorf("cannot open the pod-cache bucket: %w%s", err, violationsSuffix(&vmu, &violations))
	}
	leasesKV, err := openBucket(bootCtx, js, "leases", "leases", "whoever wins the compare-and-set")
	cancelBoot()
	if err != nil {
		return fmt.Errorf("cannot open the leases bucket: %w%s", err, violationsSuffix(&vmu, &violations))
	}

	var traces *tracer
	if cfg.Tracing == "on" {
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := ensureTraceStream(tctx, js, cfg.TraceMaxAge, int64(cfg.TraceMaxBytes))
		cancel()
		if err != nil {
			return fmt.Errorf("cannot make the %s stream (TRACING=on): %w%s", traceStream, err, violationsSuffix(&vmu, &violations))
		}
		traces = &tracer{nc: nc, node: node, instance: connName}
	}

	h := &health{}
	metrics := newPromMetrics(service, cfg.NodeName)
	clock := systemClock{}
	elector := leader.New(newKvLease(leasesKV, cfg.NodeName, service), leaderClock{}, log.child("component", "leader-election"), leader.Options{
		Identity: cfg.InstanceID, LeaseDuration: cfg.LeaderLeaseDuration, RenewDeadline: cfg.LeaderRenewDeadline, RetryPeriod: cfg.LeaderRetryPeriod,
	})
	cri := newNatsCri(nc, cfg.NodeName, service, connName, traces)
	cri.heard = heard
	sink := &natsSink{nc: nc, node: node, sender: connName, fence: elector, tracer: traces}
	generic := pleg.NewGeneric(pleg.Deps{
		Runtime: cri,
		Cache:   &kvPodCache{kv: podCacheKV, node: cfg.NodeName, fence: elector, tracer: traces},
		Sink:    sink,
		Clock:   clock,
		Logger:  log.child("component", "pleg"),
		Metrics: metrics,
		Files:   osFiles{},
		Traced:  podTrace,
	}, pleg.Options{InspectTimeout: cfg.InspectTimeout, InspectConcurrency: cfg.InspectConcurrency, RelistThreshold: cfg.RelistThreshold, Node: cfg.NodeName})
	askRelay := func(ctx context.Context) (*pleg.RelayStatus, bool) {
		h := messageHeaders(ctx, service, connName, "")
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		m, err := nc.RequestMsgWithContext(rctx, &nats.Msg{Subject: "kubelet." + node + ".service.cri-gateway.events", Header: h, Data: []byte("{}")})
		if err != nil {
			return nil, false
		}
		heard(m.Header, m.Subject)
		var s pleg.RelayStatus
		if json.Unmarshal(m.Data, &s) != nil || s.Type != pleg.RelayStatusType {
			return nil, false
		}
		return &s, true
	}
	reporter := &modeReporter{metrics: metrics, genericPeriod: cfg.RelistPeriod, eventedPeriod: cfg.EventedRelist, send: func(eventType, reason, message string) {
		subject, body := nodeEvent(cfg.NodeName, eventType, reason, message, time.Now())
		if err := nc.PublishMsg(&nats.Msg{Subject: subject, Header: messageHeaders(ctx, service, connName, ""), Data: body}); err != nil {
			log.Warn("could not send an event on the Node", "reason", reason, "err", err.Error())
		}
	}}
	// An event's inspection is a hop of its pod in the relay message's trace, when it carried one, else in a new one.
	eventTrace := func(ctx context.Context, uid string) context.Context {
		if cur := currentTrace(ctx); cur != nil && cur.TraceID != "" {
			t := *cur
			t.PodUID = uid
			return withTrace(ctx, t)
		}
		return podTrace(ctx, uid)
	}
	runner := pleg.NewRunner(pleg.RunnerDeps{Pleg: generic, Clock: clock, Logger: log.child("component", "pleg-mode"), AskRelay: askRelay, Reporter: reporter, EventTrace: eventTrace},
		pleg.RunnerOptions{RelistPeriod: cfg.RelistPeriod, EventedRelistPeriod: cfg.EventedRelist, EventedSilence: 90 * time.Second}, cfg.PlegMode)
	metrics.evented = func() bool { return runner.Mode().Effective == "evented" }

	var leadMu sync.Mutex
	leading := false
	isLeading := func() bool { leadMu.Lock(); defer leadMu.Unlock(); return leading }
	plegHealthy := func() (bool, string) {
		if !isLeading() {
			return true, "standby: not relisting"
		}
		return generic.Healthy()
	}
	metrics.healthy = func() bool { ok, _ := plegHealthy(); return ok }
	metrics.isLeader = func() bool { _, ok := elector.FencingToken(); return ok }
	metrics.contract = func() (int, int) { return cfg.ContractVersion, len(peers.peersOutsidePolicy()) }

	elector.Subscribe(leader.Listener{
		OnStartedLeading: func(token uint64) {
			leadMu.Lock()
			leading = true
			leadMu.Unlock()
			// The view its predecessor left, then a relist at once; without it the first relist reports every container as new.
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			n, err := generic.Restore(rctx)
			cancel()
			if t, ok := elector.FencingToken(); !ok || t != token {
				return // this term is over already: a later one starts its own
			}
			if err != nil {
				log.Warn("leading, but the pod cache could not be read: relisting from scratch", "err", err.Error())
			} else {
				log.Info("leading: PLEG view restored from the pod cache", "pods", n)
			}
			runner.Start()
		},
		OnStoppedLeading: func(string) {
			leadMu.Lock()
			leading = false
			leadMu.Unlock()
			runner.Stop()
		},
	})

	// Subscriptions, as apps/pleg's controller and CoreModule make them.
	var subjects []string
	var subs []*nats.Subscription
	subscribe := func(subject, queue string, fn nats.MsgHandler) error {
		var s *nats.Subscription
		var err error
		if queue == "" {
			s, err = nc.Subscribe(subject, fn)
		} else {
			s, err = nc.QueueSubscribe(subject, queue, fn)
		}
		if err == nil {
			subs = append(subs, s)
			subjects = append(subjects, subject)
		}
		return err
	}
	reply := func(m *nats.Msg, body any) {
		if m.Reply == "" {
			return
		}
		b, _ := json.Marshal(body)
		if err := m.RespondMsg(&nats.Msg{Header: replyHeaders(service, connName), Data: b}); err != nil {
			log.Error("could not send a reply", "subject", m.Subject, "err", err.Error())
		}
	}
	info := func() map[string]any {
		st := elector.Status()
		return map[string]any{
			"type": "kubelet.v1.service_info", "service": service, "node": cfg.NodeName, "instance": cfg.InstanceID, "connectionName": connName,
			"pid": os.Getpid(), "startedAt": startedAt.UTC().Format("2006-01-02T15:04:05.000Z"), "httpPort": cfg.Port, "subjects": subjects, "leadership": st,
			"contract":       peers.info(),
			"implementation": "pleg-go",
		}
	}
	// The runtime's container events and the relay's status (evented mode), in the relay message's trace.
	if err := subscribe("cri."+node+".events", "", func(m *nats.Msg) {
		heard(m.Header, m.Subject)
		rctx := ctx
		if t := traceFromHeaders(m.Header); t != nil && t.TraceID != "" {
			rctx = withTrace(ctx, *t)
		}
		runner.OnRuntimeMessage(rctx, m.Data)
	}); err != nil {
		return err
	}
	if err := subscribe("kubelet."+node+".pleg.inspect.*", "", func(m *nats.Msg) {
		heard(m.Header, m.Subject)
		var req struct {
			Type    string  `json:"type"`
			PodUID  string  `json:"podUid"`
			SyncEnd float64 `json:"syncEnd"`
		}
		if err := json.Unmarshal(m.Data, &req); err != nil || req.Type != "kubelet.v1.inspect_pod" || req.PodUID == "" {
			log.Warn("dropped an inspection request that is not a kubelet.v1.inspect_pod with a podUid", "subject", m.Subject, "type", req.Type)
			return
		}
		// The handling is a hop of its own: a child span of the message's, its CRI calls and writes under it.
		in := traceFromHeaders(m.Header)
		hop := nextSpan(in)
		if hop.PodUID == "" {
			hop.PodUID = req.PodUID
		}
		parent, from := "", ""
		if in != nil && in.TraceID != "" {
			parent = in.SpanID
		}
		if m.Header != nil {
			from = m.Header.Get(hdrSender)
		}
		go func() {
			t0 := time.Now()
			runner.OnInspectRequest(withTrace(ctx, hop), req.PodUID, int64(req.SyncEnd))
			traces.record(traceHop{Kind: "handle", TraceID: hop.TraceID, SpanID: hop.SpanID, ParentSpanID: parent, PodUID: hop.PodUID, From: from, Subject: m.Subject, At: t0.UnixMilli(), DurationMs: msSince(t0)})
		}()
	}); err != nil {
		return err
	}
	if err := subscribe("kubelet."+node+".service.pleg.mode", service, func(m *nats.Msg) {
		heard(m.Header, m.Subject)
		// `{}` reads the mode, `{"mode": "evented"}` switches it.
		var body map[string]any
		if len(m.Data) > 0 {
			if err := json.Unmarshal(m.Data, &body); err != nil {
				reply(m, errorBody("InvalidArgument", "the request must be JSON: "+err.Error()))
				return
			}
		}
		if v, ok := body["mode"]; ok && v != nil {
			mode, err := pleg.ParseMode(v)
			if err != nil {
				reply(m, errorBody("InvalidArgument", err.Error()))
				return
			}
			runner.SetMode(mode, "requested")
		}
		reply(m, runner.Mode())
	}); err != nil {
		return err
	}
	if err := subscribe("kubelet."+node+".service.pleg.info", service, func(m *nats.Msg) { heard(m.Header, m.Subject); reply(m, info()) }); err != nil {
		return err
	}
	if err := nc.FlushTimeout(10 * time.Second); err != nil {
		return err
	}
	time.Sleep(50 * time.Millisecond) // a refusal of our SUBs arrives as an async -ERR after the flush
	if v := violationsSuffix(&vmu, &violations); v != "" {
		return fmt.Errorf("the NATS server refused what this service needs%s", v)
	}

	h.readiness = []namedCheck{
		{name: "nats", fn: func() (bool, string) {
			if nc.IsClosed() {
				return false, "connection closed"
			}
			return true, nc.ConnectedUrl()
		}},
		{name: "natsPermissions", fn: func() (bool, string) {
			vmu.Lock()
			defer vmu.Unlock()
			if len(violations) == 0 {
				return true, ""
			}
			return false, strings.Join(violations, "; ")
		}},
		{name: "subscriptions", fn: func() (bool, string) { return true, strconv.Itoa(len(subjects)) + " subjects" }},
		{name: "leadership", fn: func() (bool, string) {
			s := elector.Status()
			if s.Role == "leader" && s.Token != nil {
				return true, fmt.Sprintf("leader (fencing token %d)", *s.Token)
			}
			if s.Leader != "" {
				return true, "standby; the leader is " + s.Leader
			}
			return true, "standby; no leader seen yet"
		}},
		{name: "contractVersions", full: peers.check},
		{name: "pleg", fn: func() (bool, string) {
			_, d := plegHealthy()
			mode := runner.Mode()
			fell := ""
			if mode.FallbackReason != "" {
				fell = " (fell back: " + mode.FallbackReason + ")"
			}
			return true, "mode " + mode.Effective + fell + "; " + d
		}},
	}
	h.liveness = []namedCheck{{name: "pleg", fn: plegHealthy}}

	token := ""
	if cfg.HTTPTokenFile != "" {
		b, err := os.ReadFile(cfg.HTTPTokenFile)
		if err != nil {
			return fmt.Errorf("HTTP_TOKEN_FILE %s cannot be read: %w", cfg.HTTPTokenFile, err)
		}
		token = strings.TrimSpace(string(b))
	}
	srv := &http.Server{Handler: httpHandler(h, metrics, info, runner, cfg.Host, token), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("cannot listen on %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server failed", "err", err.Error())
		}
	}()
	elector.Start()
	log.Info("service ready", "port", cfg.Port, "host", cfg.Host, "subjects", subjects, "startupMs", time.Since(startedAt).Milliseconds())

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	sig := <-sigs
	log.Info("shutting down: no new work", "reason", sig.String())
	timer := time.AfterFunc(cfg.ShutdownGrace, func() {
		log.Error("grace period over, exiting anyway", "graceMs", cfg.ShutdownGrace.Milliseconds())
		os.Exit(1)
	})
	defer timer.Stop()
	h.mu.Lock()
	h.draining = true
	h.mu.Unlock()
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 2*time.Second)
	elector.Stop(stopCtx) // stop acting, then hand the lease over: a standby leads at once
	cancelStop()
	runner.Stop()
	for _, s := range subs {
		_ = s.Unsubscribe()
	}
	shutCtx, cancelShut := context.WithTimeout(context.Background(), 2*time.Second)
	_ = srv.Shutdown(shutCtx)
	cancelShut()
	cancelAll()
	traces.flush()
	_ = nc.Drain()
	for i := 0; i < 100 && !nc.IsClosed(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	log.Info("shut down cleanly")
	return nil
}

func violationsSuffix(mu *sync.Mutex, v *[]string) string {
	mu.Lock()
	defer mu.Unlock()
	if len(*v) == 0 {
		return ""
	}
	return ": " + strings.Join(*v, "; ")
}

// natsSink is plegCh on NATS: `kubelet.<node>.pleg.<uid>`, the leader's only, with its fencing token.
type natsSink struct {
	nc     *nats.Conn
	node   string
	sender string
	fence  fence
	tracer *tracer
	// bytes counts the payloads published (the bench's NATS bytes).
	mu    sync.Mutex
	bytes int64
}

func (s *natsSink) Publish(ctx context.Context, e pleg.Event) bool {
	token, ok := s.fence.FencingToken()
	if !ok || e.ID == "" || strings.ContainsAny(e.ID, ".*> \t") {
		return false
	}
	b, err := json.Marshal(e)
	if err != nil {
		return false
	}
	h, span := messageHeadersSpan(ctx, service, s.sender, e.ID)
	h.Set(hdrLeaderRevision, strconv.FormatUint(token, 10))
	subject := "kubelet." + s.node + ".pleg." + e.ID
	at := time.Now().UnixMilli()
	if err := s.nc.PublishMsg(&nats.Msg{Subject: subject, Header: h, Data: b}); err != nil {
		return false
	}
	detail := map[string]any{"eventType": string(e.EventType)}
	if e.Data != "" {
		detail["data"] = e.Data
	}
	s.tracer.record(traceHop{Kind: "publish", TraceID: span.TraceID, SpanID: span.SpanID, ParentSpanID: parentSpan(ctx), PodUID: e.ID, Subject: subject, At: at, MessageType: e.Type, Detail: detail})
	s.mu.Lock()
	s.bytes += int64(len(b))
	s.mu.Unlock()
	return true
}

// osFiles reads the host's files (tail.ReadAtMost).
type osFiles struct{}

func (osFiles) ReadTail(path string, maxBytes int) (string, bool, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", false, false, err
	}
	size := st.Size()
	n := min(size, int64(maxBytes))
	buf := make([]byte, n)
	read, err := f.ReadAt(buf, size-n)
	if err != nil && read < int(n) && !errors.Is(err, os.ErrClosed) && err.Error() != "EOF" {
		return "", false, false, err
	}
	return string(buf[:read]), size > int64(maxBytes), true, nil
}
