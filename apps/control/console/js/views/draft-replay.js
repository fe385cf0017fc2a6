// An integration's draft (deployed with gi connector deploy --draft or the control API): replay
// stored calls against it, see both answers and their diff per call, and publish it.
import { fill, h } from '../dom.js';
import { formatData, formatDuration, formatTime } from '../format.js';
import { codeBlock, confirmButton, errorNotice, notice, statusBadge } from '../widgets.js';
import { sideBySide } from './version-diff.js';

/** The service's bound (MAX_REPLAY_REQUESTS in libs/domain): a replay runs each call in the sandbox. */
const MAX_CALLS = 50;

/**
 * What one side answered: its ResponseBody, or the error it failed with.
 * @param {import('../api.js').ReplaySide} side
 */
const answerOf = (side) => (side.error ? `${side.error.title}: ${side.error.detail}` : formatData(side.responseBody ?? null));

/**
 * One call replayed: both statuses and run times, both answers, and their diff when they differ.
 * @param {import('../api.js').ReplayedRequest} row
 */
function replayedRow(row) {
  const changed = row.diff !== '';
  return h(
    'article',
    { class: `replay-row${changed ? ' changed' : ''}`, 'aria-label': `Replay of ${row.invocationId}` },
    h(
      'header',
      { class: 'replay-head' },
      h('span', { class: 'mono replay-id' }, row.invocationId),
      h('span', { class: 'replay-side' }, `v${row.published.version} `, statusBadge(row.published.status), ` ${formatDuration(row.published.durationMs)}`),
      h('span', { class: 'replay-side' }, 'draft ', statusBadge(row.draft.status), ` ${formatDuration(row.draft.durationMs)}`),
      h('span', { class: `badge ${changed ? 'replay-changed' : 'replay-same'}` }, changed ? 'changed' : 'same'),
    ),
    h(
      'div',
      { class: 'replay-bodies' },
      h('div', {}, h('h5', {}, `Published (v${row.published.version}, as stored)`), codeBlock(answerOf(row.published), { label: `Published answer of ${row.invocationId}` })),
      h('div', {}, h('h5', {}, 'Draft'), codeBlock(answerOf(row.draft), { label: `Draft answer of ${row.invocationId}` })),
    ),
    changed ? sideBySide(row.diff, `Answer diff of ${row.invocationId}`, `published v${row.published.version}`, 'draft') : null,
  );
}

/**
 * @param {{ api: ReturnType<typeof import('../api.js').createApi>, bot: string, draft: import('../api.js').Draft, latest: number, toast: (text: string) => void, onPublished: () => Promise<void> }} options
 */
export function draftSection({ api, bot, draft, latest, toast, onPublished }) {
  const id = draft.integrationId;
  const message = h('div', { class: 'action-message' });
  const calls = h('input', { type: 'number', min: '1', max: String(MAX_CALLS), value: '10', 'aria-label': 'Calls to replay', class: 'narrow' });
  const outbound = h(
    'select',
    { 'aria-label': 'Outbound HTTP' },
    h('option', { value: 'block', selected: true }, 'Outbound HTTP blocked'),
    h('option', { value: 'send' }, 'Outbound HTTP sent'),
  );
  const result = h('div', { class: 'replay-result' });
  const run = h('button', { type: 'submit', class: 'primary small' }, 'Replay');

  /** @param {Event} event */
  async function replay(event) {
    event.preventDefault();
    const last = Number(calls.value);
    if (!Number.isInteger(last) || last < 1 || last > MAX_CALLS) return void fill(result, notice('error', `Replay 1 to ${MAX_CALLS} calls.`));
    run.disabled = true;
    fill(result, h('p', { class: 'muted' }, 'Replaying…'));
    try {
      const report = await api.replay(bot, id, { last, outbound: /** @type {'block' | 'send'} */ (outbound.value) });
      fill(
        result,
        report.replayed.length === 0
          ? h('p', { class: 'muted small' }, `${id} has no stored calls to replay yet.`)
          : h('p', { class: 'small', role: 'status' }, `${report.replayed.length} call(s) replayed; ${report.changed} answer(s) differ from v${report.publishedVersion}.`),
        ...report.replayed.map(replayedRow),
      );
    } catch (error) {
      fill(result, errorNotice(error));
    } finally {
      run.disabled = false;
    }
  }

  async function publish() {
    try {
      const published = await api.publish(bot, id);
      toast(`Published the draft: now version ${published.version}`);
      await onPublished();
    } catch (error) {
      fill(message, errorNotice(error));
    }
  }

  return h(
    'section',
    { class: 'draft-replay', 'aria-label': 'Draft' },
    h('h3', {}, 'Draft'),
    h(
      'div',
      { class: 'row' },
      h('span', {}, `Deployed as a draft ${formatTime(draft.draftedAt)}; calls run v${latest} until it is published.`),
      confirmButton({ label: 'Publish draft', armedLabel: `Click again: publish as v${latest + 1}`, name: 'Publish draft', action: publish, kind: 'primary small' }),
    ),
    message,
    h('h4', {}, 'Replay stored calls against the draft'),
    h(
      'p',
      { class: 'muted small' },
      'Runs the latest calls again with the draft, in the sandbox, with its limits, allowed hosts and secrets. Stored calls stay as they are; no callback is sent and no quota is used.',
    ),
    h('form', { class: 'row', onsubmit: replay }, h('label', { class: 'check' }, 'Latest', calls, 'calls'), outbound, run),
    result,
  );
}
