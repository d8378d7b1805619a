/**
 * The web console on the real stack (issue 15), in a real headless Chromium
 * (Debian's chromium, driven by playwright-core): status-manager serves the
 * page at /console; it loads with no console errors, lists a running pod,
 * shows a pod created while it is open without a reload (the server-sent
 * events of /console/events), a pod's page shows its status, events, logs
 * and its timeline (the trace's hops in order, drawn as a waterfall), and
 * the topology page draws the seven services. A screenshot of each page is saved under the test output
 * (KS_TEST_OUTPUT, by default .tmp/test-results/console/).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SERVICE_NAMES } from '@app/contracts';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const CHROMIUM = process.env['KS_CHROMIUM'] ?? '/usr/bin/chromium';
const OUTPUT = join(process.env['KS_TEST_OUTPUT'] ?? join(REPO_ROOT, '.tmp', 'test-results'), 'console');
const pod = (name: string, line: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "echo ${line}; while true; do sleep 1; done"]\n`;

describe('the web console in a headless Chromium', { timeout: 240_000 }, () => {
  const stack = new NodeStack({ node: 'console-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source', 'prober'] });
  let browser: Browser;
  let page: Page;
  /** Every console error and uncaught exception of the page, and each time its document was (re)loaded. */
  const errors: string[] = [];
  let loads = 0;

  const row = (name: string) => page.locator(`tr[data-pod="default/${stack.podName(name)}"]`);

  before(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    await stack.start();
    stack.writeManifest('web', pod('web', 'hello from the console test'));
    await stack.waitForPod('web', 'running', (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 60_000);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('console', (m) => void (m.type() === 'error' && errors.push(`console: ${m.text()}`)));
    page.on('pageerror', (e) => void errors.push(`uncaught: ${e.message}`));
    page.on('load', () => void loads++);
  });
  after(async () => {
    await browser?.close();
    await stack.stop();
  });

  it('loads with no console errors and lists the running pod with its ready count, restarts and age', async () => {
    await page.goto(`${stack.api}/console`);
    await row('web').locator('[data-col="status"]', { hasText: 'Running' }).waitFor({ timeout: 15_000 });
    assert.equal(await row('web').locator('[data-col="ready"]').textContent(), '1/1');
    assert.equal(await row('web').locator('[data-col="restarts"]').textContent(), '0');
    assert.match((await row('web').locator('[data-col="age"]').textContent()) ?? '', /^\d+(s|m)/);
    assert.equal(await page.getByTestId('live').textContent(), 'live');
    await page.screenshot({ path: join(OUTPUT, 'pods.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  it('shows a pod created while the page is open, without a reload, and follows it to Running', async () => {
    const loadsBefore = loads;
    await page.evaluate(() => void ((globalThis as unknown as { marker: number }).marker = 42));
    assert.equal(await row('late').count(), 0);
    stack.writeManifest('late', pod('late', 'late'));
    await row('late').waitFor({ timeout: 30_000 });
    await row('late').locator('[data-col="status"]', { hasText: 'Running' }).waitFor({ timeout: 60_000 });
    assert.equal(loads, loadsBefore, 'the page was not reloaded');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker), 42, 'the same document');
    await page.screenshot({ path: join(OUTPUT, 'pods-live.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  it('a pod\'s page shows its status, its events and its container\'s logs', async () => {
    await row('web').locator('a').click();
    await page.getByTestId('pod-title').filter({ hasText: `default/${stack.podName('web')}` }).waitFor();
    assert.equal(await page.locator('[data-testid="pod-status"] [data-col="status"]').textContent(), 'Running');
    const events = page.getByTestId('events');
    await events.waitFor();
    for (const reason of ['Pulled', 'Created', 'Started']) {
      const event = events.locator(`tr[data-reason="${reason}"]`).first();
      await event.waitFor();
      assert.equal(await event.locator('[data-col="type"]').textContent(), 'Normal', `the ${reason} event is Normal`);
    }
    await page.getByTestId('logs-main').filter({ hasText: 'hello from the console test' }).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(OUTPUT, 'pod.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  it('a pod\'s timeline shows its hops in causal order: config-source first, the sandbox before the container starts', async () => {
    // Still on the pod's page: its timeline is read as the page opens and again while it is shown.
    const hops = page.getByTestId('timeline').locator('tbody tr');
    await page.getByTestId('timeline').locator('tr[data-what="CRI StartContainer"]').first().waitFor({ timeout: 20_000 });
    const rows: { instance: string; what: string; offset: string; bar: number }[] = [];
    for (const tr of await hops.all()) {
      rows.push({
        instance: (await tr.getAttribute('data-instance')) ?? '',
        what: (await tr.getAttribute('data-what')) ?? '',
        offset: (await tr.locator('[data-col="offset"]').textContent()) ?? '',
        bar: Number((await tr.locator('rect.bar').getAttribute('width')) ?? 'NaN'),
      });
    }
    assert.ok(rows.length >= 10, `${rows.length} hops`);
    assert.match(rows[0]?.instance ?? '', /^config-source@console-e2e#/, `the first hop is config-source's: ${JSON.stringify(rows[0])}`);
    assert.equal(rows[0]?.offset, '+0.00ms');
    const sandbox = rows.findIndex((r) => r.what === 'CRI RunPodSandbox');
    const start = rows.findIndex((r) => r.what === 'CRI StartContainer');
    assert.ok(sandbox > 0 && start > sandbox, `CRI RunPodSandbox (#${sandbox}) before CRI StartContainer (#${start})`);
    // Offsets never go back, and every hop has a bar of its own.
    const ms = (t: string) => {
      const m = /^\+([\d.]+)(ms|s)$/.exec(t);
      return m ? Number(m[1]) * (m[2] === 's' ? 1000 : 1) : NaN;
    };
    for (let i = 1; i < rows.length; i++) assert.ok(ms(rows[i]?.offset ?? '') >= ms(rows[i - 1]?.offset ?? ''), `hop ${i} at ${rows[i]?.offset} after ${rows[i - 1]?.offset}`);
    assert.ok(rows.every((r) => r.bar > 0), 'every hop has its bar');
    assert.equal(await page.getByTestId('timeline').locator('tr.slowest').count(), 1, 'one hop is marked the slowest');
    assert.match((await page.getByTestId('timeline-summary').textContent()) ?? '', /hops in \d+ traces?, total [\d.]+m?s; slowest: /);
    assert.ok((await page.evaluate<number>('document.documentElement.scrollWidth')) <= 1280, 'the timeline fits the window\'s width');
    await page.getByTestId('timeline').screenshot({ path: join(OUTPUT, 'pod-timeline.png') });
    assert.deepEqual(errors, []);
  });

  it('the topology page draws the seven services, linked by their subject families', async () => {
    await page.getByTestId('nav-topology').click();
    const graph = page.getByTestId('topology');
    await graph.waitFor({ timeout: 15_000 });
    const attrs = async (selector: string, ...names: string[]) => Promise.all((await graph.locator(selector).all()).map(async (g) => Promise.all(names.map(async (n) => (await g.getAttribute(n)) ?? ''))));
    assert.deepEqual((await attrs('g.service', 'data-service')).map(([s]) => s).sort(), [...SERVICE_NAMES].sort());
    const links = (await attrs('g.edge', 'data-from', 'data-to', 'data-families')).map(([from, to, families]) => `${from} -> ${to}: ${families}`);
    for (const want of [/^config-source#\S+ -> sync-loop#\S+: .*podUpdate/, /^sync-loop#\S+ -> pod-worker#\S+: .*\bwork\b/, /^pod-worker#\S+ -> cri-gateway#\S+: .*criRuntime/, /^cri-gateway#\S+ -> pleg#\S+: .*criEvents/]) {
      assert.ok(links.some((l) => want.test(l)), `${want} in\n${links.join('\n')}`);
    }
    assert.equal(await page.getByTestId('undocumented').count(), 0, 'no undocumented subscription');
    await page.screenshot({ path: join(OUTPUT, 'topology.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });
});
