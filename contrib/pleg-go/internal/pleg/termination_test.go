package pleg

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTerminationMessage(t *testing.T) {
	status := func(exit int, policy, hostPath string) containerStatusView {
		s := containerStatusView{State: "CONTAINER_EXITED", ExitCode: exit, LogPath: "/log", Annotations: map[string]string{annotationTerminationMessagePath: "/dev/termination-log", annotationTerminationMessagePolicy: policy}}
		s.Mounts = append(s.Mounts, struct {
			ContainerPath string `json:"containerPath"`
			HostPath      string `json:"hostPath"`
		}{"/dev/termination-log", hostPath})
		return s
	}
	log := "2024-01-01T00:00:00Z stdout F first\n2024-01-01T00:00:01Z stderr P par\n2024-01-01T00:00:02Z stderr F tial\n"
	files := fakeFiles{"/msg": "bye", "/empty": "", "/log": log}
	cases := []struct {
		name string
		s    containerStatusView
		want string
	}{
		{"the file's content", status(1, "File", "/msg"), "bye"},
		{"File policy: no fallback to the log", status(1, "File", "/empty"), ""},
		{"FallbackToLogsOnError, a failure, an empty file: the log's last lines, partials joined", status(1, "FallbackToLogsOnError", "/empty"), "first\npartial\n"},
		{"FallbackToLogsOnError but exit 0: the file only", status(0, "FallbackToLogsOnError", "/empty"), ""},
		{"an unreadable file says so", status(1, "File", "/broken"), "Error on reading termination log /broken: permission denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := TerminationMessage(tc.s, files); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWithTerminationMessageAppendsToTheRuntimes(t *testing.T) {
	raw := json.RawMessage(`{"id":"c1","state":"CONTAINER_EXITED","exitCode":1,"message":"oops","logPath":"/log","annotations":{"io.kubernetes.container.terminationMessagePath":"/t"},"mounts":[{"containerPath":"/t","hostPath":"/msg"}]}`)
	out := WithTerminationMessage(raw, fakeFiles{"/msg": "bye"})
	var s containerStatusView
	_ = json.Unmarshal(out, &s)
	if s.Message != "oops: bye" || s.ID != "c1" {
		t.Fatalf("%s", out)
	}
	running := json.RawMessage(`{"id":"c2","state":"CONTAINER_RUNNING"}`)
	if string(WithTerminationMessage(running, fakeFiles{})) != string(running) {
		t.Fatal("a running container's status is kept as the runtime sent it")
	}
}

func TestLastLogLinesKeepsTheLastOnes(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("t stdout F line\n")
	}
	if got := strings.Count(LastLogLines(b.String(), 80, false), "\n"); got != 80 {
		t.Fatalf("%d lines", got)
	}
	if got := LastLogLines("cut-line\nt stdout F kept\n", 80, true); got != "kept\n" {
		t.Fatalf("a first line cut by the read is dropped: %q", got)
	}
}
