package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestJudgePeer(t *testing.T) {
	cases := []struct {
		name         string
		self, peer   int
		ok           bool
		why, inWords string
	}{
		{"same version", 1, 1, true, "", ""},
		{"one older, within n-1", 2, 1, true, "", ""},
		{"one newer: it reads us", 1, 2, true, "", ""},
		{"two older", 3, 1, false, "peer too old", "the peer speaks contract 1; this service speaks 3 and accepts 2..3"},
		{"two newer", 1, 3, false, "peer too new", "the peer speaks contract 3, which accepts 2..3; this service speaks 1 and accepts 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, why, reason := judgePeer(claimOf(tc.self), tc.peer)
			if ok != tc.ok || why != tc.why || reason != tc.inWords {
				t.Fatalf("got %v %q %q", ok, why, reason)
			}
		})
	}
}

func TestPeerOutsideThePolicyDegradesReadinessOnce(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	log := &jsonLogger{mu: &mu, min: 0, base: map[string]any{}, write: func(b []byte) { out.Write(b) }}
	p := &peerContracts{claim: claimOf(1), self: "pleg@n#0", log: log, outside: map[string]*peerOutside{}}
	p.heard("pod-worker@n#0", "pod-worker", "1", "kubelet.n.pleg.inspect.u")
	p.heard("pleg@n#0", "pleg", "9", "x") // its own
	p.heard("", "", "9", "x")             // nobody named
	p.heard("sync-loop@n#1", "sync-loop", "not-a-number", "x")
	if r := p.check(); !r.OK || r.Degraded {
		t.Fatalf("%+v", r)
	}
	p.heard("pod-worker@n#1", "pod-worker", "3", "kubelet.n.pleg.inspect.u")
	p.heard("pod-worker@n#1", "pod-worker", "3", "kubelet.n.pleg.inspect.v")
	r := p.check()
	if !r.OK || !r.Degraded || !strings.Contains(r.Detail, "pod-worker@n#1 speaks 3 (peer too new)") {
		t.Fatalf("%+v", r)
	}
	if n := strings.Count(out.String(), "peer outside the contract skew policy"); n != 1 {
		t.Fatalf("logged %d times: %s", n, out.String())
	}
	if peers := p.peersOutsidePolicy(); len(peers) != 1 || peers[0].Subject != "kubelet.n.pleg.inspect.v" {
		t.Fatalf("%+v", peers)
	}
	p.heard("pod-worker@n#1", "pod-worker", "1", "x")
	if r := p.check(); r.Degraded || !strings.Contains(out.String(), "peer is back within the contract skew policy") {
		t.Fatalf("back within: %+v", r)
	}
}
