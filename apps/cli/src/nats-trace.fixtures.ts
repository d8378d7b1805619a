/**
 * Trace events recorded from nats-server v2.14.9 (deploy/nats/build.sh) on the
 * project's own config (deploy/nats/server-config.ts): the admin CLI sent a
 * trace-only copy of four hops with `Nats-Trace-Dest` an admin inbox, while
 * pod-worker (queue pod-worker on work.0.*) and cri-gateway (queue cri-gateway on
 * cri.<node>.runtime.*) were subscribed and sync-loop had made the pods bucket.
 * Nothing was delivered and the bucket stayed empty. By destination subject.
 */
export const RECORDED_TRACE_EVENTS: Readonly<Record<string, unknown>> = {
  "_INBOX.trace-rec.0": {
    "server": {
      "name": "kubelet-split",
      "host": "127.0.0.1",
      "id": "NBFMC2W3FGT56WJHBW5AQ76R4R7NFRQOOAUVAZNJFMVYTOTWZYBQQS5F",
      "ver": "2.14.9",
      "feature_flags": {
        "js_ack_fc_v2": false,
        "js_raft_delete_range": false
      },
      "jetstream": true,
      "flags": 7,
      "seq": 14,
      "time": "2026-12-01T05:04:47.61292538Z"
    },
    "request": {
      "header": {
        "Kubelet-Pod-Uid": [
          "11111111-2222-3333-4444-555555555555"
        ],
        "Kubelet-Sender": [
          "sync-loop@n1#e5f6"
        ],
        "Nats-Trace-Dest": [
          "_INBOX.trace-rec.0"
        ],
        "Nats-Trace-Only": [
          "true"
        ],
        "traceparent": [
          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ]
      },
      "msgsize": 242
    },
    "events": [
      {
        "type": "in",
        "ts": "2026-12-01T05:04:47.612857579Z",
        "kind": 0,
        "cid": 5,
        "name": "kubelet-split-cli",
        "acc": "$G",
        "subj": "kubelet.n1.work.0.11111111-2222-3333-4444-555555555555"
      },
      {
        "type": "eg",
        "ts": "2026-12-01T05:04:47.61287179Z",
        "kind": 0,
        "cid": 6,
        "name": "pod-worker@n1#a1b2",
        "sub": "kubelet.n1.work.0.*",
        "queue": "pod-worker"
      }
    ]
  },
  "_INBOX.trace-rec.1": {
    "server": {
      "name": "kubelet-split",
      "host": "127.0.0.1",
      "id": "NBFMC2W3FGT56WJHBW5AQ76R4R7NFRQOOAUVAZNJFMVYTOTWZYBQQS5F",
      "ver": "2.14.9",
      "feature_flags": {
        "js_ack_fc_v2": false,
        "js_raft_delete_range": false
      },
      "jetstream": true,
      "flags": 7,
      "seq": 15,
      "time": "2026-12-01T05:04:47.613008413Z"
    },
    "request": {
      "header": {
        "Kubelet-Pod-Uid": [
          "11111111-2222-3333-4444-555555555555"
        ],
        "Kubelet-Sender": [
          "sync-loop@n1#e5f6"
        ],
        "Nats-Trace-Dest": [
          "_INBOX.trace-rec.1"
        ],
        "Nats-Trace-Only": [
          "true"
        ],
        "traceparent": [
          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ]
      },
      "msgsize": 242
    },
    "events": [
      {
        "type": "in",
        "ts": "2026-12-01T05:04:47.612880934Z",
        "kind": 0,
        "cid": 5,
        "name": "kubelet-split-cli",
        "acc": "$G",
        "subj": "cri.n1.runtime.RunPodSandbox"
      },
      {
        "type": "eg",
        "ts": "2026-12-01T05:04:47.612883938Z",
        "kind": 0,
        "cid": 7,
        "name": "cri-gateway@n1#c3d4",
        "sub": "cri.n1.runtime.*",
        "queue": "cri-gateway"
      }
    ]
  },
  "_INBOX.trace-rec.3": {
    "server": {
      "name": "kubelet-split",
      "host": "127.0.0.1",
      "id": "NBFMC2W3FGT56WJHBW5AQ76R4R7NFRQOOAUVAZNJFMVYTOTWZYBQQS5F",
      "ver": "2.14.9",
      "feature_flags": {
        "js_ack_fc_v2": false,
        "js_raft_delete_range": false
      },
      "jetstream": true,
      "flags": 7,
      "seq": 16,
      "time": "2026-12-01T05:04:47.613021192Z"
    },
    "request": {
      "header": {
        "Kubelet-Pod-Uid": [
          "11111111-2222-3333-4444-555555555555"
        ],
        "Kubelet-Sender": [
          "sync-loop@n1#e5f6"
        ],
        "Nats-Trace-Dest": [
          "_INBOX.trace-rec.3"
        ],
        "Nats-Trace-Only": [
          "true"
        ],
        "traceparent": [
          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ]
      },
      "msgsize": 242
    },
    "events": [
      {
        "type": "in",
        "ts": "2026-12-01T05:04:47.612906342Z",
        "kind": 0,
        "cid": 5,
        "name": "kubelet-split-cli",
        "acc": "$G",
        "subj": "kubelet.n1.pleg.11111111-2222-3333-4444-555555555555"
      }
    ]
  },
  "_INBOX.trace-rec.2": {
    "server": {
      "name": "kubelet-split",
      "host": "127.0.0.1",
      "id": "NBFMC2W3FGT56WJHBW5AQ76R4R7NFRQOOAUVAZNJFMVYTOTWZYBQQS5F",
      "ver": "2.14.9",
      "feature_flags": {
        "js_ack_fc_v2": false,
        "js_raft_delete_range": false
      },
      "jetstream": true,
      "flags": 7,
      "seq": 17,
      "time": "2026-12-01T05:04:47.613059699Z"
    },
    "request": {
      "header": {
        "Kubelet-Pod-Uid": [
          "11111111-2222-3333-4444-555555555555"
        ],
        "Kubelet-Sender": [
          "sync-loop@n1#e5f6"
        ],
        "Nats-Trace-Dest": [
          "_INBOX.trace-rec.2"
        ],
        "Nats-Trace-Only": [
          "true"
        ],
        "traceparent": [
          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ]
      },
      "msgsize": 242
    },
    "events": [
      {
        "type": "in",
        "ts": "2026-12-01T05:04:47.612892241Z",
        "kind": 0,
        "cid": 5,
        "name": "kubelet-split-cli",
        "acc": "$G",
        "subj": "$KV.pods.n1.11111111-2222-3333-4444-555555555555"
      },
      {
        "type": "js",
        "ts": "2026-12-01T05:04:47.613057576Z",
        "stream": "KV_pods",
        "subject": "$KV.pods.n1.11111111-2222-3333-4444-555555555555"
      }
    ]
  }
};
