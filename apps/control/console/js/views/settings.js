// The Settings tab of a bot: its quotas and those of each token, the callback signing secret, the
// connector secrets it shares with its integrations, and each integration's run limits, allowed hosts
// and own secrets (#/bots/<bot>/settings/<integrationId> opens one).
import { ApiError } from '../api.js';
import { fill, h } from '../dom.js';
import { formatTime } from '../format.js';
import { latestRead } from '../latest.js';
import { card, confirmButton, copyButton, emptyState, errorNotice, notice } from '../widgets.js';
import { deleteBotPanel } from './delete-bot.js';
import { integrationSettings } from './integration-settings.js';
import { secretsPanel } from './secrets-panel.js';

/** @typedef {import('../api.js').Quotas} Quotas */

const QUOTA_FIELDS = /** @type {const} */ ([
  ['ratePerSecond', 'Calls per second', '0.01'],
  ['burst', 'Burst', '1'],
  ['maxInFlight', 'Max in flight', '1'],
]);

/** @param {number | null} value */
const limitText = (value) => (value === null ? 'no limit' : String(value));

/** @param {Quotas} effective */
const effectiveText = (effective) =>
  `Enforced: ${limitText(effective.ratePerSecond)} per second (burst ${limitText(effective.burst)}), ${limitText(effective.maxInFlight)} in flight.`;

/**
 * Three number fields; an empty one sends null (the default for a bot, no limit for a token).
 * @param {Quotas} own
 * @param {Quotas} effective shown as the placeholder of an empty field
 * @param {string} of for the fields' accessible names
 */
function quotaFields(own, effective, of) {
  const inputs = QUOTA_FIELDS.map(([key, label, step]) =>
    h('input', { name: key, type: 'number', min: 0, step, value: own[key] ?? '', placeholder: limitText(effective[key]), 'aria-label': `${label} of ${of}` }),
  );
  const read = () => {
    /** @type {Quotas} */
    const quotas = { ratePerSecond: null, burst: null, maxInFlight: null };
    for (const [i, [key]] of QUOTA_FIELDS.entries()) quotas[key] = inputs[i].value === '' ? null : Number(inputs[i].value);
    return quotas;
  };
  return { inputs, read };
}

/** @type {import('../main.js').View} */
export function settingsView(root, { api, bot, item, go, toast, leaveBot }) {
  const quotasBox = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const tokenQuotasBox = h('div');
  const signingBox = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const integrationBox = h('div');

  async function loadQuotas() {
    try {
      const [quotas, tokens] = await Promise.all([api.quotas(bot), api.tokens(bot)]);
      renderBotQuotas(quotas);
      renderTokenQuotas(quotas, tokens.filter((t) => !t.revokedAt));
    } catch (error) {
      fill(quotasBox, errorNotice(error));
    }
  }

  /** @param {import('../api.js').BotQuotas} quotas */
  function renderBotQuotas(quotas) {
    const fields = quotaFields(quotas.quotas, quotas.effective, `bot ${bot}`);
    const message = h('div');
    const form = h(
      'form',
      { class: 'inline-form quota-form' },
      QUOTA_FIELDS.map(([, label], i) => h('label', {}, label, fields.inputs[i])),
      h('button', { type: 'submit', class: 'primary' }, 'Save bot quotas'),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      fill(message);
      try {
        const saved = await api.setQuotas(bot, fields.read());
        toast(`Quotas of ${bot} saved`);
        renderBotQuotas(saved);
      } catch (error) {
        fill(message, errorNotice(error));
      }
    });
    fill(
      quotasBox,
      h('p', { class: 'muted small' }, 'For all of the bot’s callers together. An empty field takes the service’s default; a burst needs a rate.'),
      form,
      h('p', { class: 'small', 'data-effective': 'bot' }, effectiveText(quotas.effective)),
      message,
    );
  }

  /**
   * @param {import('../api.js').BotQuotas} quotas
   * @param {import('../api.js').TokenInfo[]} tokens
   */
  function renderTokenQuotas(quotas, tokens) {
    if (tokens.length === 0) {
      fill(tokenQuotasBox, h('p', { class: 'muted' }, 'No active tokens (see Authentication).'));
      return;
    }
    const message = h('div');
    const none = { ratePerSecond: null, burst: null, maxInFlight: null };
    fill(
      tokenQuotasBox,
      h('p', { class: 'muted small' }, 'For one caller, within the bot’s quotas. An empty field means no limit of its own.'),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'list token-quotas' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Token'), QUOTA_FIELDS.map(([, label]) => h('th', {}, label)), h('th', {}))),
          h(
            'tbody',
            {},
            tokens.map((t) => {
              const own = quotas.tokens.find((q) => q.tokenId === t.tokenId);
              const name = t.label ?? t.tokenId;
              const fields = quotaFields(own?.quotas ?? none, own?.effective ?? none, `token ${name}`);
              const save = h('button', { type: 'button', class: 'small', 'aria-label': `Save quotas of token ${name}` }, 'Save');
              save.addEventListener('click', async () => {
                fill(message);
                try {
                  await api.setTokenQuotas(bot, t.tokenId, fields.read());
                  toast(`Quotas of token ${name} saved`);
                } catch (error) {
                  fill(message, errorNotice(error));
                }
              });
              return h(
                'tr',
                { 'data-token-id': t.tokenId },
                h('td', {}, name, h('div', { class: 'small muted' }, h('code', {}, t.tokenId))),
                fields.inputs.map((input) => h('td', {}, input)),
                h('td', { class: 'actions' }, save),
              );
            }),
          ),
        ),
      ),
      message,
    );
  }

  async function loadSigning() {
    /** @type {import('../api.js').CallbackSecretInfo | null} */
    let info = null;
    try {
      info = await api.callbackSecret(bot);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) {
        fill(signingBox, errorNotice(error));
        return;
      }
    }
    renderSigning(info, null);
  }

  /**
   * @param {import('../api.js').CallbackSecretInfo | null} info
   * @param {import('../api.js').CreatedCallbackSecret | null} created shown this once
   */
  function renderSigning(info, created) {
    const message = h('div');
    const rotate = async () => {
      fill(message);
      try {
        const made = await api.rotateCallbackSecret(bot);
        renderSigning(made, made);
      } catch (error) {
        fill(message, errorNotice(error));
      }
    };
    const action = info
      ? confirmButton({ label: 'Rotate secret', armedLabel: 'Click again to rotate', name: 'Rotate callback secret', kind: 'small', action: rotate })
      : h('button', { type: 'button', class: 'primary', onclick: rotate }, 'Create secret');
    fill(
      signingBox,
      h(
        'p',
        { class: 'muted small' },
        'Callbacks (the outcome POSTed to a callbackUrl) are signed with it (Standard Webhooks); receivers check the signature. After a rotation, callbacks carry the previous secret’s signature too for 24 hours.',
      ),
      info
        ? h(
            'p',
            { 'data-signing': 'status' },
            `Current secret created ${formatTime(info.createdAt)}.`,
            info.previousSecretValidUntil ? ` The previous one is still accepted until ${formatTime(info.previousSecretValidUntil)}.` : '',
          )
        : h('p', { 'data-signing': 'status' }, 'No callback signing secret yet: create one before an integration sets a callbackUrl.'),
      created
        ? notice(
            'warning',
            h('strong', {}, 'Copy the secret now: it is shown only this once.'),
            ' Give it to the receivers of this bot’s callbacks; anyone who has it can sign callbacks as this service.',
            h('div', { class: 'copy-field token-value' }, h('code', { class: 'copy-value', 'data-secret': 'signing' }, created.secret), copyButton(created.secret, 'callback secret')),
            h('button', { type: 'button', class: 'ghost small', onclick: () => renderSigning(info, null) }, 'Done, hide it'),
          )
        : null,
      h('div', { class: 'row' }, action),
      message,
    );
  }

  const integrationRead = latestRead();

  /** @param {string | undefined} integrationId */
  async function showIntegration(integrationId) {
    const isLatest = integrationRead();
    // The integration shown until now stops taking input at once, so nothing typed lands on it.
    const previous = integrationBox.querySelector('.integration-body');
    if (previous) fill(previous, h('p', { class: 'muted' }, 'Loading…'));
    /** @type {import('../api.js').Integration[]} */
    let list;
    try {
      list = await api.integrations(bot);
    } catch (error) {
      if (isLatest()) fill(integrationBox, errorNotice(error));
      return;
    }
    if (!isLatest()) return;
    if (list.length === 0) {
      fill(integrationBox, emptyState('No connector deployed yet', h('p', {}, 'Deploy one (Connectors tab) to set its limits, hosts and secrets.')));
      return;
    }
    const chosen = integrationId && list.some((i) => i.integrationId === integrationId) ? integrationId : list[0].integrationId;
    const picker = h(
      'select',
      { name: 'integration', 'aria-label': 'Integration to configure' },
      list.map((i) => h('option', { value: i.integrationId, selected: i.integrationId === chosen }, i.integrationId)),
    );
    picker.addEventListener('change', () => go('settings', picker.value));
    const body = h('div', { class: 'integration-body' }, h('p', { class: 'muted' }, 'Loading…'));
    fill(integrationBox, h('label', { class: 'picker' }, 'Integration', picker), body);
    try {
      const detail = await api.integration(bot, chosen);
      if (!isLatest()) return;
      fill(body, integrationSettings({ api, bot, detail, toast, saved: () => void showIntegration(chosen) }), h('h3', {}, 'Secrets of ', h('code', {}, chosen)), secretsPanel({ api, bot, integrationId: chosen, toast }));
    } catch (error) {
      if (isLatest()) fill(body, errorNotice(error));
    }
  }

  fill(
    root,
    h(
      'div',
      { class: 'stack settings' },
      card('Bot quotas', null, quotasBox),
      card('Token quotas', null, tokenQuotasBox),
      card('Callback signing secret', null, signingBox),
      card('Connector secrets of the bot', null, secretsPanel({ api, bot, integrationId: null, toast })),
      card('Integration settings', null, integrationBox),
      card('Delete this bot', null, deleteBotPanel({ api, bot, toast, leaveBot })),
    ),
  );
  void loadQuotas();
  void loadSigning();
  void showIntegration(item);
  return {
    show(next) {
      void showIntegration(next);
    },
  };
}
