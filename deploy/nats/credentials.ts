/**
 * Writes a kubelet-split node's NATS credentials: a directory (mode 0700)
 * with `nats-server.conf` and one `<user>.password` per user (mode 0600),
 * or prints the checked-in deploy/nats/nats-server.conf.
 *
 *   node dist/deploy/nats/credentials.js --dir DIR [--keep] [--owner UID:GID]
 *        [--listen HOST:PORT] [--store-dir DIR] [--node NODE]...
 *   node dist/deploy/nats/credentials.js --print-checked-in
 *
 * --node (repeatable): the nodes whose services connect; each service's user
 * is held to its node's subjects and KV keys (one node: the users keep the
 * services' names; several: `<service>@<node>`). Without it, every node's.
 *
 * Compose runs the first form once (the `nats-credentials` service, with
 * --keep so a restart keeps the passwords); see docs/adr/0012.
 */
import { parseArgs } from 'node:util';
import { NODE_NATS_SETTINGS, checkedInNatsServerConfig, writeNatsCredentials } from './server-config.js';

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
    owner: { type: 'string' },
    listen: { type: 'string', default: NODE_NATS_SETTINGS.listen },
    node: { type: 'string', multiple: true },
    'store-dir': { type: 'string', default: NODE_NATS_SETTINGS.storeDir },
    'print-checked-in': { type: 'boolean', default: false },
  },
});

if (args['print-checked-in']) {
  process.stdout.write(checkedInNatsServerConfig());
} else if (args.dir) {
  const owner = args.owner?.match(/^(\d+):(\d+)$/);
  if (args.owner && !owner) {
    process.stderr.write(`--owner must be UID:GID, got "${args.owner}"\n`);
    process.exit(2);
  }
  const creds = writeNatsCredentials(
    args.dir,
    { ...NODE_NATS_SETTINGS, listen: args.listen, storeDir: args['store-dir'], ...(args.node?.length ? { nodes: args.node } : {}) },
    { keep: args.keep, ...(owner ? { owner: { uid: Number(owner[1]), gid: Number(owner[2]) } } : {}) },
  );
  process.stdout.write(`NATS credentials in ${creds.dir} (server config ${creds.configFile})\n`);
} else {
  process.stderr.write('usage: credentials.js --dir DIR [--keep] [--owner UID:GID] [--listen HOST:PORT] [--store-dir DIR] [--node NODE]... | --print-checked-in\n');
  process.exit(2);
}
