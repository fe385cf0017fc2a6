// Deleting what calls may be using (a connector, a whole bot): the service refuses while calls of it
// are queued or running (409 in-use), and the operator may then delete it anyway, cancelling them.
import { ApiError } from './api.js';
import { fill, h } from './dom.js';
import { confirmButton, errorNotice, notice } from './widgets.js';

/**
 * @param {{
 *   what: string,
 *   message: HTMLElement,
 *   remove: (force: boolean) => Promise<{ cancelledInvocations: number }>,
 *   done: (summary: string) => Promise<void> | void,
 * }} options `what`: named in the messages; `message`: where a refusal is shown; `done`: after deleting
 * @param {boolean} [force]
 */
export async function deleteUnlessInUse({ what, message, remove, done }, force = false) {
  try {
    const deleted = await remove(force);
    fill(message);
    await done(`Deleted ${what}${deleted.cancelledInvocations ? ` and cancelled ${deleted.cancelledInvocations} call(s) in flight` : ''}`);
  } catch (error) {
    const problem = error instanceof ApiError ? error.problem : null;
    if (problem?.type !== 'urn:gi:problem:in-use' || force) return void fill(message, errorNotice(error));
    fill(
      message,
      notice(
        'warning',
        h('div', {}, `${problem.inFlight} call(s) of ${what} are queued or running.`),
        confirmButton({
          label: 'Delete anyway, cancelling them',
          armedLabel: 'Click again to cancel them and delete',
          name: `Delete ${what} anyway`,
          kind: 'danger small',
          action: () => deleteUnlessInUse({ what, message, remove, done }, true),
        }),
      ),
    );
  }
}
