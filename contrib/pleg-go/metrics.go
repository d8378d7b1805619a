package main

// The metrics pleg serves on /metrics, in Prometheus' text format, with the
// default labels every service's registry has (service, node): the
// kubelet's kubelet_pleg_* and kubelet_evented_pleg_connection_*
// (pkg/kubelet/metrics), kubelet_split_pleg_healthy, kubelet_split_pleg_evented,
// leader_election_master_status, and the process' CPU and memory.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

var plegBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

type histogram struct {
	counts []uint64
	sum    float64
	count  uint64
}

func (h *histogram) observe(v float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(plegBuckets))
	}
	for i, b := range plegBuckets {
		if v <= b {
			h.counts[i]++
		}
	}
	h.sum += v
	h.count++
}

type promMetrics struct {
	labels string

	mu       sync.Mutex
	duration histogram
	interval histogram
	lastSeen float64
	discards uint64
	// The evented PLEG's stream (evented-pleg-reporter.ts): each connection and return, each fallback, each event's latency.
	eventedSuccesses uint64
	eventedErrors    uint64
	eventedLatencies histogram
	// evented: whether the runtime's container events are used now (kubelet_split_pleg_evented).
	evented   func() bool
	healthy   func() bool
	isLeader  func() bool
	contract  func() (version int, outside int)
	startTime time.Time
}

func newPromMetrics(service, node string) *promMetrics {
	return &promMetrics{labels: fmt.Sprintf(`node=%q,service=%q`, node, service), startTime: time.Now()}
}

func (m *promMetrics) Relisted(d, interval time.Duration, hasInterval bool, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.duration.observe(d.Seconds())
	if hasInterval {
		m.interval.observe(interval.Seconds())
	}
	m.lastSeen = float64(at.UnixMilli()) / 1000
}

func (m *promMetrics) Discarded(n int) {
	m.mu.Lock()
	m.discards += uint64(n)
	m.mu.Unlock()
}

func (m *promMetrics) eventedConnected() { m.mu.Lock(); m.eventedSuccesses++; m.mu.Unlock() }
func (m *promMetrics) eventedFellBack()  { m.mu.Lock(); m.eventedErrors++; m.mu.Unlock() }
func (m *promMetrics) eventedLatency(seconds float64) {
	m.mu.Lock()
	m.eventedLatencies.observe(seconds)
	m.mu.Unlock()
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func (m *promMetrics) writeHistogram(b *strings.Builder, name, help string, h *histogram) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	counts := h.counts
	if counts == nil {
		counts = make([]uint64, len(plegBuckets))
	}
	for i, le := range plegBuckets {
		fmt.Fprintf(b, "%s_bucket{le=\"%s\",%s} %d\n", name, fmtFloat(le), m.labels, counts[i])
	}
	fmt.Fprintf(b, "%s_bucket{le=\"+Inf\",%s} %d\n%s_sum{%s} %s\n%s_count{%s} %d\n", name, m.labels, h.count, name, m.labels, fmtFloat(h.sum), name, m.labels, h.count)
}

func gauge(b *strings.Builder, kind, name, help, labels string, v float64) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n%s{%s} %s\n", name, help, name, kind, name, labels, fmtFloat(v))
}

func boolNum(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

// procStat is this process' CPU seconds and resident bytes, from /proc/self.
func procStat() (cpuSeconds float64, rssBytes float64) {
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 21 {
				ut, _ := strconv.ParseFloat(f[11], 64)
				st, _ := strconv.ParseFloat(f[12], 64)
				cpuSeconds = (ut + st) / 100
				rss, _ := strconv.ParseFloat(f[21], 64)
				rssBytes = rss * float64(os.Getpagesize())
			}
		}
	}
	return
}

func (m *promMetrics) Text() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	m.writeHistogram(&b, "kubelet_pleg_relist_duration_seconds", "Duration in seconds for relisting pods in PLEG.", &m.duration)
	m.writeHistogram(&b, "kubelet_pleg_relist_interval_seconds", "Interval in seconds between relisting in PLEG.", &m.interval)
	gauge(&b, "gauge", "kubelet_pleg_last_seen_seconds", "Timestamp in seconds when PLEG was last seen active.", m.labels, m.lastSeen)
	gauge(&b, "counter", "kubelet_pleg_discard_events", "The number of discard events in PLEG.", m.labels, float64(m.discards))
	gauge(&b, "counter", "kubelet_evented_pleg_connection_error_count", "The number of errors encountered during the establishment of streaming connection with the CRI runtime.", m.labels, float64(m.eventedErrors))
	gauge(&b, "counter", "kubelet_evented_pleg_connection_success_count", "The number of times a streaming client was obtained to receive CRI Events.", m.labels, float64(m.eventedSuccesses))
	m.writeHistogram(&b, "kubelet_evented_pleg_connection_latency_seconds", "The latency of streaming connection with the CRI runtime, measured in seconds.", &m.eventedLatencies)
	if m.evented != nil {
		gauge(&b, "gauge", "kubelet_split_pleg_evented", "1 while the PLEG uses the runtime's container events (evented mode, not fallen back to the relist).", m.labels, boolNum(m.evented()))
	}
	if m.healthy != nil {
		gauge(&b, "gauge", "kubelet_split_pleg_healthy", "1 when the last successful relist is within RELIST_THRESHOLD.", m.labels, boolNum(m.healthy()))
	}
	if m.isLeader != nil {
		gauge(&b, "gauge", "leader_election_master_status", "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.", `name="pleg",`+m.labels, boolNum(m.isLeader()))
	}
	if m.contract != nil {
		v, n := m.contract()
		gauge(&b, "gauge", "kubelet_contract_peers_outside_policy", "Peers heard in the last 5 minutes whose contract version is outside the skew policy (docs/adr/0034-version-skew-policy.md); the service speaks contract_version", fmt.Sprintf(`contract_version="%d",`, v)+m.labels, float64(n))
	}
	cpu, rss := procStat()
	gauge(&b, "counter", "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", m.labels, cpu)
	gauge(&b, "gauge", "process_resident_memory_bytes", "Resident memory size in bytes.", m.labels, rss)
	gauge(&b, "gauge", "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", m.labels, float64(m.startTime.Unix()))
	return b.String()
}
