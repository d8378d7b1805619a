package main

import (
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseDuration(t *testing.T) {
	cases := map[string]time.Duration{"0": 0, "500ms": 500 * time.Millisecond, "1s": time.Second, "2m": 2 * time.Minute, "1h30m": 90 * time.Minute, "1.5s": 1500 * time.Millisecond}
	for in, want := range cases {
		if got, ok := ParseDuration(in); !ok || got != want {
			t.Errorf("%s: got %v %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "1", "s", "1x", "1s2"} {
		if _, ok := ParseDuration(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig(envOf(map[string]string{"NODE_NAME": "node-a", "INSTANCE_ID": "x1"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 10313 || c.NatsUser != "pleg" || c.RelistPeriod != time.Second || c.RelistThreshold != 3*time.Minute || c.InspectConcurrency != 4 || c.PlegMode != "evented" || c.EventedRelist != 5*time.Minute || c.LeaderLeaseDuration != 4*time.Second || c.NatsURL[0] != "nats://127.0.0.1:4222" {
		t.Fatalf("%+v", c)
	}
}

func TestLoadConfigNamesEveryBadVariable(t *testing.T) {
	_, err := LoadConfig(envOf(map[string]string{"NODE_NAME": "Node_A", "RELIST_PERIOD": "fast", "INSPECT_CONCURRENCY": "100", "NATS_URL": "http://x", "PLEG_MODE": "sideways"}))
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, want := range []string{"NODE_NAME must be a lower-case RFC 1123 subdomain", `RELIST_PERIOD must be a duration like 500ms, 10s, 2m or 1h30m, got "fast"`, "INSPECT_CONCURRENCY must be between 1 and 64", "NATS_URL must be", `PLEG_MODE must be one of generic, evented, got "sideways"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q not in %s", want, err)
		}
	}
	_, err = LoadConfig(envOf(map[string]string{"NODE_NAME": "a", "LEADER_RENEW_DEADLINE": "5s"}))
	if err == nil || !strings.Contains(err.Error(), "the renew deadline (5000ms) must be shorter than the lease duration (4000ms)") {
		t.Fatalf("%v", err)
	}
}
