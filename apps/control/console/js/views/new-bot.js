import { fill, h } from '../dom.js';
import { errorNotice } from '../widgets.js';

/**
 * "New bot": a bot exists once it has an entity, so the form defines its first one.
 * @param {import('../api.js').Api} api
 * @param {(bot: string) => void} onCreated
 */
export function newBotForm(api, onCreated) {
  const bot = h('input', { name: 'bot', required: true, placeholder: 'acme', pattern: '[A-Za-z0-9][A-Za-z0-9_.\\-]{0,127}', 'aria-label': 'Bot id' });
  const entity = h('input', { name: 'entity', required: true, value: 'Order', pattern: '[A-Za-z0-9][A-Za-z0-9_.\\-]{0,127}', 'aria-label': 'First entity' });
  const message = h('div');
  const form = h(
    'form',
    { class: 'new-bot', hidden: true },
    h('label', {}, 'Bot id', bot),
    h('label', {}, 'First entity', entity),
    message,
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary small' }, 'Create'), h('button', { type: 'button', class: 'ghost small', onclick: () => toggle(false) }, 'Cancel')),
  );
  const open = h('button', { type: 'button', class: 'ghost small new-bot-open', onclick: () => toggle(true) }, '+ New bot');

  /** @param {boolean} show */
  function toggle(show) {
    form.hidden = !show;
    open.hidden = show;
    fill(message);
    if (show) bot.focus();
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api.defineEntity(bot.value.trim(), entity.value.trim(), []);
      const created = bot.value.trim();
      form.reset();
      toggle(false);
      onCreated(created);
    } catch (error) {
      fill(message, errorNotice(error));
    }
  });
  return h('div', { class: 'new-bot-box' }, open, form);
}
