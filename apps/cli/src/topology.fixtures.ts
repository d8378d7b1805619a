/**
 * /connz?subs=detail, /subsz and /jsz as nats-server 2.9.10 answered them on
 * the real stack (test/stats.e2e.spec.ts, node "stats-e2e", one second apart).
 * That stack runs six services; the prober's connection is added by hand from
 * the prober's own subscriptions (its main.ts and NATS_ACCESS), and is marked so.
 */
import type { Connz } from '@app/nats';

export const CONNZ_BEFORE: Connz = {
  "server_id": "NCCB6T2PG34V6LWUT5NQLAJ6BABC6O36AMBSYEW5LP2MZH3BTGFI6G5S",
  "now": "2026-12-01T04:19:23.841748391Z",
  "num_connections": 7,
  "total": 7,
  "offset": 0,
  "limit": 1024,
  "connections": [
    {
      "cid": 4,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44032,
      "start": "2026-12-01T04:19:16.621374313Z",
      "last_activity": "2026-12-01T04:19:23.438990667Z",
      "rtt": "495µs",
      "uptime": "7s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 0,
      "out_msgs": 10,
      "in_bytes": 0,
      "out_bytes": 9132,
      "subscriptions": 2,
      "name": "e2e-test",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.status.*.*",
          "sid": "1",
          "msgs": 4,
          "cid": 4
        },
        {
          "subject": "kubelet.stats-e2e.events.*",
          "sid": "2",
          "msgs": 6,
          "cid": 4
        }
      ]
    },
    {
      "cid": 5,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44040,
      "start": "2026-12-01T04:19:17.204861534Z",
      "last_activity": "2026-12-01T04:19:23.640981009Z",
      "rtt": "3.087512ms",
      "uptime": "6s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 55,
      "out_msgs": 54,
      "in_bytes": 122585,
      "out_bytes": 16319,
      "subscriptions": 4,
      "name": "cri-gateway@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "cri.stats-e2e.image.*",
          "qgroup": "cri-gateway",
          "sid": "4",
          "msgs": 6,
          "cid": 5
        },
        {
          "subject": "kubelet.stats-e2e.service.cri-gateway.info",
          "qgroup": "cri-gateway",
          "sid": "1",
          "msgs": 0,
          "cid": 5
        },
        {
          "subject": "kubelet.stats-e2e.service.cri-gateway.events",
          "qgroup": "cri-gateway",
          "sid": "2",
          "msgs": 0,
          "cid": 5
        },
        {
          "subject": "cri.stats-e2e.runtime.*",
          "qgroup": "cri-gateway",
          "sid": "3",
          "msgs": 48,
          "cid": 5
        }
      ]
    },
    {
      "cid": 6,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44536,
      "start": "2026-12-01T04:19:18.091000421Z",
      "last_activity": "2026-12-01T04:19:23.754270721Z",
      "rtt": "556µs",
      "uptime": "5s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 58,
      "out_msgs": 52,
      "in_bytes": 18689,
      "out_bytes": 65829,
      "subscriptions": 4,
      "name": "pleg@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "_INBOX_pleg.yyZCmDeVt1sr7cmsE4bciF.*",
          "sid": "1",
          "msgs": 32,
          "cid": 6
        },
        {
          "subject": "kubelet.stats-e2e.service.pleg.info",
          "qgroup": "pleg",
          "sid": "2",
          "msgs": 0,
          "cid": 6
        },
        {
          "subject": "cri.stats-e2e.events",
          "sid": "3",
          "msgs": 0,
          "cid": 6
        },
        {
          "subject": "kubelet.stats-e2e.service.pleg.mode",
          "qgroup": "pleg",
          "sid": "4",
          "msgs": 0,
          "cid": 6
        }
      ]
    },
    {
      "cid": 16,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44546,
      "start": "2026-12-01T04:19:18.926724271Z",
      "last_activity": "2026-12-01T04:19:23.71881002Z",
      "rtt": "361µs",
      "uptime": "4s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 64,
      "out_msgs": 70,
      "in_bytes": 18444,
      "out_bytes": 44599,
      "subscriptions": 6,
      "name": "sync-loop@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.service.sync-loop.info",
          "qgroup": "sync-loop",
          "sid": "2",
          "msgs": 0,
          "cid": 16
        },
        {
          "subject": "kubelet.stats-e2e.config.*",
          "sid": "3",
          "msgs": 4,
          "cid": 16
        },
        {
          "subject": "kubelet.stats-e2e.pleg.*",
          "sid": "4",
          "msgs": 6,
          "cid": 16
        },
        {
          "subject": "_INBOX_sync-loop.Jsu8WA8M2654loCzMaRamt.*",
          "sid": "1",
          "msgs": 44,
          "cid": 16
        },
        {
          "subject": "kubelet.stats-e2e.probe.*.*",
          "sid": "5",
          "msgs": 0,
          "cid": 16
        },
        {
          "subject": "kubelet.stats-e2e.work.done.*",
          "sid": "6",
          "msgs": 0,
          "cid": 16
        }
      ]
    },
    {
      "cid": 30,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44548,
      "start": "2026-12-01T04:19:19.726048542Z",
      "last_activity": "2026-12-01T04:19:23.642592961Z",
      "rtt": "529µs",
      "uptime": "4s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 97,
      "out_msgs": 141,
      "in_bytes": 16871,
      "out_bytes": 118567,
      "subscriptions": 7,
      "name": "status-manager@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.service.status-manager.info",
          "qgroup": "status-manager",
          "sid": "2",
          "msgs": 0,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.probe.*.*",
          "sid": "4",
          "msgs": 0,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.events.*",
          "sid": "5",
          "msgs": 6,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.service.status-manager.events",
          "qgroup": "status-manager",
          "sid": "7",
          "msgs": 0,
          "cid": 30
        },
        {
          "subject": "_INBOX_status-manager.VWMoLF0tOoajS0oD7m5lpD.*",
          "sid": "1",
          "msgs": 87,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.status.*.*",
          "sid": "3",
          "msgs": 4,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.service.status-manager.pods",
          "qgroup": "status-manager",
          "sid": "6",
          "msgs": 0,
          "cid": 30
        }
      ]
    },
    {
      "cid": 38,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44552,
      "start": "2026-12-01T04:19:20.806496974Z",
      "last_activity": "2026-12-01T04:19:23.442365535Z",
      "rtt": "502µs",
      "uptime": "3s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 114,
      "out_msgs": 126,
      "in_bytes": 33611,
      "out_bytes": 58448,
      "subscriptions": 7,
      "name": "pod-worker@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "_INBOX_pod-worker.DyWWQv8ezKkxCbDY2czV6P.*",
          "sid": "1",
          "msgs": 86,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.work.2.*",
          "sid": "11",
          "msgs": 4,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.work.3.*",
          "sid": "14",
          "msgs": 0,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.service.pod-worker.info",
          "qgroup": "pod-worker",
          "sid": "2",
          "msgs": 0,
          "cid": 38
        },
        {
          "subject": "_INBOX_pod-worker.DyWWQv8ezKkxCbDY2czX6b.1",
          "sid": "3",
          "msgs": 8,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.work.0.*",
          "sid": "5",
          "msgs": 4,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.work.1.*",
          "sid": "8",
          "msgs": 0,
          "cid": 38
        }
      ]
    },
    {
      "cid": 59,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44560,
      "start": "2026-12-01T04:19:21.756067638Z",
      "last_activity": "2026-12-01T04:19:22.86657205Z",
      "rtt": "4.021948ms",
      "uptime": "2s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 4,
      "out_msgs": 0,
      "in_bytes": 2375,
      "out_bytes": 0,
      "subscriptions": 4,
      "name": "config-source@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.service.config-source.info",
          "qgroup": "config-source",
          "sid": "1",
          "msgs": 0,
          "cid": 59
        },
        {
          "subject": "kubelet.stats-e2e.sources.snapshot",
          "qgroup": "config-source",
          "sid": "2",
          "msgs": 0,
          "cid": 59
        },
        {
          "subject": "kubelet.stats-e2e.service.config-source.token",
          "qgroup": "config-source",
          "sid": "3",
          "msgs": 0,
          "cid": 59
        },
        {
          "subject": "kubelet.stats-e2e.service.config-source.object",
          "qgroup": "config-source",
          "sid": "4",
          "msgs": 0,
          "cid": 59
        }
      ]
    },
    {
      "cid": 61,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 40000,
      "in_msgs": 5,
      "out_msgs": 7,
      "in_bytes": 1500,
      "out_bytes": 2100,
      "subscriptions": 4,
      "name": "prober@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.service.prober.info",
          "qgroup": "prober",
          "sid": "1",
          "msgs": 0,
          "cid": 61
        },
        {
          "subject": "kubelet.stats-e2e.prober.*",
          "sid": "2",
          "msgs": 2,
          "cid": 61
        },
        {
          "subject": "kubelet.stats-e2e.status.*.*",
          "sid": "3",
          "msgs": 2,
          "cid": 61
        },
        {
          "subject": "_INBOX_prober.Q1w2E3r4T5y6U7i8O9p0As.*",
          "sid": "4",
          "msgs": 3,
          "cid": 61
        }
      ]
    }
  ]
};

export const CONNZ_AFTER: Connz = {
  "server_id": "NCCB6T2PG34V6LWUT5NQLAJ6BABC6O36AMBSYEW5LP2MZH3BTGFI6G5S",
  "now": "2026-12-01T04:19:24.865702594Z",
  "num_connections": 7,
  "total": 7,
  "offset": 0,
  "limit": 1024,
  "connections": [
    {
      "cid": 4,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44032,
      "start": "2026-12-01T04:19:16.621374313Z",
      "last_activity": "2026-12-01T04:19:24.438052156Z",
      "rtt": "495µs",
      "uptime": "8s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 0,
      "out_msgs": 12,
      "in_bytes": 0,
      "out_bytes": 12112,
      "subscriptions": 2,
      "name": "e2e-test",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.status.*.*",
          "sid": "1",
          "msgs": 6,
          "cid": 4
        },
        {
          "subject": "kubelet.stats-e2e.events.*",
          "sid": "2",
          "msgs": 6,
          "cid": 4
        }
      ]
    },
    {
      "cid": 5,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44040,
      "start": "2026-12-01T04:19:17.204861534Z",
      "last_activity": "2026-12-01T04:19:24.434647749Z",
      "rtt": "3.087512ms",
      "uptime": "7s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 58,
      "out_msgs": 57,
      "in_bytes": 133819,
      "out_bytes": 16797,
      "subscriptions": 4,
      "name": "cri-gateway@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.service.cri-gateway.info",
          "qgroup": "cri-gateway",
          "sid": "1",
          "msgs": 0,
          "cid": 5
        },
        {
          "subject": "kubelet.stats-e2e.service.cri-gateway.events",
          "qgroup": "cri-gateway",
          "sid": "2",
          "msgs": 0,
          "cid": 5
        },
        {
          "subject": "cri.stats-e2e.runtime.*",
          "qgroup": "cri-gateway",
          "sid": "3",
          "msgs": 51,
          "cid": 5
        },
        {
          "subject": "cri.stats-e2e.image.*",
          "qgroup": "cri-gateway",
          "sid": "4",
          "msgs": 6,
          "cid": 5
        }
      ]
    },
    {
      "cid": 6,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44536,
      "start": "2026-12-01T04:19:18.091000421Z",
      "last_activity": "2026-12-01T04:19:24.757669953Z",
      "rtt": "556µs",
      "uptime": "6s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 63,
      "out_msgs": 57,
      "in_bytes": 19449,
      "out_bytes": 76978,
      "subscriptions": 4,
      "name": "pleg@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "_INBOX_pleg.yyZCmDeVt1sr7cmsE4bciF.*",
          "sid": "1",
          "msgs": 35,
          "cid": 6
        },
        {
          "subject": "kubelet.stats-e2e.service.pleg.info",
          "qgroup": "pleg",
          "sid": "2",
          "msgs": 0,
          "cid": 6
        },
        {
          "subject": "cri.stats-e2e.events",
          "sid": "3",
          "msgs": 0,
          "cid": 6
        },
        {
          "subject": "kubelet.stats-e2e.service.pleg.mode",
          "qgroup": "pleg",
          "sid": "4",
          "msgs": 0,
          "cid": 6
        }
      ]
    },
    {
      "cid": 16,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44546,
      "start": "2026-12-01T04:19:18.926724271Z",
      "last_activity": "2026-12-01T04:19:24.734597495Z",
      "rtt": "361µs",
      "uptime": "5s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 70,
      "out_msgs": 79,
      "in_bytes": 19062,
      "out_bytes": 45800,
      "subscriptions": 6,
      "name": "sync-loop@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.probe.*.*",
          "sid": "5",
          "msgs": 0,
          "cid": 16
        },
        {
          "subject": "kubelet.stats-e2e.work.done.*",
          "sid": "6",
          "msgs": 2,
          "cid": 16
        },
        {
          "subject": "_INBOX_sync-loop.Jsu8WA8M2654loCzMaRamt.*",
          "sid": "1",
          "msgs": 49,
          "cid": 16
        },
        {
          "subject": "kubelet.stats-e2e.config.*",
          "sid": "3",
          "msgs": 5,
          "cid": 16
        },
        {
          "subject": "kubelet.stats-e2e.pleg.*",
          "sid": "4",
          "msgs": 6,
          "cid": 16
        },
        {
          "subject": "kubelet.stats-e2e.service.sync-loop.info",
          "qgroup": "sync-loop",
          "sid": "2",
          "msgs": 0,
          "cid": 16
        }
      ]
    },
    {
      "cid": 30,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44548,
      "start": "2026-12-01T04:19:19.726048542Z",
      "last_activity": "2026-12-01T04:19:24.440557434Z",
      "rtt": "529µs",
      "uptime": "5s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 101,
      "out_msgs": 147,
      "in_bytes": 17271,
      "out_bytes": 123770,
      "subscriptions": 7,
      "name": "status-manager@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "_INBOX_status-manager.VWMoLF0tOoajS0oD7m5lpD.*",
          "sid": "1",
          "msgs": 91,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.status.*.*",
          "sid": "3",
          "msgs": 6,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.service.status-manager.pods",
          "qgroup": "status-manager",
          "sid": "6",
          "msgs": 0,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.service.status-manager.info",
          "qgroup": "status-manager",
          "sid": "2",
          "msgs": 0,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.probe.*.*",
          "sid": "4",
          "msgs": 0,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.events.*",
          "sid": "5",
          "msgs": 6,
          "cid": 30
        },
        {
          "subject": "kubelet.stats-e2e.service.status-manager.events",
          "qgroup": "status-manager",
          "sid": "7",
          "msgs": 0,
          "cid": 30
        }
      ]
    },
    {
      "cid": 38,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44552,
      "start": "2026-12-01T04:19:20.806496974Z",
      "last_activity": "2026-12-01T04:19:24.443094228Z",
      "rtt": "502µs",
      "uptime": "4s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 124,
      "out_msgs": 131,
      "in_bytes": 40967,
      "out_bytes": 61082,
      "subscriptions": 7,
      "name": "pod-worker@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.service.pod-worker.info",
          "qgroup": "pod-worker",
          "sid": "2",
          "msgs": 0,
          "cid": 38
        },
        {
          "subject": "_INBOX_pod-worker.DyWWQv8ezKkxCbDY2czX6b.1",
          "sid": "3",
          "msgs": 9,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.work.0.*",
          "sid": "5",
          "msgs": 4,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.work.1.*",
          "sid": "8",
          "msgs": 0,
          "cid": 38
        },
        {
          "subject": "_INBOX_pod-worker.DyWWQv8ezKkxCbDY2czV6P.*",
          "sid": "1",
          "msgs": 90,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.work.2.*",
          "sid": "11",
          "msgs": 4,
          "cid": 38
        },
        {
          "subject": "kubelet.stats-e2e.work.3.*",
          "sid": "14",
          "msgs": 0,
          "cid": 38
        }
      ]
    },
    {
      "cid": 59,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 44560,
      "start": "2026-12-01T04:19:21.756067638Z",
      "last_activity": "2026-12-01T04:19:23.867051739Z",
      "rtt": "542µs",
      "uptime": "3s",
      "idle": "0s",
      "pending_bytes": 0,
      "in_msgs": 5,
      "out_msgs": 0,
      "in_bytes": 2543,
      "out_bytes": 0,
      "subscriptions": 4,
      "name": "config-source@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.service.config-source.info",
          "qgroup": "config-source",
          "sid": "1",
          "msgs": 0,
          "cid": 59
        },
        {
          "subject": "kubelet.stats-e2e.sources.snapshot",
          "qgroup": "config-source",
          "sid": "2",
          "msgs": 0,
          "cid": 59
        },
        {
          "subject": "kubelet.stats-e2e.service.config-source.token",
          "qgroup": "config-source",
          "sid": "3",
          "msgs": 0,
          "cid": 59
        },
        {
          "subject": "kubelet.stats-e2e.service.config-source.object",
          "qgroup": "config-source",
          "sid": "4",
          "msgs": 0,
          "cid": 59
        }
      ]
    },
    {
      "cid": 61,
      "kind": "Client",
      "type": "nats",
      "ip": "127.0.0.1",
      "port": 40000,
      "in_msgs": 9,
      "out_msgs": 13,
      "in_bytes": 2700,
      "out_bytes": 3900,
      "subscriptions": 4,
      "name": "prober@stats-e2e#0",
      "lang": "nats.js",
      "version": "3.4.0",
      "subscriptions_list_detail": [
        {
          "subject": "kubelet.stats-e2e.service.prober.info",
          "qgroup": "prober",
          "sid": "1",
          "msgs": 0,
          "cid": 61
        },
        {
          "subject": "kubelet.stats-e2e.prober.*",
          "sid": "2",
          "msgs": 4,
          "cid": 61
        },
        {
          "subject": "kubelet.stats-e2e.status.*.*",
          "sid": "3",
          "msgs": 4,
          "cid": 61
        },
        {
          "subject": "_INBOX_prober.Q1w2E3r4T5y6U7i8O9p0As.*",
          "sid": "4",
          "msgs": 3,
          "cid": 61
        }
      ]
    }
  ]
};

export const SUBSZ = {
  "num_subscriptions": 104,
  "num_cache": 860,
  "num_inserts": 398,
  "num_removes": 294,
  "num_matches": 1737,
  "cache_hit_rate": 0.4415659182498561,
  "max_fanout": 2,
  "avg_fanout": 0.9023255813953488
};

export const JSZ = {
  "server_id": "NCCB6T2PG34V6LWUT5NQLAJ6BABC6O36AMBSYEW5LP2MZH3BTGFI6G5S",
  "now": "2026-12-01T04:19:26.02367897Z",
  "config": {
    "max_memory": 268435456,
    "max_storage": 2147483648,
    "store_dir": "/tmp/ks-nats-T6lDZX/jetstream",
    "compress_ok": true
  },
  "memory": 0,
  "storage": 13229,
  "reserved_memory": 0,
  "reserved_storage": 0,
  "accounts": 1,
  "ha_assets": 0,
  "api": {
    "total": 169,
    "errors": 6
  },
  "streams": 6,
  "consumers": 1,
  "messages": 20,
  "bytes": 13229
};
