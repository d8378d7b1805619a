package main

// The environment, parsed once into a frozen Config, as libs/config and
// apps/pleg/src/pleg.config.ts read it: the shared variables, the leader
// election's and the PLEG's own, with the same names, defaults and
// formats. A bad value exits 1 with every problem named.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kubelet-split/contrib/pleg-go/internal/leader"
)

// Config is pleg's environment.
type Config struct {
	NodeName         string
	NatsURL          []string
	NatsUser         string
	NatsPasswordFile string
	Port             int
	Host             string
	HTTPTokenFile    string
	LogLevel         string
	InstanceID       string
	ShutdownGrace    time.Duration
	Tracing          string
	TraceMaxAge      time.Duration
	TraceMaxBytes    int
	ContractVersion  int

	LeaderLeaseDuration time.Duration
	LeaderRenewDeadline time.Duration
	LeaderRetryPeriod   time.Duration

	PlegMode           string
	RelistPeriod       time.Duration
	EventedRelist      time.Duration
	RelistThreshold    time.Duration
	InspectTimeout     time.Duration
	InspectConcurrency int
}

// DefaultPort is pleg's HTTP port (libs/service DEFAULT_PORTS).
const DefaultPort = 10313

var (
	nodeNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	instancePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	targetPattern   = regexp.MustCompile(`^[a-z-]+(,[a-z-]+)*$`)
	durationPart    = regexp.MustCompile(`(\d+(?:\.\d+)?)(ms|s|m|h)`)
)

// ParseDuration is libs/config parseDuration: "1h2m3s500ms", "0" is zero.
func ParseDuration(s string) (time.Duration, bool) {
	if s == "0" {
		return 0, true
	}
	units := map[string]float64{"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
	total, pos := 0.0, 0
	for pos < len(s) {
		loc := durationPart.FindStringSubmatchIndex(s[pos:])
		if loc == nil || loc[0] != 0 {
			return 0, false
		}
		n, _ := strconv.ParseFloat(s[pos+loc[2]:pos+loc[3]], 64)
		total += n * units[s[pos+loc[4]:pos+loc[5]]]
		pos += loc[1]
	}
	if pos == 0 || math.IsInf(total, 0) {
		return 0, false
	}
	return time.Duration(math.Round(total)) * time.Millisecond, true
}

type parser struct {
	env      func(string) (string, bool)
	problems []string
}

func (p *parser) raw(name string) (string, bool) {
	v, ok := p.env(name)
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

func (p *parser) bad(name, reason, describe string) {
	p.problems = append(p.problems, fmt.Sprintf("%s %s (%s)", name, reason, describe))
}

func (p *parser) str(name, def, describe string, pattern *regexp.Regexp, hint string) string {
	v, ok := p.raw(name)
	if !ok {
		return def
	}
	if pattern != nil && !pattern.MatchString(v) {
		p.bad(name, fmt.Sprintf("must be %s, got %q", hint, v), describe)
	}
	return v
}

func (p *parser) duration(name string, def time.Duration, describe string) time.Duration {
	v, ok := p.raw(name)
	if !ok {
		return def
	}
	d, good := ParseDuration(v)
	if !good {
		p.bad(name, fmt.Sprintf("must be a duration like 500ms, 10s, 2m or 1h30m, got %q", v), describe)
	}
	return d
}

func (p *parser) integer(name string, def, lo, hi int, describe string) int {
	v, ok := p.raw(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		p.bad(name, fmt.Sprintf("must be an integer, got %q", v), describe)
		return def
	}
	if n < lo || n > hi {
		p.bad(name, fmt.Sprintf("must be between %d and %d, got %d", lo, hi, n), describe)
	}
	return n
}

func (p *parser) oneOf(name, def string, options []string, describe string) string {
	v, ok := p.raw(name)
	if !ok {
		return def
	}
	for _, o := range options {
		if v == o {
			return v
		}
	}
	p.bad(name, fmt.Sprintf("must be one of %s, got %q", strings.Join(options, ", "), v), describe)
	return def
}

func randomInstance() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// LoadConfig parses env; the error names every bad variable.
func LoadConfig(env func(string) (string, bool)) (Config, error) {
	p := &parser{env: env}
	host, _ := os.Hostname()
	c := Config{}
	c.NodeName = p.str("NODE_NAME", strings.ToLower(host), "the node this stack serves", nodeNamePattern, "a lower-case RFC 1123 subdomain, as a Kubernetes node name")
	urls := "nats://127.0.0.1:4222"
	if v, ok := p.raw("NATS_URL"); ok {
		urls = v
	}
	for _, u := range strings.Split(urls, ",") {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.Host == "" || !(parsed.Scheme == "nats" || parsed.Scheme == "tls" || parsed.Scheme == "ws" || parsed.Scheme == "wss") {
			p.bad("NATS_URL", fmt.Sprintf("must be nats://, tls://, ws:// or wss:// URLs, got %q", u), "NATS server(s), comma-separated")
		}
		c.NatsURL = append(c.NatsURL, u)
	}
	if len(c.NatsURL) == 0 {
		p.bad("NATS_URL", "must name at least one URL", "NATS server(s), comma-separated")
	}
	c.NatsUser = p.str("NATS_USER", "pleg", "the NATS user to connect as", nil, "")
	c.NatsPasswordFile = p.str("NATS_PASSWORD_FILE", "", "a file holding NATS_USER's password", nil, "")
	c.Port = p.integer("PORT", DefaultPort, 0, 65535, "the service's HTTP port")
	c.Host = p.str("HOST", "127.0.0.1", "the HTTP bind address", nil, "")
	c.HTTPTokenFile = p.str("HTTP_TOKEN_FILE", "", "a file holding a bearer token that every HTTP route but /healthz, /readyz and /metrics requires", nil, "")
	c.LogLevel = p.oneOf("LOG_LEVEL", "info", []string{"debug", "info", "warn", "error"}, "log level")
	c.InstanceID = p.str("INSTANCE_ID", randomInstance(), "this replica, for the NATS connection name <service>@<node>#<instance>", instancePattern, `letters, digits, "-" or "_"`)
	c.ShutdownGrace = p.duration("SHUTDOWN_GRACE_PERIOD", 10*time.Second, "how long SIGTERM may take before the process exits anyway")
	c.Tracing = p.oneOf("TRACING", "on", []string{"on", "off"}, "record each hop of a pod's flow in the KUBELET_TRACES stream")
	c.TraceMaxAge = p.duration("TRACE_MAX_AGE", 24*time.Hour, "how long KUBELET_TRACES keeps a record")
	c.TraceMaxBytes = p.integer("TRACE_MAX_BYTES", 64*1024*1024, 1024, math.MaxInt32, "the most bytes KUBELET_TRACES keeps")
	c.ContractVersion = p.integer("CONTRACT_VERSION", buildContractVersion, 1, 999_999, "the contract version the service claims (in /info and every message's Kubelet-Contract header); default this build's: set only to test the skew policy (docs/adr/0034)")
	if t := p.str("TARGET", "pleg", "the modules this process runs", targetPattern, `"all" or service names separated by ","`); t != "pleg" {
		p.problems = append(p.problems, fmt.Sprintf("TARGET=%s, but this is the Go PLEG, which runs pleg alone: unset TARGET", t))
	}
	c.LeaderLeaseDuration = p.duration("LEADER_LEASE_DURATION", 4*time.Second, "how long a standby waits after the leader lease last changed before it takes over (LeaseDuration)")
	c.LeaderRenewDeadline = p.duration("LEADER_RENEW_DEADLINE", 3*time.Second, "how long a leader keeps acting without renewing its lease (RenewDeadline)")
	c.LeaderRetryPeriod = p.duration("LEADER_RETRY_PERIOD", 500*time.Millisecond, "how often the leader renews its lease and a standby looks at it (RetryPeriod)")
	c.PlegMode = p.oneOf("PLEG_MODE", "evented", []string{"generic", "evented"}, "evented, the runtime's container events with a relist as a safety net, falling back to the relist where the runtime streams none (containerd 1.6) or the stream breaks, and returning; or generic, the relist alone (docs/adr/0040)")
	c.RelistPeriod = p.duration("RELIST_PERIOD", time.Second, "the generic PLEG's relist period")
	c.EventedRelist = p.duration("EVENTED_RELIST_PERIOD", 300*time.Second, "the evented PLEG's safety-net relist period")
	c.RelistThreshold = p.duration("RELIST_THRESHOLD", 180*time.Second, "the PLEG is unhealthy when its last successful relist (evented: its last heartbeat) is older than this")
	c.InspectTimeout = p.duration("INSPECT_TIMEOUT", 5*time.Second, "how long inspecting one pod may take before it is left for the next relist")
	c.InspectConcurrency = p.integer("INSPECT_CONCURRENCY", 4, 1, 64, "pods inspected at once during a relist")
	if len(p.problems) == 0 {
		if problem := leader.Problem(leader.Options{LeaseDuration: c.LeaderLeaseDuration, RenewDeadline: c.LeaderRenewDeadline, RetryPeriod: c.LeaderRetryPeriod}); problem != "" {
			p.problems = append(p.problems, "LEADER_LEASE_DURATION, LEADER_RENEW_DEADLINE and LEADER_RETRY_PERIOD do not fit: "+problem)
		}
	}
	if len(p.problems) > 0 {
		return Config{}, fmt.Errorf("invalid configuration:\n  %s", strings.Join(p.problems, "\n  "))
	}
	return c, nil
}
