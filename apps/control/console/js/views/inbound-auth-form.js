// An integration's inbound auth (docs/inbound.md) in the Settings form: bearer, or a scheme with the
// connector secret holding its key and the scheme's own options. The service checks what is sent.
import { fill, h } from '../dom.js';

/** @typedef {import('../api.js').InboundAuth} InboundAuth */

/** The schemes, with the provider each is for. */
const SCHEMES = /** @type {const} */ ([
  ['bearer', 'Bearer token of the bot (default)'],
  ['github', 'GitHub (X-Hub-Signature-256)'],
  ['stripe', 'Stripe (Stripe-Signature)'],
  ['shopify', 'Shopify (X-Shopify-Hmac-Sha256)'],
  ['slack', 'Slack (X-Slack-Signature)'],
  ['hubspot-v3', 'HubSpot (X-HubSpot-Signature-v3)'],
  ['twilio', 'Twilio (X-Twilio-Signature)'],
  ['standard-webhooks', 'Standard Webhooks (webhook-signature)'],
  ['hmac', 'HMAC of your own producer'],
  ['basic', 'Basic auth'],
  ['api-key', 'API key in a header'],
]);

/** Which options each scheme has besides its secrets. */
const OPTIONS_OF = /** @type {Record<string, string[]>} */ ({
  stripe: ['toleranceSeconds'],
  slack: ['toleranceSeconds'],
  'hubspot-v3': ['toleranceSeconds'],
  'standard-webhooks': ['toleranceSeconds'],
  hmac: ['header', 'algorithm', 'encoding', 'prefix', 'timestampHeader', 'toleranceSeconds', 'deliveryIdHeader'],
  basic: ['deliveryIdHeader'],
  'api-key': ['header', 'deliveryIdHeader'],
});

/** @type {Record<string, string>} */
const LABELS = {
  toleranceSeconds: 'Time tolerance (s)',
  header: 'Signature or key header',
  algorithm: 'Algorithm',
  encoding: 'Encoding',
  prefix: 'Prefix before the signature',
  timestampHeader: 'Timestamp header',
  deliveryIdHeader: 'Delivery id header',
};

/**
 * @param {InboundAuth | undefined} current
 * @returns {{ element: HTMLElement, value: () => InboundAuth }}
 */
export function inboundAuthForm(current) {
  const auth = current ?? { scheme: 'bearer' };
  const scheme = h('select', { name: 'inboundScheme', 'aria-label': 'Inbound authentication' }, SCHEMES.map(([value, label]) => h('option', { value, selected: value === auth.scheme }, label)));
  const secret = h('input', { name: 'inboundSecret', value: auth.secret ?? '', placeholder: 'GITHUB_WEBHOOK_SECRET', spellcheck: 'false', 'aria-label': 'Secret holding the key' });
  const previous = h('input', { name: 'inboundPreviousSecret', value: auth.previousSecret ?? '', placeholder: 'during a rotation only', spellcheck: 'false', 'aria-label': 'Previous secret' });
  const allowBearer = h('input', { type: 'checkbox', name: 'inboundAllowBearer', checked: auth.allowBearer === true, 'aria-label': 'Accept a bot token too' });
  /** @type {Record<string, HTMLInputElement | HTMLSelectElement>} */
  const inputs = {
    toleranceSeconds: h('input', { type: 'number', min: 1, max: 3600, value: auth.toleranceSeconds ?? '', placeholder: '300', 'aria-label': LABELS.toleranceSeconds }),
    header: h('input', { value: auth.header ?? '', placeholder: 'X-Signature', spellcheck: 'false', 'aria-label': LABELS.header }),
    algorithm: h('select', { 'aria-label': LABELS.algorithm }, ['sha256', 'sha1', 'sha512'].map((a) => h('option', { value: a, selected: a === (auth.algorithm ?? 'sha256') }, a))),
    encoding: h('select', { 'aria-label': LABELS.encoding }, ['hex', 'base64'].map((e) => h('option', { value: e, selected: e === (auth.encoding ?? 'hex') }, e))),
    prefix: h('input', { value: auth.prefix ?? '', placeholder: 'sha256=', spellcheck: 'false', 'aria-label': LABELS.prefix }),
    timestampHeader: h('input', { value: auth.timestampHeader ?? '', placeholder: 'X-Timestamp', spellcheck: 'false', 'aria-label': LABELS.timestampHeader }),
    deliveryIdHeader: h('input', { value: auth.deliveryIdHeader ?? '', placeholder: 'X-Delivery-Id', spellcheck: 'false', 'aria-label': LABELS.deliveryIdHeader }),
  };
  const keyed = h(
    'div',
    { class: 'form-grid inbound-keyed' },
    h('label', {}, 'Secret holding the key', secret),
    h('label', {}, 'Previous secret (rotation)', previous),
    h('label', { class: 'span-2 check' }, allowBearer, ' Also accept a token of the bot from callers that send no signature'),
  );
  const options = h('div', { class: 'form-grid inbound-options' });
  const render = () => {
    keyed.hidden = scheme.value === 'bearer';
    fill(options, (OPTIONS_OF[scheme.value] ?? []).map((name) => h('label', {}, LABELS[name], inputs[name])));
  };
  scheme.addEventListener('change', render);
  render();

  /** @returns {InboundAuth} */
  const value = () => {
    if (scheme.value === 'bearer') return { scheme: 'bearer' };
    /** @type {InboundAuth} */
    const out = { scheme: scheme.value, secret: secret.value.trim() };
    if (previous.value.trim()) out.previousSecret = previous.value.trim();
    if (allowBearer.checked) out.allowBearer = true;
    for (const name of OPTIONS_OF[scheme.value] ?? []) {
      const text = inputs[name].value.trim();
      if (text === '') continue;
      /** @type {Record<string, unknown>} */ (out)[name] = name === 'toleranceSeconds' ? Number(text) : text;
    }
    return out;
  };

  const element = h(
    'fieldset',
    { class: 'inbound-auth' },
    h('legend', {}, 'Inbound authentication'),
    h('p', { class: 'muted small' }, 'How calls prove who sent them. A provider that signs its webhooks (GitHub, Stripe, ...) sends no token: its signature is checked with the key stored in the connector secret named here.'),
    h('label', {}, 'Scheme', scheme),
    keyed,
    options,
  );
  return { element, value };
}
