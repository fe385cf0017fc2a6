import { ApiError, createApi } from '../api.js';
import { fill, h } from '../dom.js';
import { errorNotice, notice } from '../widgets.js';

/**
 * The sign-in screen: the admin token is checked against the control API before it is kept.
 * @param {HTMLElement} root
 * @param {{ reason?: string, onSignedIn: (token: string) => void }} options
 */
export function showSignIn(root, { reason, onSignedIn }) {
  const input = h('input', {
    id: 'admin-token',
    name: 'admin-token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: 'Paste the admin token',
  });
  const message = h('div', { class: 'sign-in-message' }, reason ? notice('warning', reason) : null);
  const submit = h('button', { type: 'submit', class: 'primary wide' }, 'Sign in');
  // Never a GET form: the token must not end up in a URL, even by accident.
  const form = h(
    'form',
    { class: 'sign-in-form', method: 'post', action: '#' },
    h('label', { for: 'admin-token' }, 'Admin token'),
    input,
    h(
      'p',
      { class: 'hint' },
      'Embedded mode (',
      h('code', {}, 'gi up'),
      ') writes it to ',
      h('code', {}, 'DATA_DIR/admin-token'),
      ' on first start; the distributed deployment reads it from ',
      h('code', {}, 'ADMIN_TOKEN'),
      '. It is kept in this browser tab only, until you sign out or close the tab.',
    ),
    message,
    submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    submit.disabled = true;
    submit.textContent = 'Checking…';
    try {
      await createApi(token).bots();
      onSignedIn(token);
    } catch (error) {
      fill(message, error instanceof ApiError && error.status === 401 ? notice('error', 'That admin token is not valid.') : errorNotice(error));
      input.select();
    } finally {
      submit.disabled = false;
      submit.textContent = 'Sign in';
    }
  });

  fill(
    root,
    h(
      'div',
      { class: 'sign-in' },
      h('div', { class: 'sign-in-card' }, h('div', { class: 'brand big' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'Generic Integration'), h('h1', {}, 'Console'), form),
    ),
  );
  input.focus();
}
