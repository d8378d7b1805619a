/**
 * The floor of P4: a bare NATS responder in a process of its own, as
 * cri-gateway is, that answers each request on `<ECHO_SUBJECT>.<n>` with n
 * bytes at once (no codec, no gRPC, no metrics, no trace). nats-hop.ts
 * starts it and asks it with the same request and reply sizes as the CRI
 * calls it measures, so the difference between the two is what cri-gateway
 * and libs/cri's client add on top of the two loopback trips through
 * nats-server. Reads NATS_URL, NATS_USER, NATS_PASS and ECHO_SUBJECT;
 * prints `ready` once subscribed.
 */
import { connect } from '@nats-io/transport-node';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`nats-echo: ${name} is not set`);
  return v;
};

const nc = await connect({ servers: env('NATS_URL'), user: env('NATS_USER'), pass: env('NATS_PASS'), name: 'bench-echo' });
const replies = new Map<number, Uint8Array>();
const subject = env('ECHO_SUBJECT');
nc.subscribe(`${subject}.*`, {
  callback: (err, msg) => {
    if (err) return;
    const n = Number(msg.subject.slice(subject.length + 1));
    let reply = replies.get(n);
    if (!reply) replies.set(n, (reply = new Uint8Array(n).fill(0x20)));
    msg.respond(reply);
  },
});
await nc.flush();
process.stdout.write('ready\n');
process.once('SIGTERM', () => void nc.close().then(() => process.exit(0)));
