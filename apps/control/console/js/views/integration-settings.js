// An integration's run limits, allowed hosts and inbound auth. Settings belong to a version, so saving
// deploys a new version with the same code (and sources, entity, pool and callback URL) and the new settings.
import { fill, h } from '../dom.js';
import { formatTime } from '../format.js';
import { errorNotice, notice } from '../widgets.js';
import { inboundAuthForm } from './inbound-auth-form.js';

/** @typedef {import('../api.js').RunLimits} RunLimits */

/** @type {[keyof RunLimits, string][]} */
const LIMIT_FIELDS = [
  ['memoryMiB', 'Memory (MiB)'],
  ['cpuSeconds', 'CPU time (s)'],
  ['responseBodyKiB', 'ResponseBody (KiB)'],
  ['logKiB', 'Log (KiB)'],
  ['pendingCalls', 'Calls in flight'],
];

/** @param {string} text */
const hostList = (text) => text.split(/[\s,]+/).filter(Boolean);

/**
 * @param {{ api: import('../api.js').Api, bot: string, detail: import('../api.js').IntegrationDetail, toast: import('../main.js').ViewContext['toast'], saved: () => void }} options
 * @returns {HTMLElement}
 */
export function integrationSettings({ api, bot, detail, toast, saved }) {
  const id = detail.integrationId;
  const timeout = h('input', { name: 'timeoutSeconds', type: 'number', min: 1, value: detail.timeoutSeconds, required: true, 'aria-label': 'Timeout in seconds' });
  const limits = LIMIT_FIELDS.map(([key, label]) => [key, label, h('input', { name: key, type: 'number', min: 1, value: detail.limits[key], required: true, 'aria-label': label })]);
  const hosts = h('textarea', { name: 'allowedHosts', rows: 3, spellcheck: 'false', placeholder: 'api.example.com\n*.example.org', 'aria-label': 'Allowed hosts' });
  hosts.value = detail.allowedHosts.join('\n');
  const inbound = inboundAuthForm(detail.inboundAuth);
  const message = h('div');
  const submit = h('button', { type: 'submit', class: 'primary' }, `Save as version ${(detail.versions[0]?.version ?? detail.version) + 1}`);

  const form = h(
    'form',
    { class: 'deploy-form settings-form' },
    h(
      'p',
      { class: 'muted small' },
      `Version ${detail.version}, deployed ${formatTime(detail.deployedAt)}. Saving deploys a new version with the same code and these settings; calls in flight finish on the version they started with.`,
    ),
    h('div', { class: 'form-grid' }, h('label', {}, 'Timeout (s)', timeout), limits.map(([, label, input]) => h('label', {}, label, input))),
    h('label', { class: 'hosts-label' }, 'Allowed hosts for Context.Http (one per line; none: no outbound HTTP)', hosts),
    inbound.element,
    message,
    h('div', { class: 'row' }, submit),
  );

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    fill(message);
    try {
      const deployed = await api.deploy(bot, id, {
        entityName: detail.entityName,
        code: detail.code,
        sources: detail.sources ?? [],
        pool: detail.pool,
        callbackUrl: detail.callbackUrl,
        timeoutSeconds: Number(timeout.value),
        allowedHosts: hostList(hosts.value),
        limits: Object.fromEntries(limits.map(([key, , input]) => [key, Number(/** @type {HTMLInputElement} */ (input).value)])),
        inboundAuth: inbound.value(),
      });
      toast(`Deployed ${id} version ${deployed.version} with the new settings`);
      saved();
    } catch (error) {
      fill(message, errorNotice(error));
    } finally {
      submit.disabled = false;
    }
  });

  return h(
    'div',
    { class: 'integration-settings' },
    detail.callbackUrl ? notice('info', 'Callbacks of this integration go to ', h('code', {}, detail.callbackUrl), '.') : null,
    form,
  );
}
