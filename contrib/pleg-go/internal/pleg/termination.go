package pleg

// A terminated container's message, as the kubelet's GetPodStatus fills it
// (kuberuntime_container.go getTerminationMessage,
// readLastStringFromContainerLogs), as apps/pleg/src/termination-message.ts:
// the file bind-mounted at the container's terminationMessagePath (its host
// side found among the mounts), at most 4 KiB from its end; with
// FallbackToLogsOnError and a failure, the last 80 lines of its log, at most
// 2 KiB from their end, when the file is missing or empty. Appended to the
// runtime's own message after ": " (docs/adr/0021).

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"
)

const (
	MaxTerminationMessageBytes    = 4 * 1024
	MaxTerminationMessageLogBytes = 2 * 1024
	MaxTerminationMessageLogLines = 80
	logTailReadBytes              = 256 * 1024

	annotationTerminationMessagePath   = "io.kubernetes.container.terminationMessagePath"
	annotationTerminationMessagePolicy = "io.kubernetes.container.terminationMessagePolicy"
)

// containerStatusView is the part of a CRI ContainerStatus read here.
type containerStatusView struct {
	ID          string            `json:"id"`
	State       string            `json:"state"`
	ExitCode    int               `json:"exitCode"`
	Reason      string            `json:"reason"`
	Message     string            `json:"message"`
	Annotations map[string]string `json:"annotations"`
	LogPath     string            `json:"logPath"`
	Mounts      []struct {
		ContainerPath string `json:"containerPath"`
		HostPath      string `json:"hostPath"`
	} `json:"mounts"`
}

var (
	logLine      = regexp.MustCompile(`(?s)^(\S+) (\S+) ([PF]) (.*)$`)
	logLineEmpty = regexp.MustCompile(`^(\S+) (\S+) ([PF])$`)
)

// LastLogLines is the messages of a CRI log's text (`<time> <stream> <P|F>
// <content>` per line), partial lines joined per stream, `lines` of them at
// most from the end. A first line cut by the read is dropped.
func LastLogLines(text string, lines int, cutAtStart bool) string {
	raw := strings.Split(text, "\n")
	if cutAtStart && len(raw) > 0 {
		raw = raw[1:]
	}
	var out []string
	pending := map[string]string{}
	var order []string
	for _, line := range raw {
		m := logLine.FindStringSubmatch(line)
		if m == nil {
			m = logLineEmpty.FindStringSubmatch(line)
		}
		if m == nil {
			continue
		}
		stream := m[2]
		content := ""
		if len(m) > 4 {
			content = m[4]
		}
		prev, had := pending[stream]
		content = prev + content
		if m[3] == "P" {
			if !had {
				order = append(order, stream)
			}
			pending[stream] = content
			continue
		}
		if had {
			delete(pending, stream)
			order = remove(order, stream)
		}
		out = append(out, content+"\n")
	}
	// A partial line the container never ended (`echo -n`) is a message without a newline.
	for _, s := range order {
		out = append(out, pending[s])
	}
	if len(out) > lines {
		out = out[len(out)-lines:]
	}
	return strings.Join(out, "")
}

func remove(xs []string, x string) []string {
	for i, y := range xs {
		if y == x {
			return append(xs[:i:i], xs[i+1:]...)
		}
	}
	return xs
}

// lastBytes is the last max bytes of s (circbuf's tail); a character cut at the start is dropped.
func lastBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	start := len(s) - max
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// TerminationMessage is what to append to an exited container's message.
func TerminationMessage(st containerStatusView, files FileReader) string {
	path := st.Annotations[annotationTerminationMessagePath]
	policy := st.Annotations[annotationTerminationMessagePolicy]
	// A container that could not even start has no logs to fall back to.
	fallbackToLogs := policy == "FallbackToLogsOnError" && st.ExitCode != 0 && st.Reason != "ContainerCannotRun"
	checkLogs := fallbackToLogs
	message := ""
	if path != "" {
		for _, m := range st.Mounts {
			if m.ContainerPath != path {
				continue
			}
			text, _, ok, err := files.ReadTail(m.HostPath, MaxTerminationMessageBytes)
			if err != nil {
				return "Error on reading termination log " + m.HostPath + ": " + err.Error()
			}
			if ok {
				message = text
				checkLogs = fallbackToLogs && text == ""
			}
			break
		}
	}
	if !checkLogs {
		return message
	}
	text, truncated, ok, err := files.ReadTail(st.LogPath, logTailReadBytes)
	if err != nil {
		return "Error on reading termination message from logs: " + err.Error()
	}
	if !ok {
		return "Error on reading termination message from logs: no such file or directory"
	}
	return lastBytes(LastLogLines(text, MaxTerminationMessageLogLines, truncated), MaxTerminationMessageLogBytes)
}

// WithTerminationMessage is getPodContainerStatuses for one status (the
// CRI's JSON): an exited container's with its termination message appended.
func WithTerminationMessage(raw json.RawMessage, files FileReader) json.RawMessage {
	var st containerStatusView
	if json.Unmarshal(raw, &st) != nil || st.State != "CONTAINER_EXITED" {
		return raw
	}
	extra := TerminationMessage(st, files)
	if extra == "" {
		return raw
	}
	msg := extra
	if st.Message != "" {
		msg = st.Message + ": " + extra
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return raw
	}
	b, _ := json.Marshal(msg)
	fields["message"] = b
	out, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return out
}
