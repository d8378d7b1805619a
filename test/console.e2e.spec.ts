/**
 * The web console on the real stack (issue 15), in a real headless Chromium
 * (Debian's chromium, driven by playwright-core): status-manager serves the
 * page at /console; it loads with no console errors, lists a running pod,
 * shows a pod created while it is open without a reload (the server-sent
 * events of /console/events), and a pod's page shows its status, events and
 * logs. A screenshot of each page is saved under the test output
 * (KS_TEST_OUTPUT, by default .tmp/test-results/console/).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const CHROMIUM = process.env['KS_CHROMIUM'] ?? '/usr/bin/chromium';
const OUTPUT = join(process.env['KS_TEST_OUTPUT'] ?? join(REPO_ROOT, '.tmp', 'test-results'), 'console');
const pod = (name: string, line: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "echo ${line}; while true; do sleep 1; done"]\n`;

describe('the web console in a headless Chromium', { timeout: 240_000 }, () => {
  const stack = new NodeStack({ node: 'console-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'] });
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
});
