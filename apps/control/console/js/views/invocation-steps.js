// A durable invocation's wait and steps (docs/connectors.md, Durable jobs): what it waits for and until
// when, and its journal newest first, a page at a time. Names and errors are the connector's text: they
// are put in text nodes, so nothing in them is markup.
import { fill, h } from '../dom.js';
import { formatBytes, formatDuration, formatTime } from '../format.js';
import { latestRead } from '../latest.js';
import { errorNotice, notice } from '../widgets.js';

const PAGE_SIZE = 50;

/**
 * What a Waiting invocation waits for and until when.
 * @param {import('../api.js').Wait} waiting
 */
export function waitingNotice(waiting) {
  const name = h('code', {}, waiting.name);
  const until = h('time', { datetime: waiting.until, title: waiting.until }, formatTime(waiting.until));
  const what =
    waiting.for === 'event'
      ? ['Waiting for the event ', name, ' until ', until, ' (its timeout); send it to the event URL (Webhooks) to resume the run now.']
      : waiting.for === 'sleep'
        ? ['Waiting: the sleep ', name, ' ends ', until, '.']
        : ['Waiting to retry the step ', name, ' at ', until, '.'];
  return notice('info', h('p', { class: 'waiting' }, ...what));
}

/**
 * Why a step is where it is: its error, when a wait or the next attempt is due.
 * @param {import('../api.js').Step} step
 */
function stepDetail(step) {
  const error = step.error ? h('span', { class: 'step-error' }, `${step.error.name}: ${step.error.message}`) : null;
  if (step.status === 'retrying') return [`next attempt ${formatTime(step.until)}`, error ? '; ' : '', error];
  if (step.status === 'waiting') return `until ${formatTime(step.until)}`;
  return error;
}

/** @param {import('../api.js').Step} step */
function stepRow(step) {
  return h(
    'tr',
    { class: `step ${step.status}`, 'data-step': `${step.name}#${step.occurrence}` },
    h('td', {}, h('code', {}, step.name), h('span', { class: 'muted' }, ` #${step.occurrence}`)),
    h('td', {}, step.kind),
    h('td', {}, h('span', { class: `badge step-${step.status}` }, step.status)),
    h('td', { class: 'num' }, step.kind === 'step' ? step.attempts : '—'),
    h('td', { class: 'nowrap', title: step.startedAt }, formatTime(step.startedAt)),
    h('td', { class: 'num nowrap' }, formatDuration(step.durationMs)),
    h('td', { class: 'num nowrap' }, step.status === 'done' ? formatBytes(step.resultBytes) : '—'),
    h('td', {}, stepDetail(step)),
  );
}

/**
 * The steps of one invocation, the newest page first; "Older steps" and "Newer steps" move a page. `refresh` reads
 * the page shown again (the live refresh calls it when the invocation's step count changed).
 * @param {import('../api.js').Api} api
 * @param {string} bot
 * @param {string} invocationId
 */
export function stepsPanel(api, bot, invocationId) {
  const rows = h('tbody');
  const box = h('div', { class: 'steps-box' }, h('p', { class: 'muted' }, 'Loading…'));
  const newer = h('button', { type: 'button', class: 'small', disabled: true }, '← Newer steps');
  const older = h('button', { type: 'button', class: 'small', disabled: true }, 'Older steps →');
  const pageLabel = h('span', { class: 'muted small' });
  /** The `before` of each page down to the one shown (the newest page has none). */
  let pages = [/** @type {string | undefined} */ (undefined)];
  /** @type {string | null} */
  let nextBefore = null;
  const read = latestRead();

  async function load() {
    const isLatest = read();
    try {
      const page = await api.steps(bot, invocationId, { limit: PAGE_SIZE, before: pages[pages.length - 1] });
      if (!isLatest()) return;
      nextBefore = page.nextBefore;
      newer.disabled = pages.length === 1;
      older.disabled = nextBefore === null;
      fill(pageLabel, `Page ${pages.length}`);
      fill(rows, page.steps.map(stepRow));
      if (!box.contains(rows)) {
        const head = ['Step', 'Kind', 'Status', 'Attempts', 'Started', 'Duration', 'Result', 'Detail'];
        const numeric = new Set(['Attempts', 'Duration', 'Result']);
        fill(
          box,
          h(
            'div',
            { class: 'table-wrap' },
            h('table', { class: 'list steps', 'aria-label': 'Steps' }, h('thead', {}, h('tr', {}, head.map((name) => h('th', { class: numeric.has(name) ? 'num' : '' }, name)))), rows),
          ),
        );
      }
    } catch (error) {
      if (isLatest()) fill(box, errorNotice(error));
    }
  }

  older.addEventListener('click', () => {
    if (nextBefore === null) return;
    pages = [...pages, nextBefore];
    void load();
  });
  newer.addEventListener('click', () => {
    pages = pages.length > 1 ? pages.slice(0, -1) : [undefined];
    void load();
  });
  void load();
  return { element: h('div', { class: 'steps-panel' }, box, h('div', { class: 'pager' }, newer, pageLabel, older)), refresh: load };
}
