/**
 * The console's contract, checked from outside: its live feed (`GET
 * /events`, text/event-stream) carries the node's pods as the records say
 * (`pods` event: the PodList) and every event heard on
 * `kubelet.<node>.events.<uid>` (`event` event), and it keeps serving after
 * bad input and a restart. Needs its URL (--console-url).
 */
import { randomUUID } from 'node:crypto';
import { MessageTypes, Subjects, type EventMessage, type Pod } from '@app/contracts';
import { KitFailure, desirePod, expectWithin, type KitCheck, type KitTarget } from './kit.js';

const enc = new TextEncoder();

function consoleUrl(t: KitTarget): string {
  if (!t.consoleUrl) throw new KitFailure('the console\'s suite needs its URL (--console-url http://127.0.0.1:10319/console)');
  return t.consoleUrl;
}

/** The live feed, read as a browser's EventSource would: every `event:`/`data:` pair, in order. */
class Feed {
  readonly messages: { event: string; data: string }[] = [];
  private readonly abort = new AbortController();
  readonly opened: Promise<void>;
  constructor(url: string) {
    this.opened = fetch(`${url}/events`, { signal: this.abort.signal }).then((res) => {
      if (res.status !== 200 || !res.body) throw new KitFailure(`GET /events answered ${res.status}`);
      void this.read(res.body);
    });
  }
  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body) {
        buf += dec.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data !== undefined) this.messages.push({ event, data });
        }
      }
    } catch {
      // closed
    }
  }
  close(): void {
    this.abort.abort();
  }
}

async function withFeed(t: KitTarget, fn: (feed: Feed) => Promise<void>): Promise<void> {
  const feed = new Feed(consoleUrl(t));
  try {
    await feed.opened;
    await fn(feed);
  } finally {
    feed.close();
  }
}

/** An event as recorder.Eventf sends it (the contract's event message, every field it requires). */
function sendEvent(t: KitTarget, uid: string, reason: string): void {
  const event: EventMessage = {
    type: MessageTypes.event,
    involvedObject: { kind: 'Pod', namespace: 'contract-kit', name: `kit-${uid.slice(0, 8)}`, uid },
    eventType: 'Normal',
    reason,
    message: `the contract kit's ${reason}`,
    source: { component: 'contract-kit', host: t.node },
    timestamp: new Date().toISOString(),
  };
  t.nc.publish(Subjects.events.build(t.node, uid), enc.encode(JSON.stringify(event)));
}

export const CONSOLE_CHECKS: readonly KitCheck[] = [
  {
    name: 'the live feed: a pod in the records shows in its pods message',
    async run(t, note) {
      const uid = randomUUID();
      const name = `kit-console-${uid.slice(0, 8)}`;
      const pod: Pod = { metadata: { uid, name, namespace: 'contract-kit' }, spec: { containers: [{ name: 'main', image: 'localhost/kubelet-split/busybox:1.35' }] } };
      await desirePod(t, pod, true);
      try {
        await withFeed(t, async (feed) => {
          await expectWithin(`a pods message in GET /events naming ${name}`, () => (feed.messages.some((m) => m.event === 'pods' && m.data.includes(name)) ? true : undefined), t.timeoutMs, () => feed.messages.map((m) => m.event).join(', ') || 'nothing on the feed');
          note(`${feed.messages.length} message(s) on the feed`);
        });
      } finally {
        await desirePod(t, pod, false).catch(() => undefined);
      }
    },
  },
  {
    name: 'the live feed: an event heard on kubelet.<node>.events.<uid> as an event message',
    async run(t, note) {
      await withFeed(t, async (feed) => {
        const uid = randomUUID();
        // Sent again until the feed has it: the console hears events from the moment its subscription is in place.
        const got = await expectWithin('the kit\'s KitEvent in GET /events', async () => {
          sendEvent(t, uid, 'KitEvent');
          await new Promise((r) => setTimeout(r, 300));
          return feed.messages.find((m) => m.event === 'event' && m.data.includes(uid) && m.data.includes('KitEvent'));
        }, t.timeoutMs, () => feed.messages.map((m) => m.event).join(', ') || 'nothing on the feed');
        note(`heard: ${got.data.slice(0, 120)}`);
      });
    },
  },
  {
    name: 'bad input on the events subject: ignored, and the feed goes on',
    async run(t, note) {
      for (const junk of ['{not json', JSON.stringify({ type: 'kubelet.v9.unknown' }), JSON.stringify({ type: MessageTypes.event, involvedObject: 7 })]) t.nc.publish(Subjects.events.build(t.node, randomUUID()), enc.encode(junk));
      await t.nc.flush();
      await withFeed(t, async (feed) => {
        const uid = randomUUID();
        await expectWithin('an event after the bad input in GET /events', async () => {
          sendEvent(t, uid, 'AfterJunk');
          await new Promise((r) => setTimeout(r, 300));
          return feed.messages.find((m) => m.event === 'event' && m.data.includes(uid)) ? true : undefined;
        }, t.timeoutMs);
        note('3 bad messages, then an event on the feed');
      });
    },
  },
  {
    name: 'restarted: the feed again, with the events heard after',
    needsRestart: true,
    async run(t, note) {
      await t.restart?.();
      await expectWithin('GET /events answering after the restart', async () => ((await fetch(consoleUrl(t)).catch(() => undefined))?.status === 200 ? true : undefined), t.timeoutMs);
      await withFeed(t, async (feed) => {
        const uid = randomUUID();
        await expectWithin('an event in GET /events after the restart', async () => {
          sendEvent(t, uid, 'AfterRestart');
          await new Promise((r) => setTimeout(r, 300));
          return feed.messages.find((m) => m.event === 'event' && m.data.includes(uid)) ? true : undefined;
        }, t.timeoutMs);
        note('events on the feed after the restart');
      });
    },
  },
];
