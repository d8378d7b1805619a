/**
 * kubelet-server alone in its process. The V8 compile cache is on before anything
 * else loads (the generated CRI code alone is 1.3 MB), then the code is
 * imported (docs/adr/0016-one-process-mode.md).
 */
import { enableCompileCache } from 'node:module';
// First, before any decorated class is defined: in the bundle (deploy/bundle.mjs) chunks may run in another order.
import 'reflect-metadata';

enableCompileCache();
const [{ runService }, { definition }] = await Promise.all([import('@app/service'), import('./kubelet-server.definition.js')]);
await runService(definition);
