// Connector secrets of a bot (shared by its integrations) or of one integration: names and dates
// listed, values set through a password field and never shown again, deleted with a confirming click.
import { ApiError } from '../api.js';
import { fill, h } from '../dom.js';
import { formatTime } from '../format.js';
import { confirmButton, errorNotice, notice } from '../widgets.js';

/** Mirrors the API's rule, so a bad name is caught before the value leaves the field. */
const SECRET_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;

/**
 * What went wrong with a secret call; a service without SECRETS_KEY (409) is said plainly, with what
 * an operator does about it.
 * @param {unknown} error
 */
export function secretErrorNotice(error) {
  if (error instanceof ApiError && error.status === 409 && error.problem.type.endsWith('secrets-not-configured')) {
    return notice(
      'warning',
      h('strong', {}, 'This service cannot store secrets: no SECRETS_KEY is configured.'),
      ' An operator sets SECRETS_KEY (32 random bytes, base64, e.g. ',
      h('code', {}, 'openssl rand -base64 32'),
      ') in the service configuration and restarts it; nothing was stored.',
    );
  }
  return errorNotice(error);
}

/**
 * @param {{ api: import('../api.js').Api, bot: string, integrationId: string | null, toast: import('../main.js').ViewContext['toast'] }} options
 * @returns {HTMLElement}
 */
export function secretsPanel({ api, bot, integrationId, toast }) {
  const scope = integrationId === null ? `bot ${bot}` : `integration ${integrationId}`;
  const name = h('input', { name: 'secretName', required: true, maxlength: 64, placeholder: 'API_KEY', autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Secret name' });
  const value = h('input', { name: 'secretValue', type: 'password', required: true, autocomplete: 'new-password', 'aria-label': 'Secret value' });
  const message = h('div', { class: 'secret-message' });
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const form = h(
    'form',
    { class: 'inline-form' },
    h('label', {}, 'Name', name),
    h('label', { class: 'grow' }, 'Value (write-only)', value),
    h('button', { type: 'submit', class: 'primary' }, 'Set secret'),
  );

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fill(message);
    const secretName = name.value.trim();
    if (!SECRET_NAME.test(secretName)) {
      fill(message, notice('error', 'A secret name is 1-64 upper-case letters, digits and _, not starting with a digit (like API_KEY).'));
      return;
    }
    try {
      await api.setSecret(bot, integrationId, secretName, value.value);
      // The value leaves the page once sent: the field is cleared, the list shows only the name.
      form.reset();
      toast(`Secret ${secretName} set for ${scope}`);
      await load();
    } catch (error) {
      value.value = '';
      fill(message, secretErrorNotice(error));
    }
  });

  async function load() {
    try {
      const secrets = await api.secrets(bot, integrationId);
      fill(
        list,
        secrets.length === 0
          ? h('p', { class: 'muted' }, 'No secrets.')
          : h(
              'div',
              { class: 'table-wrap' },
              h(
                'table',
                { class: 'list secrets' },
                h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Created'), h('th', {}, 'Updated'), h('th', {}))),
                h(
                  'tbody',
                  {},
                  secrets.map((s) =>
                    h(
                      'tr',
                      { 'data-secret': s.name },
                      h('td', {}, h('code', {}, s.name)),
                      h('td', { class: 'nowrap', title: s.createdAt }, formatTime(s.createdAt)),
                      h('td', { class: 'nowrap', title: s.updatedAt }, formatTime(s.updatedAt)),
                      h(
                        'td',
                        { class: 'actions' },
                        confirmButton({
                          label: 'Delete',
                          armedLabel: 'Click again to delete',
                          name: `Delete secret ${s.name}`,
                          action: async () => {
                            try {
                              await api.deleteSecret(bot, integrationId, s.name);
                              toast(`Secret ${s.name} deleted`);
                              await load();
                            } catch (error) {
                              fill(message, secretErrorNotice(error));
                            }
                          },
                        }),
                      ),
                    ),
                  ),
                ),
              ),
            ),
      );
    } catch (error) {
      fill(list, errorNotice(error));
    }
  }

  void load();
  return h(
    'div',
    { class: 'secrets-panel', 'data-scope': integrationId ?? '' },
    h(
      'p',
      { class: 'muted small' },
      'A connector reads them as ',
      h('code', {}, 'Context.Secrets.NAME'),
      integrationId === null ? '; an integration’s own secret of the same name wins.' : '; these win over the bot’s secrets of the same name.',
      ' Setting an existing name replaces (rotates) its value.',
    ),
    form,
    message,
    list,
  );
}
