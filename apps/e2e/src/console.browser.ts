import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Api } from './api-client';
import { artifactPath, holdRequests, launchChromium, pageProblems } from './browser';
import { MULTIPART, multipartBody } from './multipart';
import { openApiDrift } from './openapi-replies';
import { distributedDeployment } from './distributed-env';
import { ADMIN_TOKEN, startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * The web console in headless Chromium against the built service, as an operator uses it: sign in,
 * add a bot, deploy a connector, hand out a token, watch the calls. Each case has its own bot and
 * its own browser context, so any one runs alone (`-t`) and a failure stays in its case; the service
 * and the browser are shared, being slow to start. Each main view is saved as a screenshot under
 * test-artifacts/console/, also at a phone's width.
 */
const CONNECTOR = `const entity = Context.GetRequestEntity();
Context.Log("order received", entity.RequestBody);
if (!entity.RequestBody || !entity.RequestBody.orderId) Context.RaiseError("Order rejected", "The order has no orderId");
entity.ResponseBody = { Status: "Accepted", Message: \`order \${entity.RequestBody.orderId}\` };
Context.SetResponseEntity(entity);
`;
const BROKEN = 'const total = 1;\nconst broken = ;\nContext.Log(total);\n';
const WAITS = 'await new Promise((resolve) => setTimeout(resolve, 60000));\nContext.SetResponseEntity({ ResponseBody: {} });\n';
const QUICK = 'Context.SetResponseEntity({ ResponseBody: { ok: true } });\n';
/** A durable job: three journalled steps, then it waits (suspended) for the event `approved`. */
const DURABLE = `for (let i = 1; i <= 3; i++) await Context.Step("send", async () => ({ sent: i }));
const approval = await Context.WaitForEvent("approved", { timeout: "1 hour" });
Context.SetResponseEntity({ ResponseBody: { approval } });
`;
const SECRET_VALUE = 'sk_live_console-0123456789abcdef';
const PHONE = { width: 375, height: 812 };

/**
 * Elements that stick out of the viewport sideways, apart from those inside a box that scrolls (or
 * clips) sideways: what a reader of a narrow screen could not see or reach. Evaluated in the page.
 */
const OVERFLOWING = `(() => {
  const width = document.documentElement.clientWidth;
  const inScroller = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || el.classList.contains('offscreen')) continue;
    if ((r.right > width + 1 || r.left < -1) && !inScroller(el)) out.push(el.tagName.toLowerCase() + '.' + el.className + ' [' + Math.round(r.left) + ', ' + Math.round(r.right) + ']');
  }
  return { pageScrollsSideways: document.documentElement.scrollWidth > width, overflowing: out.slice(0, 10) };
})()`;

/** Opens the console at `url` and signs in through the form, as an operator does. */
async function signIn(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

describe('web console (headless Chromium)', () => {
  // Shared by every case, being slow to start: the service and the browser.
  let service: ServiceProcess;
  let api: Api;
  let browser: Browser;
  // Each case's own, so that any one runs alone and a failure stays in its case: a browser context
  // (its own session), a page, what the page reported and requested, and a bot no other case touches.
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let requested: string[];
  let watchedTokens: string[];
  const botIds = new Set<string>();

  const screenshot = (name: string) => page.screenshot({ path: artifactPath('console', `${name}.png`), fullPage: true });
  // Expressions evaluated in the page are strings: this project type-checks against Node, not the DOM.
  const inPage = (expression: string): Promise<unknown> => page.evaluate(expression);
  const tab = (name: string) => page.getByRole('navigation', { name: 'Bot views' }).getByRole('link', { name });
  /** Waits until the messages of earlier steps have gone, so a screenshot shows the view alone. */
  const noToasts = () => page.waitForFunction("document.querySelectorAll('.toast').length === 0");

  /** A bot id of this case alone: the cases share one service, never a bot. */
  function newBotId(id: string): string {
    if (botIds.has(id)) throw new Error(`Bot id ${id} is used by another case`);
    botIds.add(id);
    return id;
  }
  /** Defines the entity Order of `bot` and deploys `code` as `integrationId` on it. */
  async function deploy(bot: string, integrationId: string, code: string, extra: Record<string, unknown> = {}): Promise<void> {
    expect((await api.admin('PUT', `/bots/${bot}/entities/Order`, {})).status).toBe(200);
    expect((await api.admin('PUT', `/bots/${bot}/integrations/${integrationId}`, { entityName: 'Order', code, ...extra })).status).toBe(200);
  }
  /** A permanent bot token; the page must never put it in a URL. */
  async function mint(bot: string, label = 'e2e'): Promise<string> {
    const minted = await api.admin('POST', `/bots/${bot}/tokens`, { label });
    expect(minted.status).toBe(201);
    watchedTokens.push(minted.json.token as string);
    return minted.json.token as string;
  }
  /** Opens the console at `route` (`<botId>/<tab>[/<item>]`, or none) and signs in through the form, as an operator does. */
  const open = (route = '') => signIn(page, `${service.baseUrl}/console${route ? `#/bots/${route}` : ''}`);

  beforeAll(async () => {
    service = await startService({ env: { SECRETS_KEY: randomBytes(32).toString('base64') } });
    api = new Api(service.baseUrl);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.dispose();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.baseUrl });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    problems = pageProblems(page);
    requested = [];
    page.on('request', (request) => requested.push(request.url()));
    watchedTokens = [ADMIN_TOKEN];
  });
  // Every case: no script error or Content-Security-Policy violation, and no token in any URL.
  afterEach(async () => {
    try {
      expect(problems).toEqual([]);
      expect(requested.length).toBeGreaterThan(0);
      expect(requested.filter((url) => watchedTokens.some((token) => url.includes(token)))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('signs in with the admin token, refusing a wrong one, and keeps it out of every URL', async () => {
    await page.goto(`${service.baseUrl}/console`);
    await page.getByLabel('Admin token').fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That admin token is not valid.').waitFor();
    await screenshot('sign-in');

    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Bots' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await inPage('Object.values(sessionStorage)')).toEqual([ADMIN_TOKEN]);
    expect(await inPage('[localStorage.length, document.cookie]')).toEqual([0, '']);
  });

  it('adds a bot by defining its first entity', async () => {
    const bot = newBotId('acme-new');
    await open();
    await page.getByRole('button', { name: '+ New bot' }).click();
    await page.getByLabel('Bot id').fill(bot);
    await page.getByLabel('First entity').fill('Order');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('navigation', { name: 'Bots' }).getByRole('link', { name: bot, exact: true }).waitFor();
    await page.locator('table.list').getByText('Order', { exact: true }).waitFor();
    expect(page.url()).toMatch(new RegExp(`#/bots/${bot}/overview$`));
  });

  it('refuses connector code that does not compile, pointing at its line and column', async () => {
    const bot = newBotId('acme-compile');
    expect((await api.admin('PUT', `/bots/${bot}/entities/Order`, {})).status).toBe(200);
    await open(`${bot}/connectors`);
    await page.getByRole('button', { name: 'Deploy the first one' }).click();
    await page.getByLabel('Integration id').fill('orders');
    await page.getByLabel('Connector code').fill(BROKEN);
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    const column = 'const broken = '.length + 1;
    await page.getByText(`Does not compile — line 2, column ${column}`).waitFor();
    await page.getByText('SyntaxError').waitFor();
    // The caret is put on the error, in the editor.
    const caret = await inPage("document.querySelector('textarea[name=code]').selectionStart");
    expect(caret).toBe('const total = 1;\n'.length + column - 1);
    await page.getByText(`Line 2, column ${column}`, { exact: true }).waitFor();
    await screenshot('connector-compile-error');
    expect((await api.admin('GET', `/bots/${bot}/integrations`)).json.integrations).toEqual([]);
  });

  it('deploys a connector and shows its code and versions', async () => {
    const bot = newBotId('acme-deploy');
    expect((await api.admin('PUT', `/bots/${bot}/entities/Order`, {})).status).toBe(200);
    await open(`${bot}/connectors`);
    await page.getByRole('button', { name: 'Deploy the first one' }).click();
    await page.getByLabel('Integration id').fill('orders');
    await page.getByLabel('Connector code').fill(CONNECTOR);
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await page.getByText('Deployed orders version 1').waitFor();
    await page.getByRole('button', { name: 'Deploy new version' }).waitFor();
    await page.getByText('order received', { exact: false }).first().waitFor();
    expect(await page.locator('pre.code.numbered .line').count()).toBe(CONNECTOR.split('\n').length);
    expect(page.url()).toMatch(new RegExp(`#/bots/${bot}/connectors/orders$`));
    await screenshot('connectors');
    const deployed = await api.admin('GET', `/bots/${bot}/integrations/orders`);
    expect([deployed.json.version, deployed.json.code]).toEqual([1, CONNECTOR]);
  });

  it('shows every webhook URL with a copy button and a ready curl example', async () => {
    const bot = newBotId('acme-webhooks');
    await deploy(bot, 'orders', CONNECTOR);
    await open(`${bot}/webhooks`);
    const sync = `${service.baseUrl}/api/Platform/${bot}/Order/orders/GenericIntegration`;
    await page.getByText(sync, { exact: true }).waitFor();
    for (const url of [`${sync}?asyncResponse=true`, `${service.baseUrl}/api/Platform/${bot}/Order/orders/GenericIntegrationFileTransfer`]) {
      await page.getByText(url, { exact: true }).waitFor();
    }
    await page.getByRole('button', { name: 'Copy sync URL of orders' }).click();
    expect(await inPage('navigator.clipboard.readText()')).toBe(sync);
    await page.getByText(`curl -X POST '${sync}'`).waitFor();
    await page.getByRole('button', { name: 'Copy curl example for orders' }).click();
    expect(await inPage('navigator.clipboard.readText()')).toContain('-H "Authorization: Bearer $TOKEN"');
    // The event URL of durable jobs: the bot's, on its card and on each integration's.
    const event = `${service.baseUrl}/api/Platform/${bot}/GenericIntegrationEvent?invocationId={invocationId}&name={name}`;
    expect(await page.getByText(event, { exact: true }).count()).toBe(2);
    await page.getByRole('button', { name: 'Copy event URL', exact: true }).click();
    expect(await inPage('navigator.clipboard.readText()')).toBe(event);
    await page.getByRole('button', { name: 'Copy event curl example' }).click();
    expect(await inPage('navigator.clipboard.readText()')).toBe(
      [
        `curl -X POST "${service.baseUrl}/api/Platform/${bot}/GenericIntegrationEvent?invocationId=$ID&name=approved" \\`,
        '  -H "Authorization: Bearer $TOKEN" \\',
        `  -H 'Content-Type: application/json' -d '{"by": "ada"}'`,
      ].join('\n'),
    );
    await screenshot('webhooks');
  });

  it('creates tokens shown once, lists them by label, and revokes one at once', async () => {
    const bot = newBotId('acme-tokens');
    await deploy(bot, 'orders', CONNECTOR);
    await open(`${bot}/authentication`);
    await page.getByLabel('Label').fill('crm');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('[data-token="new"]').textContent()) ?? '';
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    watchedTokens.push(token);

    await page.getByLabel('Label').fill('temporary');
    await page.getByLabel('Lifetime').selectOption({ label: 'Short-lived: 1 hour' });
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('table.tokens').getByText('temporary').waitFor();
    expect(await page.locator('table.tokens tbody tr').count()).toBe(2);
    const temporary = (await page.locator('[data-token="new"]').textContent()) ?? '';
    expect(temporary).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(temporary).not.toBe(token);
    watchedTokens.push(temporary);

    const revoke = page.getByRole('button', { name: 'Revoke temporary' });
    await revoke.click();
    await revoke.click();
    await page.getByText('Token temporary revoked').waitFor();
    await page.locator('table.tokens tr', { hasText: 'temporary' }).getByText(/^revoked/).waitFor();
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await screenshot('authentication');

    const url = api.webhookUrl(bot, 'Order', 'orders');
    expect((await api.postJson(url, temporary, { orderId: 1 })).status).toBe(401);
    expect((await api.postJson(url, token, { orderId: 1 })).status).toBe(200);
    expect((await page.locator('body').textContent()) ?? '').not.toContain(token);
  });

  it('lists calls live with status, mode, attempt and duration, and shows one with its entity and logs', async () => {
    const bot = newBotId('acme-calls');
    await deploy(bot, 'orders', CONNECTOR);
    const token = await mint(bot, 'crm');
    await open(`${bot}/invocations`);
    await page.getByText('No invocations').waitFor();
    const url = api.webhookUrl(bot, 'Order', 'orders', 'source=crm');
    const accepted = await api.postJson(url, token, { orderId: 42 }, { 'X-Request-Id': 'req-1' });
    expect([accepted.status, accepted.json]).toEqual([200, { Status: 'Accepted', Message: 'order 42' }]);
    const acceptedId = accepted.headers.get('x-invocation-id') ?? '';
    const rejected = await api.postJson(url, token, {});
    expect(rejected.status).toBe(422);

    // The list refreshes itself: both calls appear without a reload.
    const okRow = page.locator(`tr[data-id="${acceptedId}"]`);
    const failedRow = page.locator(`tr[data-id="${rejected.json.invocationId}"]`);
    await okRow.getByText('Completed').waitFor();
    await failedRow.getByText('Failed').waitFor();
    expect(await okRow.locator('td').allTextContents()).toEqual([expect.any(String), 'orders', 'Completed', 'sync', '1', expect.stringMatching(/\d+(\.\d+)? m?s$/)]);

    await okRow.click();
    const detail = page.locator('.detail-pane');
    await detail.getByText('order received {"orderId":42}').waitFor();
    await detail.getByText('"Message": "order 42"').waitFor();
    await detail.locator('table.pairs', { hasText: 'X-Request-Id' }).getByText('req-1').waitFor();
    await detail.getByText('source', { exact: true }).waitFor();
    expect(page.url()).toContain(`#/bots/${bot}/invocations/${acceptedId}`);
    await screenshot('invocations');

    const upload = await api.call(api.webhookUrl(bot, 'Order', 'orders', '', 'GenericIntegrationFileTransfer'), token, {
      headers: { 'content-type': MULTIPART },
      body: multipartBody([
        { name: 'orderId', data: '7' },
        { name: 'invoice', filename: 'invoice-7.pdf', contentType: 'application/pdf', data: '%PDF-1.4 test' },
      ]),
    });
    expect(upload.status).toBe(200);
    await page.locator(`tr[data-id="${upload.headers.get('x-invocation-id')}"]`).click();
    await detail.locator('table.files').getByText('invoice-7.pdf').waitFor();
    await detail.locator('table.files').getByText('application/pdf').waitFor();

    await page.getByLabel('Status').selectOption('Failed');
    await okRow.waitFor({ state: 'detached' });
    await failedRow.click();
    await detail.getByRole('alert').getByText('The order has no orderId').waitFor();
    await detail.locator('.logs').getByText('Order rejected').waitFor();

    // A list read that a newer filter outdated (a live refresh, a slow answer) is dropped when it comes back.
    // Live refresh off: from here on only the reads below draw the list.
    await page.getByLabel('Live', { exact: true }).uncheck();
    const unfiltered = await holdRequests(page, (url) => url.pathname.endsWith(`/bots/${bot}/invocations`) && !url.searchParams.has('status'));
    try {
      await page.getByLabel('Status').selectOption('');
      const filtered = page.waitForResponse((response) => new URL(response.url()).searchParams.get('status') === 'Failed');
      await page.getByLabel('Status').selectOption('Failed');
      await filtered;
    } finally {
      await unfiltered.release();
    }
    // A later read, answered after the late one: once it is drawn, the late answer has come back too.
    await page.getByLabel('Invocation id', { exact: true }).fill(acceptedId);
    await page.getByRole('button', { name: 'Find' }).click();
    await detail.getByText('order received {"orderId":42}').waitFor();
    expect(await okRow.count()).toBe(0);
    expect(await failedRow.count()).toBe(1);

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Integration').selectOption('orders');
    await okRow.waitFor();
  });

  it('charts the last hour: calls per minute and p50/p99 per integration', async () => {
    const bot = newBotId('acme-chart');
    await deploy(bot, 'orders', CONNECTOR);
    const token = await mint(bot);
    const url = api.webhookUrl(bot, 'Order', 'orders');
    expect((await api.postJson(url, token, { orderId: 1 })).status).toBe(200);
    expect((await api.postJson(url, token, {})).status).toBe(422);
    expect((await api.postJson(url, token, { orderId: 2 })).status).toBe(200);
    await open(`${bot}/overview`);
    await page.locator('.figure', { hasText: 'invocations' }).getByText('3', { exact: true }).waitFor();
    await page.locator('.figure', { hasText: 'failed' }).getByText('1 (33%)').waitFor();
    expect(await page.locator('svg.chart rect.bar.failed').count()).toBe(1);
    const row = page.locator('table.integrations-activity tbody tr');
    expect(await row.locator('td').allTextContents()).toEqual(['orders', '3', '1', expect.stringMatching(/ms$/), expect.stringMatching(/ms$/), '']);
    await screenshot('overview');
  });

  it('shows the log lines of a running invocation as they are written, and the rest once it ends', async () => {
    const bot = newBotId('acme-running');
    const slow = `for (let step = 1; step <= 3; step++) {
      if (step > 1) await new Promise((resolve) => setTimeout(resolve, 4000));
      Context.Log('step ' + step + ' of 3');
    }
    Context.SetResponseEntity({ ResponseBody: { done: true } });`;
    await deploy(bot, 'slow', slow);
    const slowToken = await mint(bot);
    await open(`${bot}/invocations`);
    const started = await api.postJson(api.webhookUrl(bot, 'Order', 'slow', 'asyncResponse=true'), slowToken, {});
    expect(started.status).toBe(202);
    const id = started.json.invocationId as string;
    const row = page.locator(`tr[data-id="${id}"]`);
    await row.getByText('Running').waitFor();
    await row.click();
    const detail = page.locator('.detail-pane');
    await detail.locator('.logs').getByText('step 1 of 3').waitFor();
    await detail.getByText('Connector logs so far').waitFor();
    expect((await api.admin('GET', `/bots/${bot}/invocations/${id}`)).json.status).toBe('Running');
    await screenshot('invocation-running');
    // A line written while it still runs is added to the list shown: the pane is not drawn again.
    await inPage(`document.querySelector('.detail-pane ol.logs').dataset.mark = 'kept'`);
    await detail.locator('.logs').getByText('step 2 of 3').waitFor({ timeout: 20_000 });
    expect(await inPage(`document.querySelector('.detail-pane ol.logs').dataset.mark`)).toBe('kept');
    await detail.locator('.logs').getByText('step 3 of 3').waitFor({ timeout: 20_000 });
    await detail.getByText('Connector logs', { exact: true }).waitFor();
    expect(await detail.locator('.logs li').allTextContents()).toEqual(['step 1 of 3', 'step 2 of 3', 'step 3 of 3'].map((text) => expect.stringContaining(text)));
  }, 40_000);

  it('shows the source files of a bundled connector one at a time, and its bundle on request', async () => {
    const bot = newBotId('acme-bundled');
    await deploy(bot, 'orders', CONNECTOR);
    // Version 1 is plain code; version 2 is bundled from these sources.
    await deploy(bot, 'bundled', QUICK);
    const sources = [
      { path: 'src/index.ts', content: "import { reply } from './reply';\nContext.SetResponseEntity({ ResponseBody: reply('ok') });\n" },
      { path: 'src/reply.ts', content: 'export const reply = (text: string): object => ({ text });\n' },
    ];
    const code = 'var reply = (text) => ({ text });\nContext.SetResponseEntity({ ResponseBody: reply("ok") });\n';
    await deploy(bot, 'bundled', code, { sources });
    await open(`${bot}/connectors`);
    // The answer for a connector picked before another one is dropped when it comes back late.
    const ordersReads = await holdRequests(page, (url) => new RegExp(`/bots/${bot}/integrations/orders(/draft)?$`).test(url.pathname));
    const detail = page.locator('.detail-pane');
    try {
      await page.getByRole('link', { name: /^orders/ }).click();
      await page.getByRole('link', { name: /^bundled/ }).click();
      await detail.getByRole('heading', { name: 'Sources' }).waitFor();
    } finally {
      await ordersReads.release();
    }
    // A later read of this pane, answered after the late one: once it is drawn, the late answer has come back too.
    await detail.getByRole('button', { name: 'Compare', exact: true }).click();
    await detail.getByRole('table', { name: 'Code from v1 to v2' }).waitFor();
    expect(await detail.getByRole('heading', { level: 2 }).textContent()).toMatch(/^bundled/);
    const files = detail.getByRole('group', { name: 'Source files' });
    expect(await files.getByRole('button').allTextContents()).toEqual(['src/index.ts', 'src/reply.ts']);
    await detail.getByLabel('src/index.ts of bundled version 2').getByText("import { reply } from './reply';").waitFor();
    await files.getByRole('button', { name: 'src/reply.ts' }).click();
    await detail.getByLabel('src/reply.ts of bundled version 2').getByText('export const reply').waitFor();
    expect(await files.getByRole('button', { name: 'src/reply.ts' }).getAttribute('aria-pressed')).toBe('true');
    expect(await detail.getByLabel('Bundle of bundled version 2').isVisible()).toBe(false);
    await detail.getByText('Bundle (the code that runs)').click();
    await detail.getByLabel('Bundle of bundled version 2').getByText('var reply = (text) => ({ text });').waitFor();
    await screenshot('connector-sources');
  });

  it('finds an invocation by its id, and cancels it while it runs after a confirming click', async () => {
    const bot = newBotId('acme-cancel');
    await deploy(bot, 'waits', WAITS);
    const waitsToken = await mint(bot);
    const started = await api.postJson(api.webhookUrl(bot, 'Order', 'waits', 'asyncResponse=true'), waitsToken, {});
    expect(started.status).toBe(202);
    const id = started.json.invocationId as string;
    await open(`${bot}/invocations`);
    await page.getByLabel('Invocation id', { exact: true }).fill('no-such-invocation');
    await page.getByRole('button', { name: 'Find' }).click();
    const detail = page.locator('.detail-pane');
    await detail.getByText(`No invocation 'no-such-invocation' for bot '${bot}'.`).waitFor();
    await page.getByLabel('Invocation id', { exact: true }).fill(` ${id} `);
    await page.getByRole('button', { name: 'Find' }).click();
    expect(page.url()).toContain(`#/bots/${bot}/invocations/${id}`);
    await detail.locator('.badge', { hasText: /^(Queued|Running)$/ }).waitFor();
    const cancel = detail.getByRole('button', { name: 'Cancel invocation' });
    await cancel.click();
    await detail.getByText('Click again to cancel').waitFor();
    expect((await api.admin('GET', `/bots/${bot}/invocations/${id}`)).json.status).toMatch(/^(Queued|Running)$/);
    await screenshot('invocation-cancel-armed');
    await cancel.click();
    await page.getByText(`Invocation ${id} cancelled`).waitFor();
    await detail.locator('.badge', { hasText: 'Cancelled' }).waitFor();
    expect(await detail.getByRole('button', { name: 'Cancel invocation' }).count()).toBe(0);
    expect((await api.admin('GET', `/bots/${bot}/invocations/${id}`)).json.status).toBe('Cancelled');
  });

  it('pages through more than 100 invocations, older and newer', async () => {
    const bot = newBotId('acme-pages');
    await deploy(bot, 'bulk', QUICK);
    const quickToken = await mint(bot);
    const url = api.webhookUrl(bot, 'Order', 'bulk');
    const ids: string[] = [];
    for (let batch = 0; batch < 11; batch++) {
      const replies = await Promise.all(Array.from({ length: 10 }, () => api.postJson(url, quickToken, {})));
      for (const reply of replies) {
        expect(reply.status).toBe(200);
        ids.push(reply.headers.get('x-invocation-id') ?? '');
      }
    }
    await open(`${bot}/invocations`);
    const rows = page.locator('table.clickable tbody tr');
    const older = page.getByRole('button', { name: 'Older →' });
    const newer = page.getByRole('button', { name: '← Newer' });
    await page.getByText('100 shown', { exact: false }).waitFor();
    expect(await newer.isDisabled()).toBe(true);
    const firstPage = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));
    await older.click();
    await page.getByText('Page 2').waitFor();
    await page.getByText('10 shown', { exact: false }).waitFor();
    expect(await older.isDisabled()).toBe(true);
    const secondPage = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));
    expect(new Set([...firstPage, ...secondPage])).toEqual(new Set(ids));
    await screenshot('invocations-page-2');
    await newer.click();
    await page.getByText('Page 1').waitFor();
    await page.getByText('100 shown', { exact: false }).waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')))).toEqual(firstPage);
  });

  it("shows a durable invocation's wait and its steps a page at a time, the connector's text as text (answers shaped as docs/openapi.yaml says)", async () => {
    const bot = newBotId('acme-steps');
    await deploy(bot, 'orders', CONNECTOR);
    const real = (await api.postJson(api.webhookUrl(bot, 'Order', 'orders'), await mint(bot), { orderId: 1 })).headers.get('x-invocation-id') ?? '';
    // The control API's answers for a Waiting invocation with 61 steps, made from a real invocation's detail.
    const base = (await api.admin('GET', `/bots/${bot}/invocations/${real}`)).json;
    const id = 'durable-console-1';
    const at = (ms: number) => new Date(Date.parse(base.createdAt) + ms).toISOString();
    const until = new Date(Date.now() + 3600_000).toISOString();
    const detail = { ...base, id, status: 'Waiting', finishedAt: null, durationMs: null, error: null, outcome: null, attempt: 2, waiting: { for: 'event', name: 'approved', until }, steps: 61, activeMs: 4200 };
    const hostile = '<img src=x onerror="document.title=\'owned\'">';
    const sent = (n: number) => ({
      name: 'send', occurrence: n, kind: 'step', status: n === 7 ? 'failed' : 'done', attempts: n === 7 ? 3 : 1, startedAt: at(n * 1000), finishedAt: at(n * 1000 + 250),
      durationMs: 250, until: null, resultBytes: n === 7 ? 0 : 1536, error: n === 7 ? { name: 'Error', message: `provider said ${hostile}` } : null,
    });
    const wait = { name: 'approved', occurrence: 1, kind: 'event', status: 'waiting', attempts: 0, startedAt: at(61_000), finishedAt: null, durationMs: null, until, resultBytes: 0, error: null };
    const journal = [wait, ...Array.from({ length: 60 }, (_, i) => sent(60 - i))];
    const pages: Record<string, unknown> = { '': { steps: journal.slice(0, 50), nextBefore: '11_send' }, '11_send': { steps: journal.slice(50), nextBefore: null } };
    const detailPath = `/admin/bots/${bot}/invocations/${id}`;
    // The stand-in answers are checked against the description, as every answer of the service is.
    const json = new Headers({ 'content-type': 'application/json' });
    expect(await openApiDrift('GET', `${service.baseUrl}${detailPath}`, { status: 200, headers: json, json: detail })).toBeNull();
    for (const page of Object.values(pages)) expect(await openApiDrift('GET', `${service.baseUrl}${detailPath}/steps`, { status: 200, headers: json, json: page })).toBeNull();
    const stepReads: string[] = [];
    const stubbed = (url: URL) => url.pathname === detailPath || url.pathname === `${detailPath}/steps`;
    await page.route(
      stubbed,
      (route) => {
        const url = new URL(route.request().url());
        if (url.pathname === detailPath) return route.fulfill({ json: detail });
        stepReads.push(url.search);
        return route.fulfill({ json: pages[url.searchParams.get('before') ?? ''] });
      },
    );

    await open(`${bot}/invocations`);
    await page.getByLabel('Invocation id', { exact: true }).fill(id);
    await page.getByRole('button', { name: 'Find' }).click();
    const pane = page.locator('.detail-pane');
    await pane.locator('.badge', { hasText: 'Waiting' }).first().waitFor();
    await pane.getByText('Waiting for the event approved until').waitFor();
    await pane.getByText('4.20 s run by its attempts that suspended').waitFor();
    await pane.getByRole('heading', { name: 'Steps (61)' }).waitFor();
    const rows = pane.locator('table.steps tbody tr');
    await rows.first().waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-step')))).toEqual(journal.slice(0, 50).map((s) => `${s.name}#${s.occurrence}`));
    expect(await rows.first().locator('td').allInnerTexts()).toEqual(['approved #1', 'event', 'waiting', '—', expect.any(String), '—', '—', expect.stringMatching(/^until /)]);
    expect(await rows.nth(1).locator('td').allInnerTexts()).toEqual(['send #60', 'step', 'done', '1', expect.any(String), '250 ms', '1.5 KiB', '']);
    await screenshot('invocation-waiting');

    await pane.getByRole('button', { name: 'Older steps →' }).click();
    await pane.getByText('Page 2').waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-step')))).toEqual(journal.slice(50).map((s) => `${s.name}#${s.occurrence}`));
    // The connector's error is text: shown as written, never markup.
    await pane.locator('tr[data-step="send#7"]').getByText(`Error: provider said ${hostile}`).waitFor();
    expect(await pane.locator('table.steps img').count()).toBe(0);
    expect(await page.title()).not.toBe('owned');
    expect(await pane.getByRole('button', { name: 'Older steps →' }).isDisabled()).toBe(true);
    await pane.getByRole('button', { name: '← Newer steps' }).click();
    await pane.getByText('Page 1').waitFor();
    expect(await rows.count()).toBe(50);
    expect(stepReads.slice(0, 3)).toEqual(['?limit=50', '?limit=50&before=11_send', '?limit=50']);

    // The list's filter offers the status.
    const filtered = page.waitForRequest((request) => new URL(request.url()).searchParams.get('status') === 'Waiting');
    await page.getByLabel('Status', { exact: true }).selectOption('Waiting');
    await filtered;
    await page.getByText('None match the filters.').waitFor();
  });

  it('shows a real durable run waiting for its event, which the webhook screen\'s curl line resumes (needs Context.Step and WaitForEvent in the sandbox)', async () => {
    const bot = newBotId('acme-durable');
    await deploy(bot, 'durable', DURABLE);
    const durableToken = await mint(bot);
    const started = await api.postJson(api.webhookUrl(bot, 'Order', 'durable', 'asyncResponse=true'), durableToken, {});
    expect(started.status).toBe(202);
    const id = started.json.invocationId as string;
    // Waits for the state, never for a time: the run journals its steps and suspends.
    for (let read = await api.admin('GET', `/bots/${bot}/invocations/${id}`); read.json.status !== 'Waiting'; read = await api.admin('GET', `/bots/${bot}/invocations/${id}`)) {
      expect(read.json.status).toMatch(/^(Queued|Running)$/);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await open(`${bot}/invocations`);
    await page.getByLabel('Invocation id', { exact: true }).fill(id);
    await page.getByRole('button', { name: 'Find' }).click();
    const pane = page.locator('.detail-pane');
    await pane.getByText('Waiting for the event approved until').waitFor();
    await pane.getByRole('heading', { name: 'Steps (4)' }).waitFor();
    expect(await pane.locator('table.steps tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-step')))).toEqual(['approved#1', 'send#3', 'send#2', 'send#1']);
    await screenshot('invocation-waiting-real');

    // The curl line of the webhook screen, run as a user would paste it, resumes the run.
    await tab('Webhooks').click();
    await page.getByRole('button', { name: 'Copy event curl example' }).click();
    const curl = String(await inPage('navigator.clipboard.readText()'));
    const resumed = await new Promise<string>((resolve, reject) =>
      execFile('bash', ['-c', curl], { env: { PATH: process.env.PATH, TOKEN: durableToken, ID: id }, timeout: 10_000 }, (error, out) => (error ? reject(error) : resolve(out))),
    );
    expect(JSON.parse(resumed)).toEqual({ invocationId: id, name: 'approved', status: 'resumed' });
    await tab('Invocations').click();
    await page.getByLabel('Invocation id', { exact: true }).fill(id);
    await page.getByRole('button', { name: 'Find' }).click();
    await pane.locator('.badge', { hasText: 'Completed' }).first().waitFor();
    await pane.locator('tr[data-step="approved#1"]').getByText('done').waitFor();
    expect(await pane.getByText('Waiting for the event').count()).toBe(0);
    expect((await api.admin('GET', `/bots/${bot}/invocations/${id}`)).json.outcome.responseBody).toEqual({ approval: { by: 'ada' } });
  });

  it('sets the bot\'s quotas and a token\'s quotas', async () => {
    const bot = newBotId('acme-quotas');
    await deploy(bot, 'orders', CONNECTOR);
    await mint(bot, 'crm');
    await open(`${bot}/settings`);
    await page.getByLabel(`Calls per second of bot ${bot}`).fill('25');
    await page.getByLabel(`Burst of bot ${bot}`).fill('50');
    await page.getByLabel(`Max in flight of bot ${bot}`).fill('');
    await page.getByRole('button', { name: 'Save bot quotas' }).click();
    await page.getByText(`Quotas of ${bot} saved`).waitFor();
    await page.locator('[data-effective="bot"]').getByText('25 per second (burst 50)', { exact: false }).waitFor();
    expect((await api.admin('GET', `/bots/${bot}/quotas`)).json.quotas).toEqual({ ratePerSecond: 25, burst: 50, maxInFlight: null });

    await page.getByLabel('Max in flight of token crm').fill('3');
    await page.getByRole('button', { name: 'Save quotas of token crm' }).click();
    await page.getByText('Quotas of token crm saved').waitFor();
    const tokens = (await api.admin('GET', `/bots/${bot}/quotas`)).json.tokens as { quotas: unknown }[];
    expect(tokens.map((t) => t.quotas)).toEqual([{ ratePerSecond: null, burst: null, maxInFlight: 3 }]);

    await page.getByLabel(`Burst of bot ${bot}`).fill('5');
    await page.getByLabel(`Calls per second of bot ${bot}`).fill('');
    await page.getByRole('button', { name: 'Save bot quotas' }).click();
    await page.locator('.card', { hasText: 'Bot quotas' }).getByText('a burst needs a ratePerSecond').waitFor();
  });

  it('creates the callback signing secret, shown once with a copy button, and rotates it', async () => {
    const bot = newBotId('acme-signing');
    await deploy(bot, 'orders', CONNECTOR);
    await open(`${bot}/settings`);
    const signing = page.locator('.card', { hasText: 'Callback signing secret' });
    await signing.getByText('No callback signing secret yet').waitFor();
    await signing.getByRole('button', { name: 'Create secret' }).click();
    await signing.getByText('Copy the secret now: it is shown only this once.').waitFor();
    const first = (await signing.locator('[data-secret="signing"]').textContent()) ?? '';
    expect(first).toMatch(/^whsec_/);
    await signing.getByRole('button', { name: 'Copy callback secret' }).click();
    expect(await inPage('navigator.clipboard.readText()')).toBe(first);
    await screenshot('settings-callback-secret');
    await signing.getByRole('button', { name: 'Done, hide it' }).click();
    expect(await signing.locator('[data-secret="signing"]').count()).toBe(0);
    await signing.getByText('Current secret created', { exact: false }).waitFor();

    const rotate = signing.getByRole('button', { name: 'Rotate callback secret' });
    await rotate.click();
    await signing.getByText('Click again to rotate').waitFor();
    await rotate.click();
    const second = (await signing.locator('[data-secret="signing"]').textContent()) ?? '';
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    await signing.getByText('The previous one is still accepted until', { exact: false }).waitFor();
    await signing.getByRole('button', { name: 'Done, hide it' }).click();
    await page.reload();
    await signing.getByText('Current secret created', { exact: false }).waitFor();
    expect((await page.locator('body').textContent()) ?? '').not.toContain(second);
  });

  it('sets, lists and deletes connector secrets of the bot and of one integration, never showing a value', async () => {
    const bot = newBotId('acme-secrets');
    await deploy(bot, 'orders', CONNECTOR);
    await deploy(bot, 'refunds', QUICK);
    await open(`${bot}/settings/refunds`);
    const botSecrets = page.locator('.card', { hasText: 'Connector secrets of the bot' });
    await botSecrets.getByLabel('Secret name').fill('SHARED_KEY');
    await botSecrets.getByLabel('Secret value').fill(SECRET_VALUE);
    expect(await botSecrets.getByLabel('Secret value').getAttribute('type')).toBe('password');
    await botSecrets.getByRole('button', { name: 'Set secret' }).click();
    await page.getByText(`Secret SHARED_KEY set for bot ${bot}`).waitFor();
    await botSecrets.locator('tr[data-secret="SHARED_KEY"]').waitFor();
    expect(await botSecrets.getByLabel('Secret value').inputValue()).toBe('');

    await botSecrets.getByLabel('Secret name').fill('bad name');
    await botSecrets.getByLabel('Secret value').fill('x');
    await botSecrets.getByRole('button', { name: 'Set secret' }).click();
    await botSecrets.getByText('A secret name is 1-64 upper-case letters', { exact: false }).waitFor();

    const integration = page.locator('.card', { hasText: 'Integration settings' });
    // While the chosen integration loads, the one shown before takes no input: what is typed next
    // cannot land on it, nor be wiped when the chosen one arrives.
    const integrationReads = await holdRequests(page, (url) => new RegExp(`/bots/${bot}/integrations(/orders)?$`).test(url.pathname));
    try {
      expect(await integration.locator('.secrets-panel').count()).toBe(1);
      await integration.getByLabel('Integration to configure').selectOption('orders');
      expect(page.url()).toMatch(new RegExp(`#/bots/${bot}/settings/orders$`));
      expect(await integration.locator('.secrets-panel').count()).toBe(0);
    } finally {
      await integrationReads.release();
    }
    await integration.locator('.secrets-panel[data-scope="orders"]').waitFor();
    await integration.getByLabel('Secret name').fill('API_KEY');
    await integration.getByLabel('Secret value').fill(`${SECRET_VALUE}-orders`);
    await integration.getByRole('button', { name: 'Set secret' }).click();
    await page.getByText('Secret API_KEY set for integration orders').waitFor();
    await integration.locator('tr[data-secret="API_KEY"]').waitFor();
    expect((await api.admin('GET', `/bots/${bot}/integrations/orders/secrets`)).json.secrets).toEqual([
      { name: 'API_KEY', createdAt: expect.any(String), updatedAt: expect.any(String) },
    ]);
    await screenshot('settings');
    expect((await page.locator('body').textContent()) ?? '').not.toContain(SECRET_VALUE);

    const remove = integration.getByRole('button', { name: 'Delete secret API_KEY' });
    await remove.click();
    await remove.click();
    await page.getByText('Secret API_KEY deleted').waitFor();
    await integration.getByText('No secrets.').waitFor();
    expect((await api.admin('GET', `/bots/${bot}/integrations/orders/secrets`)).json.secrets).toEqual([]);
    expect((await api.admin('GET', `/bots/${bot}/secrets`)).json.secrets).toMatchObject([{ name: 'SHARED_KEY' }]);
  });

  it('changes an integration\'s run limits and allowed hosts by deploying a new version with the same code', async () => {
    const bot = newBotId('acme-limits');
    await deploy(bot, 'orders', CONNECTOR);
    await open(`${bot}/settings/orders`);
    const before = (await api.admin('GET', `/bots/${bot}/integrations/orders`)).json;
    const integration = page.locator('.card', { hasText: 'Integration settings' });
    await integration.getByLabel('Memory (MiB)').fill('128');
    await integration.getByLabel('Calls in flight').fill('4');
    await integration.getByLabel('Allowed hosts').fill('api.example.com\n*.example.org');
    await integration.getByRole('button', { name: `Save as version ${before.version + 1}` }).click();
    await page.getByText(`Deployed orders version ${before.version + 1} with the new settings`).waitFor();
    const after = (await api.admin('GET', `/bots/${bot}/integrations/orders`)).json;
    expect(after).toMatchObject({
      version: before.version + 1,
      code: before.code,
      entityName: before.entityName,
      timeoutSeconds: before.timeoutSeconds,
      allowedHosts: ['api.example.com', '*.example.org'],
      limits: { ...before.limits, memoryMiB: 128, pendingCalls: 4 },
    });
    await integration.getByText(`Version ${after.version}, deployed`, { exact: false }).waitFor();

    await integration.getByLabel('Memory (MiB)').fill('1');
    await integration.getByRole('button', { name: `Save as version ${after.version + 1}` }).click();
    await integration.getByRole('alert').getByText('limits.memoryMiB', { exact: false }).waitFor();
    expect((await api.admin('GET', `/bots/${bot}/integrations/orders`)).json.version).toBe(after.version);
  });

  it("sets an integration's inbound auth to a provider's signature; the Webhooks view says what to paste into the provider", async () => {
    const bot = newBotId('acme-inbound');
    await deploy(bot, 'orders', CONNECTOR);
    const before = (await api.admin('GET', `/bots/${bot}/integrations/orders`)).json;
    await open(`${bot}/settings/orders`);
    const integration = page.locator('.card', { hasText: 'Integration settings' });
    await integration.getByRole('button', { name: `Save as version ${before.version + 1}` }).waitFor();
    await integration.getByLabel('Inbound authentication').selectOption('github');
    await integration.getByLabel('Secret holding the key').fill('GITHUB_WEBHOOK_SECRET');
    await integration.getByRole('button', { name: `Save as version ${before.version + 1}` }).click();
    await page.getByText(`Deployed orders version ${before.version + 1} with the new settings`).waitFor();
    const signed = (await api.admin('GET', `/bots/${bot}/integrations/orders`)).json;
    expect(signed).toMatchObject({ version: before.version + 1, code: before.code, limits: before.limits, inboundAuth: { scheme: 'github', secret: 'GITHUB_WEBHOOK_SECRET' } });

    await tab('Webhooks').click();
    const setup = page.locator('.inbound-setup[data-scheme="github"]');
    await setup.getByText('Paste into GitHub:').waitFor();
    await setup.getByText('the value of connector secret GITHUB_WEBHOOK_SECRET').waitFor();
    await setup.getByText('(not set: set it in Settings)').waitFor();
    await setup.getByRole('button', { name: 'Copy Payload URL for orders' }).click();
    expect(await inPage('navigator.clipboard.readText()')).toBe(`${service.baseUrl}/api/Platform/${bot}/Order/orders/GenericIntegration`);
    await screenshot('webhooks-github');

    // And back to a bot token, from the same form.
    await tab('Settings').click();
    await integration.getByRole('button', { name: `Save as version ${signed.version + 1}` }).waitFor();
    await integration.getByLabel('Inbound authentication').selectOption('bearer');
    await integration.getByRole('button', { name: `Save as version ${signed.version + 1}` }).click();
    await page.getByText(`Deployed orders version ${signed.version + 1} with the new settings`).waitFor();
    expect((await api.admin('GET', `/bots/${bot}/integrations/orders`)).json.inboundAuth).toEqual({ scheme: 'bearer' });
  });

  it('fits a phone-sized screen (375 px) and a 1280 px one: no view sticks out sideways', async () => {
    const bot = newBotId('acme-phone');
    await deploy(bot, 'orders', CONNECTOR);
    const invocationId = (await api.postJson(api.webhookUrl(bot, 'Order', 'orders'), await mint(bot), { orderId: 1 })).headers.get('x-invocation-id') ?? '';
    const views: [string, string][] = [
      ['overview', 'overview'],
      ['webhooks', 'webhooks'],
      ['connectors', 'connectors/orders'],
      ['authentication', 'authentication'],
      ['invocations', `invocations/${invocationId}`],
      ['settings', 'settings/orders'],
    ];
    await open(`${bot}/overview`);
    for (const viewport of [PHONE, { width: 1280, height: 800 }]) {
      await page.setViewportSize(viewport);
      for (const [name, route] of views) {
        await page.goto(`${service.baseUrl}/console#/bots/${bot}/${route}`);
        await page.locator('.view').getByText('Loading…').first().waitFor({ state: 'detached' });
        await page.locator('.view :is(table, .card, .detail-pane, .empty)').first().waitFor();
        // Give late parts (a chart, a list) their moment to arrive before measuring.
        await page.waitForLoadState('networkidle');
        expect({ view: name, width: viewport.width, ...((await inPage(OVERFLOWING)) as object) }).toEqual({ view: name, width: viewport.width, pageScrollsSideways: false, overflowing: [] });
        if (viewport === PHONE) await screenshot(`phone-${name}`);
      }
    }
  }, 60_000);

  /** A connector whose answer is `{ answer: text }`. */
  const answering = (text: string) => `const entity = Context.GetRequestEntity();\nentity.ResponseBody = { answer: "${text}" };\nContext.SetResponseEntity(entity);\n`;

  it('compares two versions side by side and rolls back to one after a confirmation; live calls run it', async () => {
    const bot = newBotId('acme-rollback');
    await deploy(bot, 'versioned', answering('one'), { timeoutSeconds: 30 });
    await deploy(bot, 'versioned', answering('two'), { timeoutSeconds: 20 });
    await open(`${bot}/connectors`);
    await page.getByRole('link', { name: /^versioned/ }).click();
    const detail = page.locator('.detail-pane');
    await detail.getByRole('listitem', { name: 'Version 1', exact: true }).click();
    await detail.getByText('Showing version 1; calls run version 2.').waitFor();

    await detail.getByRole('button', { name: 'Compare', exact: true }).click();
    const code = detail.getByRole('table', { name: 'Code from v2 to v1' });
    await code.waitFor();
    expect(await code.locator('tr.diff-changed td.diff-removed').allTextContents()).toEqual(['entity.ResponseBody = { answer: "two" };']);
    expect(await code.locator('tr.diff-changed td.diff-added').allTextContents()).toEqual(['entity.ResponseBody = { answer: "one" };']);
    expect(await detail.getByRole('table', { name: 'Settings that differ' }).locator('tbody tr').allTextContents()).toEqual(['timeoutSeconds2030']);
    await screenshot('connector-diff');

    const rollBack = detail.getByRole('button', { name: 'Roll back to this version' });
    await rollBack.click();
    // The first click only arms the button: nothing is deployed yet.
    await rollBack.getByText('Click again: deploy v1 as v3').waitFor();
    expect((await api.admin('GET', `/bots/${bot}/integrations/versioned/versions`)).json.latest).toBe(2);
    await rollBack.click();
    await page.getByText('Rolled back to version 1: now version 3').waitFor();
    await detail.getByRole('heading', { name: 'versioned v3' }).waitFor();
    await screenshot('connector-rollback');
    const live = await api.postJson(api.webhookUrl(bot, 'Order', 'versioned'), await mint(bot), {});
    expect(live.json).toEqual({ answer: 'one' });
  });

  it('replays the latest calls against a draft, showing both answers and their diff, and publishes it', async () => {
    const bot = newBotId('acme-replay');
    await deploy(bot, 'versioned', answering('one'));
    const token = await mint(bot);
    const call = async () => (await api.postJson(api.webhookUrl(bot, 'Order', 'versioned'), token, {})).json;
    expect([await call(), await call()]).toEqual([{ answer: 'one' }, { answer: 'one' }]);
    expect((await api.admin('PUT', `/bots/${bot}/integrations/versioned/draft`, { entityName: 'Order', code: answering('three') })).json).toMatchObject({ liveVersion: 1 });
    await open(`${bot}/connectors`);
    await page.getByRole('link', { name: /^versioned/ }).click();
    const draft = page.locator('.detail-pane').getByRole('region', { name: 'Draft' });
    await draft.getByText('calls run v1 until it is published').waitFor();

    await draft.getByRole('spinbutton', { name: 'Calls to replay' }).fill('2');
    await draft.getByRole('combobox', { name: 'Outbound HTTP' }).selectOption('block');
    await draft.getByRole('button', { name: 'Replay', exact: true }).click();
    await draft.getByText('2 call(s) replayed; 2 answer(s) differ from v1.').waitFor();
    const rows = draft.locator('article.replay-row');
    expect(await rows.count()).toBe(2);
    const first = rows.first();
    expect(await first.getByLabel(/^Published answer of /).textContent()).toBe('{\n  "answer": "one"\n}');
    expect(await first.getByLabel(/^Draft answer of /).textContent()).toBe('{\n  "answer": "three"\n}');
    const diff = first.getByRole('table', { name: /^Answer diff of / });
    expect(await diff.locator('tr.diff-changed td.diff-removed').allTextContents()).toEqual(['  "answer": "one"']);
    expect(await diff.locator('tr.diff-changed td.diff-added').allTextContents()).toEqual(['  "answer": "three"']);
    await noToasts();
    await screenshot('connector-replay');
    await page.setViewportSize(PHONE);
    expect({ width: PHONE.width, ...((await inPage(OVERFLOWING)) as object) }).toEqual({ width: PHONE.width, pageScrollsSideways: false, overflowing: [] });
    await screenshot('phone-connector-replay');
    await page.setViewportSize({ width: 1366, height: 800 });
    // Replays stored nothing: still the two calls of versioned.
    expect((await api.admin('GET', `/bots/${bot}/invocations?integrationId=versioned`)).json.invocations).toHaveLength(2);

    await draft.getByRole('button', { name: 'Publish draft' }).click();
    await draft.getByText('Click again: publish as v2').waitFor();
    expect((await api.admin('GET', `/bots/${bot}/integrations/versioned/versions`)).json.latest).toBe(1);
    await draft.getByRole('button', { name: 'Publish draft' }).click();
    await page.getByText('Published the draft: now version 2').waitFor();
    await page.locator('.detail-pane').getByRole('heading', { name: 'versioned v2' }).waitFor();
    expect(await page.locator('.detail-pane').getByRole('region', { name: 'Draft' }).count()).toBe(0);
    expect(await call()).toEqual({ answer: 'three' });
  });

  it('deletes a connector after a confirmation', async () => {
    const bot = newBotId('acme-delete-connector');
    await deploy(bot, 'orders', CONNECTOR);
    await deploy(bot, 'versioned', answering('one'));
    await open(`${bot}/connectors/versioned`);
    const detail = page.locator('.detail-pane');
    await detail.getByRole('heading', { name: 'versioned v1' }).waitFor();
    const remove = detail.getByRole('button', { name: 'Delete connector' });
    await remove.click();
    await remove.getByText('Click again to delete').waitFor();
    // The list is read again after the deletion, and the notice waits for it: never beside a stale list.
    const listRead = await holdRequests(page, (url) => url.pathname.endsWith(`/bots/${bot}/integrations`));
    try {
      await remove.click();
      await listRead.caught;
      expect(await page.getByText('Deleted versioned').count()).toBe(0);
    } finally {
      await listRead.release();
    }
    await page.getByText('Deleted versioned').waitFor();
    expect(await page.getByRole('link', { name: /^versioned/ }).count()).toBe(0);
    await page.getByRole('link', { name: /^orders/ }).waitFor();
    expect((await api.admin('GET', `/bots/${bot}/integrations/versioned`)).status).toBe(404);
  });

  it('deletes an entity no connector uses, and a whole bot, cancelling its calls in flight after a second confirmation', async () => {
    const bot = newBotId('scratch');
    const waitsToken = await api.setUp(bot, 'Job', 'slow', WAITS);
    watchedTokens.push(waitsToken);
    expect((await api.admin('PUT', `/bots/${bot}/entities/Spare`, { fields: [] })).status).toBe(200);
    const started = await api.postJson(api.webhookUrl(bot, 'Job', 'slow', 'asyncResponse=true'), waitsToken, {});
    expect(started.status).toBe(202);
    await open(`${bot}/overview`);
    const entities = page.locator('.card', { hasText: 'Entities' });

    // An entity a connector stores its calls in stays, and the refusal names the connector.
    const job = entities.getByRole('button', { name: 'Delete entity Job' });
    await job.click();
    await job.click();
    await entities.getByText("Entity 'Job' is used by integration(s) 'slow'").waitFor();
    const spare = entities.getByRole('button', { name: 'Delete entity Spare' });
    await spare.click();
    await spare.getByText('Click again to delete').waitFor();
    const entityNames = async () => ((await api.admin('GET', `/bots/${bot}/entities`)).json.entities as { name: string }[]).map((e) => e.name);
    expect(await entityNames()).toContain('Spare');
    await spare.click();
    await page.getByText('Entity Spare deleted').waitFor();
    await spare.waitFor({ state: 'detached' });
    expect(await entityNames()).toEqual(['Job']);

    await tab('Settings').click();
    const danger = page.locator('.card', { hasText: 'Delete this bot' });
    const deleteBot = danger.getByRole('button', { name: `Delete bot ${bot}` });
    await deleteBot.click();
    await deleteBot.getByText(`Click again to delete ${bot}`).waitFor();
    await deleteBot.click();
    // A call is still waiting: refused, and the operator is asked once more before it is cancelled.
    await danger.getByText(`1 call(s) of ${bot} are queued or running.`).waitFor();
    expect((await api.admin('GET', `/bots/${bot}/invocations/${started.json.invocationId as string}`)).json.status).toMatch(/^(Queued|Running)$/);
    const force = danger.getByRole('button', { name: `Delete ${bot} anyway` });
    await force.click();
    await force.getByText('Click again to cancel them and delete').waitFor();
    await screenshot('bot-delete-in-use');
    await force.click();
    await page.getByText(`Deleted ${bot} and cancelled 1 call(s) in flight`).waitFor();
    // The console leaves the deleted bot: for the first bot left, or the welcome when none is.
    await page.waitForURL((url) => url.hash === '#/' || (/^#\/bots\/[^/]+\/overview$/.test(url.hash) && !url.hash.startsWith(`#/bots/${bot}/`)));
    expect(await page.getByRole('navigation', { name: 'Bots' }).getByRole('link', { name: bot, exact: true }).count()).toBe(0);
    expect((await api.admin('GET', '/bots')).json.bots).not.toContain(bot);
  });

  it('signs out, forgetting the token and stopping the live refresh', async () => {
    const bot = newBotId('acme-sign-out');
    expect((await api.admin('PUT', `/bots/${bot}/entities/Order`, {})).status).toBe(200);
    // The page's clock is the test's: the live refresh (every 2 s) runs only when the test moves time on.
    await page.clock.install();
    await open(`${bot}/invocations`);
    await page.getByText('No invocations').waitFor();
    await page.clock.pauseAt(Number(await inPage('Date.now()')) + 1_000);
    const adminCalls = () => requested.filter((url) => url.startsWith(`${service.baseUrl}/admin/`)).length;
    // Signed in, 2 s more of the page's time read the list again: the clock drives the refresh.
    const refreshed = page.waitForResponse((response) => new URL(response.url()).pathname === `/admin/bots/${bot}/invocations`);
    await page.clock.runFor(2_000);
    await refreshed;

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await inPage('sessionStorage.length')).toBe(0);
    const before = adminCalls();
    // Five refreshes' worth of the page's time, then a later request (the reload): any read the
    // refresh made would be reported before it.
    await page.clock.runFor(10_000);
    await page.reload();
    await page.getByLabel('Admin token').waitFor();
    expect(adminCalls()).toBe(before);
  });
});

// The distributed control service: the embedded one generates a SECRETS_KEY when none is set.
describe('web console of a distributed deployment without SECRETS_KEY (headless Chromium)', () => {
  const deployment = distributedDeployment('console-no-key');
  let service: ServiceProcess;
  let browser: Browser;

  beforeAll(async () => {
    service = await deployment.start('control');
    await new Api(service.baseUrl).setUp('plain', 'Order', 'orders', QUICK);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.dispose();
    rmSync(deployment.dataDir, { recursive: true, force: true });
  });

  it('says plainly that the service cannot store secrets, and stores none', async () => {
    const page = await browser.newPage({ viewport: PHONE });
    const problems = pageProblems(page);
    await signIn(page, `${service.baseUrl}/console`);
    await page.goto(`${service.baseUrl}/console#/bots/plain/settings`);
    const botSecrets = page.locator('.card', { hasText: 'Connector secrets of the bot' });
    await botSecrets.getByLabel('Secret name').fill('API_KEY');
    await botSecrets.getByLabel('Secret value').fill(SECRET_VALUE);
    await botSecrets.getByRole('button', { name: 'Set secret' }).click();
    await botSecrets.getByText('This service cannot store secrets: no SECRETS_KEY is configured.').waitFor();
    expect(await botSecrets.getByLabel('Secret value').inputValue()).toBe('');
    await page.screenshot({ path: artifactPath('console', 'phone-settings-no-secrets-key.png'), fullPage: true });
    expect((await new Api(service.baseUrl).admin('GET', '/bots/plain/secrets')).json.secrets).toEqual([]);
    expect(problems).toEqual([]);
  });
});
