// Deleting a whole bot from its Settings tab: what goes with it is said before the confirming click.
import { deleteUnlessInUse } from '../deletion.js';
import { h } from '../dom.js';
import { confirmButton } from '../widgets.js';

/**
 * @param {{ api: import('../api.js').Api, bot: string, toast: (message: string) => void, leaveBot: () => void }} context
 */
export function deleteBotPanel({ api, bot, toast, leaveBot }) {
  const message = h('div');
  const remove = () =>
    deleteUnlessInUse({
      what: bot,
      message,
      remove: (force) => api.deleteBot(bot, force),
      done: (summary) => {
        toast(summary);
        leaveBot();
      },
    });
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'muted small' },
      'Deletes its entities, connectors with every version, quotas, tokens (they stop working at once), callback signing secrets, connector secrets, and its stored invocations, Idempotency-Keys and uploaded files.',
    ),
    h('div', { class: 'row' }, confirmButton({ label: 'Delete bot', armedLabel: `Click again to delete ${bot}`, name: `Delete bot ${bot}`, kind: 'danger', action: remove })),
    message,
  );
}
