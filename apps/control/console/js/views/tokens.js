// The Authentication tab: bearer tokens of the bot's webhook callers.
import { fill, h } from '../dom.js';
import { formatExpiry, formatTime } from '../format.js';
import { card, confirmButton, copyButton, emptyState, errorNotice, notice } from '../widgets.js';

/** Lifetimes offered for a short-lived token, in seconds (the API takes 60 s to 30 days). */
const LIFETIMES = [
  ['', 'Permanent (until revoked)'],
  ['3600', 'Short-lived: 1 hour'],
  ['86400', 'Short-lived: 1 day'],
  ['604800', 'Short-lived: 7 days'],
  ['2592000', 'Short-lived: 30 days'],
];

/** @param {import('../api.js').TokenInfo} token */
function stateOf(token) {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && Date.parse(token.expiresAt) <= Date.now()) return 'expired';
  return 'active';
}

/** @type {import('../main.js').View} */
export function tokensView(root, { api, bot, toast }) {
  const label = h('input', { name: 'label', maxlength: 200, placeholder: 'e.g. crm-production', 'aria-label': 'Label' });
  const lifetime = h('select', { name: 'lifetime', 'aria-label': 'Lifetime' }, LIFETIMES.map(([value, text]) => h('option', { value }, text)));
  const created = h('div', { class: 'created-token' });
  const formMessage = h('div');
  const form = h(
    'form',
    { class: 'inline-form' },
    h('label', { class: 'grow' }, 'Label', label),
    h('label', {}, 'Lifetime', lifetime),
    h('button', { type: 'submit', class: 'primary' }, 'Create token'),
  );
  const table = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fill(formMessage);
    try {
      const ttl = lifetime.value ? Number(lifetime.value) : undefined;
      const minted = await api.createToken(bot, { label: label.value.trim() || undefined, ttlSeconds: ttl });
      form.reset();
      showCreated(minted);
      await load();
    } catch (error) {
      fill(formMessage, errorNotice(error));
    }
  });

  /** The token itself, this once: the service keeps only its id and label. */
  function showCreated(/** @type {import('../api.js').CreatedToken} */ minted) {
    fill(
      created,
      notice(
        'success',
        h('strong', {}, 'Token created. Copy it now: it is shown only this once.'),
        h('div', { class: 'copy-field token-value' }, h('code', { class: 'copy-value', 'data-token': 'new' }, minted.token), copyButton(minted.token, 'new token')),
        h('div', { class: 'small' }, `Token id ${minted.tokenId} · expires ${formatExpiry(minted.expiresAt)}`),
        h('button', { type: 'button', class: 'ghost small', onclick: () => fill(created) }, 'Done, hide it'),
      ),
    );
  }

  /**
   * Revoking takes a second click on the same button, so a stray click cannot cut a caller off.
   * @param {import('../api.js').TokenInfo} token
   */
  function revokeButton(token) {
    return confirmButton({
      label: 'Revoke',
      armedLabel: 'Click again to revoke',
      name: `Revoke ${token.label ?? token.tokenId}`,
      action: async () => {
        try {
          await api.revokeToken(bot, token.tokenId);
          toast(`Token ${token.label ?? token.tokenId} revoked`);
          await load();
        } catch (error) {
          fill(formMessage, errorNotice(error));
        }
      },
    });
  }

  async function load() {
    try {
      const tokens = (await api.tokens(bot)).sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
      fill(
        table,
        tokens.length === 0
          ? emptyState('No tokens yet', h('p', {}, 'Create one above and give it to the system that calls the webhook.'))
          : h(
              'table',
              { class: 'list tokens' },
              h('thead', {}, h('tr', {}, h('th', {}, 'Label'), h('th', {}, 'Token id'), h('th', {}, 'Created'), h('th', {}, 'Expires'), h('th', {}, 'State'), h('th', {}))),
              h(
                'tbody',
                {},
                tokens.map((t) => {
                  const state = stateOf(t);
                  return h(
                    'tr',
                    { class: state === 'active' ? '' : 'inactive', 'data-token-id': t.tokenId },
                    h('td', {}, t.label ?? h('span', { class: 'muted' }, '(no label)')),
                    h('td', {}, h('code', { class: 'small' }, t.tokenId)),
                    h('td', { class: 'nowrap', title: t.createdAt }, formatTime(t.createdAt)),
                    h('td', { class: 'nowrap', title: t.expiresAt ?? 'permanent' }, formatExpiry(t.expiresAt)),
                    h('td', {}, h('span', { class: `badge token-${state}` }, state === 'revoked' ? `revoked ${formatTime(t.revokedAt)}` : state)),
                    h('td', { class: 'actions' }, state === 'revoked' ? null : revokeButton(t)),
                  );
                }),
              ),
            ),
      );
    } catch (error) {
      fill(table, errorNotice(error));
    }
  }

  fill(
    root,
    h(
      'div',
      { class: 'stack' },
      card(
        'Create a token',
        null,
        h('p', { class: 'muted small' }, 'Webhook callers send it as ', h('code', {}, 'Authorization: Bearer <token>'), '. Permanent tokens last until revoked; short-lived ones expire on their own. Revoking takes effect at once.'),
        form,
        formMessage,
        created,
      ),
      card('Tokens', null, table),
    ),
  );
  void load();
  return {};
}
