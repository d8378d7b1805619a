package pleg

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func newRunnerRig(relay func(context.Context) (*RelayStatus, bool)) (*rig, *Runner) {
	r := newRig()
	run := NewRunner(r.g, r.sink, r.clock, nopLogger{}, RunnerOptions{RelistPeriod: time.Second, EventedRelistPeriod: 300 * time.Second, EventedSilence: 90 * time.Second}, "evented", relay)
	return r, run
}

func waitFor(t *testing.T, what string, cond func() bool) {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func status(state, detail string) []byte {
	b, _ := json.Marshal(RelayStatus{Type: RelayStatusType, State: state, Detail: detail})
	return b
}

func TestEventedFallsBack(t *testing.T) {
	cases := []struct {
		name   string
		relay  *RelayStatus
		feed   [][]byte
		step   time.Duration
		reason string
	}{
		{"the relay answers unsupported when asked", &RelayStatus{Type: RelayStatusType, State: "unsupported", Detail: "containerd 1.6"}, nil, 0, "the runtime does not stream container events: containerd 1.6"},
		{"three reconnecting statuses in a row", nil, [][]byte{status("reconnecting", "x"), status("reconnecting", "x"), status("reconnecting", "eof")}, 0, "the container event stream keeps failing: eof"},
		{"no word from the relay for 90s", nil, nil, 100 * time.Second, "no word from the container event relay for 90s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, run := newRunnerRig(func(context.Context) (*RelayStatus, bool) { return tc.relay, tc.relay != nil })
			run.Start()
			defer run.Stop()
			if tc.relay == nil && run.Mode().Effective != "evented" {
				t.Fatal("evented at start")
			}
			for _, m := range tc.feed {
				run.OnRuntimeMessage(context.Background(), m)
			}
			for i := 0; i < 11 && tc.step > 0; i++ {
				r.clock.Step(tc.step / 10)
			}
			waitFor(t, "the fallback", func() bool { return run.Mode().Effective == "generic" })
			if m := run.Mode(); m.Desired != "evented" || m.FallbackReason != tc.reason {
				t.Fatalf("%+v", m)
			}
		})
	}
}

func TestEventedStreamingStaysAndWritesEvents(t *testing.T) {
	r, run := newRunnerRig(nil)
	run.Start()
	defer run.Stop()
	run.OnRuntimeMessage(context.Background(), status("reconnecting", "x"))
	run.OnRuntimeMessage(context.Background(), status("reconnecting", "x"))
	run.OnRuntimeMessage(context.Background(), status("streaming", ""))
	run.OnRuntimeMessage(context.Background(), status("reconnecting", "x"))
	if run.Mode().Effective != "evented" {
		t.Fatal("a streaming status resets the count")
	}
	ev := `{"containerId":"c1","containerEventType":"CONTAINER_STARTED_EVENT","podSandboxStatus":{"id":"s1","state":"SANDBOX_READY","metadata":{"name":"web","namespace":"default","uid":"u1"},"network":{"ip":"10.0.0.9"}},"containersStatuses":[{"id":"c1","state":"CONTAINER_RUNNING"}]}`
	run.OnRuntimeMessage(context.Background(), []byte(ev))
	e := r.cache.entries["u1"]
	if e.Name != "web" || !reflect.DeepEqual(e.IPs, []string{"10.0.0.9"}) || len(e.ContainerStatuses) != 1 {
		t.Fatalf("entry %+v", e)
	}
	if got := types(r.sink.take()); len(got) != 1 || got[0] != "ContainerStarted c1" {
		t.Fatalf("events %v", got)
	}
	del := strings.ReplaceAll(strings.ReplaceAll(ev, "CONTAINER_STARTED_EVENT", "CONTAINER_DELETED_EVENT"), `"containerId":"c1"`, `"containerId":"s1"`)
	run.OnRuntimeMessage(context.Background(), []byte(del))
	if _, ok := r.cache.entries["u1"]; ok {
		t.Fatal("the sandbox deleted: the pod leaves the cache")
	}
}

func TestStoppedRunnerIgnoresEverything(t *testing.T) {
	r, run := newRunnerRig(nil)
	run.OnRuntimeMessage(context.Background(), []byte(`{"containerId":"c1","containerEventType":"CONTAINER_STARTED_EVENT","podSandboxStatus":{"id":"s1","metadata":{"uid":"u1"}}}`))
	run.OnInspectRequest(context.Background(), "u1", 0)
	if len(r.cache.writes) != 0 || len(r.rt.calls) != 0 {
		t.Fatalf("a standby wrote %v, called %v", r.cache.writes, r.rt.calls)
	}
}

func TestGenericRelistsEveryPeriod(t *testing.T) {
	r, run := newRunnerRig(nil)
	run.SetMode("generic", "test")
	run.Start()
	defer run.Stop()
	run.SetMode("generic", "test")
	r.clock.Step(0) // the relist at once of a new mode
	waitFor(t, "the first relist", func() bool { return len(r.rt.callsOf("ListPodSandbox")) == 1 })
	for i := 2; i <= 4; i++ {
		r.clock.Step(time.Second)
		waitFor(t, "a relist a period later", func() bool { return len(r.rt.callsOf("ListPodSandbox")) == i })
	}
	if _, err := ParseMode("sideways"); err == nil || err.Error() != `mode must be "generic" or "evented", got "sideways"` {
		t.Fatalf("%v", err)
	}
}
