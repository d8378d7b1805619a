package main

// The evented PLEG's reporter, as apps/pleg/src/adapters/evented-pleg-reporter.ts:
// the kubelet's kubelet_evented_pleg_connection_* metrics (pkg/kubelet/metrics)
// and an event on the Node at each fallback (ContainerEventsUnavailable:
// Warning, Normal where the runtime has no stream) and each return
// (ContainerEventsResumed), on `kubelet.<node>.events.<node>` as ours'
// NatsEventRecorder.nodeEvent sends it (the pleg user may publish
// `kubelet.*.events.*`).

import (
	"encoding/json"
	"time"

	"github.com/kubelet-split/contrib/pleg-go/internal/pleg"
)

// The reasons of the evented PLEG's events on the Node (EventedPlegEvents).
const (
	reasonEventsUnavailable = "ContainerEventsUnavailable"
	reasonEventsResumed     = "ContainerEventsResumed"
)

// eventMessage is an EventMessage (`kubelet.v1.event`, libs/contracts messages.ts).
type eventMessage struct {
	Type           string         `json:"type"`
	InvolvedObject involvedObject `json:"involvedObject"`
	EventType      string         `json:"eventType"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message"`
	Source         eventSource    `json:"source"`
	Timestamp      string         `json:"timestamp"`
}

type involvedObject struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	UID  string `json:"uid"`
}

type eventSource struct {
	Component string `json:"component"`
	Host      string `json:"host"`
}

// nodeEvent is the subject and body of an event on this node, as NatsEventRecorder.nodeEvent makes them.
func nodeEvent(node, eventType, reason, message string, at time.Time) (string, []byte) {
	b, _ := json.Marshal(eventMessage{
		Type: "kubelet.v1.event", InvolvedObject: involvedObject{Kind: "Node", Name: node, UID: node},
		EventType: eventType, Reason: reason, Message: message,
		Source: eventSource{Component: "kubelet", Host: node}, Timestamp: iso(at),
	})
	return "kubelet." + nodeToken(node) + ".events." + nodeToken(node), b
}

// modeReporter is pleg.ModeReporter on the metrics and the Node's events.
type modeReporter struct {
	metrics *promMetrics
	// send publishes an event on the Node; it must not block (the runner's lock is held).
	send                         func(eventType, reason, message string)
	genericPeriod, eventedPeriod time.Duration
}

func (r *modeReporter) Connected(resumed bool) {
	r.metrics.eventedConnected()
	if resumed {
		r.send("Normal", reasonEventsResumed, "PLEG uses the container runtime's events again; it relists every "+fmtFloat(r.eventedPeriod.Seconds())+"s")
	}
}

func (r *modeReporter) FellBack(reason string, fault bool) {
	r.metrics.eventedFellBack()
	eventType := "Normal"
	if fault {
		eventType = "Warning"
	}
	r.send(eventType, reasonEventsUnavailable, "PLEG relists every "+fmtFloat(r.genericPeriod.Seconds())+"s: "+reason)
}

func (r *modeReporter) Latency(seconds float64) { r.metrics.eventedLatency(seconds) }

var _ pleg.ModeReporter = (*modeReporter)(nil)
