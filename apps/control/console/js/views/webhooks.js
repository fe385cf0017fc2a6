// What a webhook caller needs: the base URL, the bot id, every integration's URLs and a curl line; for an
// integration a provider signs, what to paste into the provider's settings instead; and what resumes a
// durable job waiting for an event: the event URL and its curl line.
import { fill, h } from '../dom.js';
import { card, codeBlock, copyButton, copyField, emptyState, errorNotice, pairsTable } from '../widgets.js';

/**
 * How a durable job waiting in `Context.WaitForEvent` is resumed: a copyable curl line that sends
 * invocation `$ID` the event `approved`.
 * @param {string} eventUrl with the placeholders `{invocationId}` and `{name}`
 */
function eventExample(eventUrl) {
  const url = eventUrl.replace('{invocationId}', '$ID').replace('{name}', 'approved');
  const curl = [`curl -X POST "${url}" \\`, `  -H "Authorization: Bearer $TOKEN" \\`, `  -H 'Content-Type: application/json' -d '{"by": "ada"}'`].join('\n');
  return [
    h(
      'p',
      { class: 'muted small' },
      'A durable job waiting in ',
      h('code', {}, 'Context.WaitForEvent(name)'),
      ' resumes when its event is POSTed to the event URL, its ',
      h('code', {}, 'invocationId'),
      ' and ',
      h('code', {}, 'name'),
      ' filled in; the body is the payload:',
    ),
    h('div', { class: 'example' }, h('div', { class: 'example-head' }, h('span', { class: 'muted small' }, 'Event'), copyButton(curl, 'event curl example')), codeBlock(curl, { label: 'event curl example' })),
  ];
}

/**
 * A row of a pairs table for a URL a service may not send (one that predates it): none without it.
 * @param {string} name
 * @param {string | undefined} url
 * @param {(url: string) => import('../dom.js').Children} value
 * @returns {[string, import('../dom.js').Children][]}
 */
const optionalRow = (name, url, value) => (url ? [[name, value(url)]] : []);

/**
 * @param {import('../api.js').WebhookUrls} urls
 * @returns {Record<'sync' | 'async' | 'file', string>}
 */
function curlExamples(urls) {
  const auth = `-H "Authorization: Bearer $TOKEN"`;
  const poll = urls.poll.replace('{invocationId}', '$ID');
  return {
    sync: [`curl -X POST '${urls.sync}' \\`, `  ${auth} \\`, `  -H 'Content-Type: application/json' \\`, `  -d '{"orderId": 42}'`].join('\n'),
    async: [
      `ID=$(curl -s -X POST '${urls.async}' \\`,
      `  ${auth} \\`,
      `  -H 'Content-Type: application/json' -d '{"orderId": 42}' \\`,
      `  | sed -E 's/.*"invocationId":"([^"]+)".*/\\1/')`,
      `curl -s "${poll}&waitSeconds=20" \\`,
      `  ${auth}`,
    ].join('\n'),
    file: [`curl -X POST '${urls.fileTransfer}' \\`, `  ${auth} \\`, `  -F 'file=@invoice.pdf' \\`, `  -F 'orderId=42'`].join('\n'),
  };
}

/**
 * How an integration's calls are authenticated: for a signing provider, exactly what to paste into its
 * settings and whether the secrets holding the key are set.
 * @param {import('../api.js').InboundSetup} setup
 * @param {string} id
 */
function inboundSetup(setup, id) {
  return h(
    'div',
    { class: 'inbound-setup', 'data-scheme': setup.scheme },
    h('h3', {}, `Inbound authentication: ${setup.scheme}`),
    h('p', { class: 'muted small' }, `Paste into ${setup.provider}:`),
    pairsTable(setup.fields.map((field) => [field.label, copyField(field.value, `${field.label} for ${id}`)])),
    setup.secrets.length > 0
      ? h(
          'p',
          { class: 'small' },
          'Key secrets: ',
          setup.secrets.flatMap((secret, i) => [
            i > 0 ? ', ' : '',
            h('code', {}, secret.name),
            secret.set ? ' (set)' : h('span', { class: 'secret-missing' }, ' (not set: set it in Settings)'),
          ]),
        )
      : null,
    h('p', { class: 'muted small' }, setup.note),
  );
}

/** @param {import('../api.js').Webhook['integrations'][number]} integration */
function integrationCard(integration) {
  const setup = integration.inboundAuth;
  const signed = setup !== undefined && setup.scheme !== 'bearer';
  const examples = curlExamples(integration.urls);
  /** @type {keyof typeof examples} */
  let shown = 'sync';
  const example = h('div', { class: 'example' });
  const switcher = h('div', { class: 'segmented', role: 'tablist', 'aria-label': 'curl example' });
  const labels = /** @type {const} */ ({ sync: 'Sync', async: 'Async + poll', file: 'File transfer' });
  function render() {
    fill(
      switcher,
      /** @type {(keyof typeof examples)[]} */ (['sync', 'async', 'file']).map((kind) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            'aria-selected': String(kind === shown),
            class: kind === shown ? 'active' : '',
            onclick: () => {
              shown = kind;
              render();
            },
          },
          labels[kind],
        ),
      ),
    );
    fill(example, h('div', { class: 'example-head' }, switcher, copyButton(examples[shown], `curl example for ${integration.integrationId}`)), codeBlock(examples[shown], { label: 'curl example' }));
  }
  render();
  return card(
    integration.integrationId,
    h('span', { class: 'muted small' }, `entity ${integration.entityName} · version ${integration.version}`),
    pairsTable([
      ['Sync', copyField(integration.urls.sync, `sync URL of ${integration.integrationId}`)],
      ['Async', copyField(integration.urls.async, `async URL of ${integration.integrationId}`)],
      ['File transfer', copyField(integration.urls.fileTransfer, `file transfer URL of ${integration.integrationId}`)],
      ['Polling', copyField(integration.urls.poll, `polling URL of ${integration.integrationId}`)],
      ...optionalRow('Event', integration.urls.event, (url) => copyField(url, `event URL of ${integration.integrationId}`)),
    ]),
    signed ? inboundSetup(setup, integration.integrationId) : example,
  );
}

/** @type {import('../main.js').View} */
export function webhooksView(root, { api, bot, go }) {
  fill(root, h('p', { class: 'muted' }, 'Loading…'));
  api.webhook(bot).then(
    (webhook) => {
      fill(
        root,
        h(
          'div',
          { class: 'stack' },
          card(
            'Webhook configuration',
            null,
            pairsTable([
              ['Base URL', copyField(webhook.baseUrl, 'base URL')],
              ['Bot id', copyField(webhook.botId, 'bot id')],
              ['Polling', copyField(webhook.pollUrl, 'polling URL')],
              ...optionalRow('Event', webhook.eventUrl, (url) => copyField(url, 'event URL')),
            ]),
            h(
              'p',
              { class: 'muted small' },
              'Callers send ',
              h('code', {}, 'Authorization: Bearer <token>'),
              ' with a token of this bot: create one in ',
              h('a', { href: '#', onclick: (/** @type {Event} */ e) => (e.preventDefault(), go('authentication')) }, 'Authentication'),
              ', then ',
              h('code', {}, 'export TOKEN=…'),
              ' to run the examples below.',
            ),
            webhook.eventUrl ? eventExample(webhook.eventUrl) : null,
          ),
          webhook.integrations.length === 0
            ? emptyState('No connector deployed yet', h('p', {}, 'Deploy one in ', h('a', { href: '#', onclick: (/** @type {Event} */ e) => (e.preventDefault(), go('connectors')) }, 'Connectors'), ' and its URLs appear here.'))
            : webhook.integrations.map(integrationCard),
        ),
      );
    },
    (error) => fill(root, errorNotice(error)),
  );
  return {};
}
