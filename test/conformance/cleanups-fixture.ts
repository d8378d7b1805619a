/**
 * A process with three cleanup steps, for cleanups.spec.ts: each appends its
 * name to the file in argv[2]; "slow" (pushed last, so run first) takes
 * 1.5 s, during which the test sends more signals. Prints "ready" once its
 * signal handlers are in place.
 */
import { appendFileSync } from 'node:fs';
import { Cleanups } from './cleanups.js';

const file = process.argv[2] ?? '';
const cleanups = new Cleanups((line) => process.stdout.write(`${line}\n`));
cleanups.onSignals((code) => process.exit(code));
cleanups.push({ what: 'the lock', run: () => appendFileSync(file, 'lock\n') });
cleanups.push({ what: 'the bridge', run: () => appendFileSync(file, 'bridge\n') });
cleanups.push({
  what: 'slow',
  run: async () => {
    appendFileSync(file, 'slow started\n');
    await new Promise((r) => setTimeout(r, 1500));
    appendFileSync(file, 'slow done\n');
  },
});
process.stdout.write('ready\n');
setInterval(() => undefined, 1000);
