package pleg

// The pure part of pkg/kubelet/pleg/generic.go: what the runtime shows,
// grouped by pod, and the lifecycle events one view of a pod against the
// next yields (generateEvents). Mirrors apps/pleg/src/events.ts.

import "sort"

// The labels the kubelet puts on sandboxes and containers (libs/kube KubeletLabels).
const (
	LabelPodName      = "io.kubernetes.pod.name"
	LabelPodNamespace = "io.kubernetes.pod.namespace"
	LabelPodUID       = "io.kubernetes.pod.uid"
	LabelNode         = "kubelet-split.io/node"
)

// State is plegContainerState.
type State string

const (
	Running     State = "running"
	Exited      State = "exited"
	Unknown     State = "unknown"
	NonExistent State = "non-existent"
)

// Metadata is PodSandboxMetadata (or the parts a ContainerMetadata shares).
type Metadata struct {
	Name      string `json:"name,omitempty"`
	UID       string `json:"uid,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Sandbox is one item of ListPodSandboxResponse.items.
type Sandbox struct {
	ID       string            `json:"id"`
	Metadata *Metadata         `json:"metadata,omitempty"`
	State    string            `json:"state"`
	Labels   map[string]string `json:"labels"`
}

// Container is one item of ListContainersResponse.containers.
type Container struct {
	ID     string            `json:"id"`
	State  string            `json:"state"`
	Labels map[string]string `json:"labels"`
}

// PodView is a pod as one relist saw it: the state of each of its containers
// and sandboxes, by ID.
type PodView struct {
	UID, Name, Namespace string
	States               map[string]State
	SandboxIDs           []string
	ContainerIDs         []string
}

// ContainerState maps a CRI sandbox or container state to the PLEG's.
func ContainerState(cri string) State {
	switch cri {
	case "CONTAINER_RUNNING", "SANDBOX_READY":
		return Running
	case "CONTAINER_EXITED", "SANDBOX_NOTREADY":
		return Exited
	default:
		return Unknown
	}
}

// GroupByPod groups sandboxes and containers by the pod UID label; with a
// node, only those its stack made (LabelNode).
func GroupByPod(sandboxes []Sandbox, containers []Container, node string) map[string]*PodView {
	mine := func(l map[string]string) bool { return node == "" || l[LabelNode] == node }
	pods := map[string]*PodView{}
	viewOf := func(uid string, labels map[string]string, meta *Metadata) *PodView {
		v := pods[uid]
		if v == nil {
			name, okName := labels[LabelPodName]
			ns, okNs := labels[LabelPodNamespace]
			if !okName && meta != nil {
				name = meta.Name
			}
			if !okNs && meta != nil {
				ns = meta.Namespace
			}
			v = &PodView{UID: uid, Name: name, Namespace: ns, States: map[string]State{}}
			pods[uid] = v
		}
		return v
	}
	for _, sb := range sandboxes {
		uid, ok := sb.Labels[LabelPodUID]
		if !ok && sb.Metadata != nil {
			uid = sb.Metadata.UID
		}
		if uid == "" || !mine(sb.Labels) {
			continue
		}
		v := viewOf(uid, sb.Labels, sb.Metadata)
		v.States[sb.ID] = ContainerState(sb.State)
		v.SandboxIDs = append(v.SandboxIDs, sb.ID)
	}
	for _, c := range containers {
		uid := c.Labels[LabelPodUID]
		if uid == "" || !mine(c.Labels) {
			continue
		}
		v := viewOf(uid, c.Labels, nil)
		v.States[c.ID] = ContainerState(c.State)
		v.ContainerIDs = append(v.ContainerIDs, c.ID)
	}
	return pods
}

func event(pod string, t EventType, data string) Event {
	return Event{Type: EventMessageType, ID: pod, EventType: t, Data: data}
}

// GenerateEvents is generateEvents: one container's old state against its new one.
func GenerateEvents(pod, cid string, old, cur State) []Event {
	if old == cur {
		return nil
	}
	switch cur {
	case Running:
		return []Event{event(pod, ContainerStarted, cid)}
	case Exited:
		return []Event{event(pod, ContainerDied, cid)}
	case Unknown:
		return []Event{event(pod, ContainerChanged, cid)}
	default: // NonExistent
		// A container that had died was reported then; one that vanished while running died too.
		if old == Exited {
			return []Event{event(pod, ContainerRemoved, cid)}
		}
		return []Event{event(pod, ContainerDied, cid), event(pod, ContainerRemoved, cid)}
	}
}

func stateIn(v *PodView, id string) State {
	if v == nil {
		return NonExistent
	}
	if s, ok := v.States[id]; ok {
		return s
	}
	return NonExistent
}

// PodEvents is every event between two views of one pod (either may be nil),
// in a stable order: the old view's IDs first, then the new ones.
func PodEvents(uid string, old, cur *PodView) []Event {
	var ids []string
	seen := map[string]bool{}
	for _, v := range []*PodView{old, cur} {
		if v == nil {
			continue
		}
		ordered := append(append([]string{}, v.SandboxIDs...), v.ContainerIDs...)
		// IDs not in the lists (a view made by hand) still count, sorted.
		var extra []string
		for id := range v.States {
			if !contains(ordered, id) {
				extra = append(extra, id)
			}
		}
		sort.Strings(extra)
		for _, id := range append(ordered, extra...) {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	var out []Event
	for _, id := range ids {
		out = append(out, GenerateEvents(uid, id, stateIn(old, id), stateIn(cur, id))...)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
