package pleg

import (
	"reflect"
	"testing"
)

func TestGenerateEvents(t *testing.T) {
	cases := []struct {
		name     string
		old, cur State
		want     []EventType
	}{
		{"unchanged", Running, Running, nil},
		{"started", NonExistent, Running, []EventType{ContainerStarted}},
		{"died", Running, Exited, []EventType{ContainerDied}},
		{"changed to unknown", Running, Unknown, []EventType{ContainerChanged}},
		{"an exited container removed", Exited, NonExistent, []EventType{ContainerRemoved}},
		{"a running container vanished: died, then removed", Running, NonExistent, []EventType{ContainerDied, ContainerRemoved}},
		{"created then exited before a relist saw it run", NonExistent, Exited, []EventType{ContainerDied}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []EventType
			for _, e := range GenerateEvents("pod", "c1", tc.old, tc.cur) {
				if e.ID != "pod" || e.Data != "c1" || e.Type != EventMessageType {
					t.Fatalf("event %+v", e)
				}
				got = append(got, e.EventType)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestContainerState(t *testing.T) {
	for cri, want := range map[string]State{"CONTAINER_RUNNING": Running, "SANDBOX_READY": Running, "CONTAINER_EXITED": Exited, "SANDBOX_NOTREADY": Exited, "CONTAINER_CREATED": Unknown, "CONTAINER_UNKNOWN": Unknown, "": Unknown} {
		if got := ContainerState(cri); got != want {
			t.Errorf("%q: got %s, want %s", cri, got, want)
		}
	}
}

func TestGroupByPod(t *testing.T) {
	sandboxes := []Sandbox{
		{ID: "s1", State: "SANDBOX_READY", Labels: map[string]string{LabelPodUID: "u1", LabelPodName: "web", LabelPodNamespace: "default", LabelNode: "n1"}},
		{ID: "s2", State: "SANDBOX_READY", Labels: map[string]string{LabelPodUID: "u2", LabelNode: "other"}},
		{ID: "s3", State: "SANDBOX_NOTREADY", Metadata: &Metadata{Name: "meta", Namespace: "ns", UID: "u3"}, Labels: map[string]string{LabelNode: "n1"}},
		{ID: "s4", State: "SANDBOX_READY", Labels: map[string]string{}},
	}
	containers := []Container{
		{ID: "c1", State: "CONTAINER_RUNNING", Labels: map[string]string{LabelPodUID: "u1", LabelNode: "n1"}},
		{ID: "c2", State: "CONTAINER_EXITED", Labels: map[string]string{LabelPodUID: "u2", LabelNode: "other"}},
	}
	pods := GroupByPod(sandboxes, containers, "n1")
	if len(pods) != 2 {
		t.Fatalf("this node's pods with a UID only: %v", pods)
	}
	u1 := pods["u1"]
	if u1.Name != "web" || u1.Namespace != "default" || !reflect.DeepEqual(u1.SandboxIDs, []string{"s1"}) || !reflect.DeepEqual(u1.ContainerIDs, []string{"c1"}) || u1.States["c1"] != Running {
		t.Fatalf("u1: %+v", u1)
	}
	if u3 := pods["u3"]; u3.Name != "meta" || u3.Namespace != "ns" || u3.States["s3"] != Exited {
		t.Fatalf("the sandbox's metadata when the labels lack the pod: %+v", u3)
	}
	if all := GroupByPod(sandboxes, containers, ""); len(all) != 3 {
		t.Fatalf("no node: every pod with a UID: %d", len(all))
	}
}

func TestPodEvents(t *testing.T) {
	old := &PodView{UID: "u", States: map[string]State{"s": Running, "a": Running, "b": Exited}, SandboxIDs: []string{"s"}, ContainerIDs: []string{"a", "b"}}
	cur := &PodView{UID: "u", States: map[string]State{"s": Running, "a": Exited, "c": Running}, SandboxIDs: []string{"s"}, ContainerIDs: []string{"a", "c"}}
	got := PodEvents("u", old, cur)
	want := []Event{event("u", ContainerDied, "a"), event("u", ContainerRemoved, "b"), event("u", ContainerStarted, "c")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	if gone := PodEvents("u", cur, nil); len(gone) != 5 {
		t.Fatalf("a pod gone: its running sandbox and container died and were removed (4), its exited one removed (1): %+v", gone)
	}
}
