package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNodeEventIsOursNodeEvent(t *testing.T) {
	subject, body := nodeEvent("node.a", "Warning", reasonEventsUnavailable, "PLEG relists every 1s: x", time.UnixMilli(1_700_000_000_123))
	if subject != "kubelet.node_a.events.node_a" {
		t.Fatal(subject)
	}
	want := `{"type":"kubelet.v1.event","involvedObject":{"kind":"Node","name":"node.a","uid":"node.a"},"eventType":"Warning","reason":"ContainerEventsUnavailable","message":"PLEG relists every 1s: x","source":{"component":"kubelet","host":"node.a"},"timestamp":"2023-11-14T22:13:20.123Z"}`
	if string(body) != want {
		t.Fatalf("\n got %s\nwant %s", body, want)
	}
}

func TestModeReporterCountsAndTellsTheNode(t *testing.T) {
	m := newPromMetrics("pleg", "node-a")
	var sent []string
	r := &modeReporter{metrics: m, send: func(ty, reason, msg string) { sent = append(sent, ty+" "+reason+" "+msg) }, genericPeriod: time.Second, eventedPeriod: 5 * time.Minute}
	r.Connected(false)
	r.FellBack("the runtime does not stream container events: unknown method", false)
	r.FellBack("the container event stream broke: EOF", true)
	r.Connected(true)
	r.Latency(0.04)
	if want := []string{
		"Normal ContainerEventsUnavailable PLEG relists every 1s: the runtime does not stream container events: unknown method",
		"Warning ContainerEventsUnavailable PLEG relists every 1s: the container event stream broke: EOF",
		"Normal ContainerEventsResumed PLEG uses the container runtime's events again; it relists every 300s",
	}; !reflect.DeepEqual(sent, want) {
		t.Fatalf("%q", sent)
	}
	m.evented = func() bool { return true }
	text := m.Text()
	for _, line := range []string{
		`kubelet_evented_pleg_connection_error_count{node="node-a",service="pleg"} 2`,
		`kubelet_evented_pleg_connection_success_count{node="node-a",service="pleg"} 2`,
		`kubelet_evented_pleg_connection_latency_seconds_bucket{le="0.05",node="node-a",service="pleg"} 1`,
		`kubelet_evented_pleg_connection_latency_seconds_count{node="node-a",service="pleg"} 1`,
		`kubelet_split_pleg_evented{node="node-a",service="pleg"} 1`,
		"# TYPE kubelet_evented_pleg_connection_error_count counter",
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("%q not in /metrics", line)
		}
	}
}
