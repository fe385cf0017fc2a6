// Invocations: a live list filtered by integration and status, paged 100 at a time, and one invocation
// in full (found from the list or by its id), which can be cancelled while it is Queued, Running or
// Waiting; a durable one shows what it waits for and its steps.
import { fill, h } from '../dom.js';
import { formatBytes, formatData, formatDuration, formatTime, queryPairs } from '../format.js';
import { latestRead } from '../latest.js';
import { codeBlock, confirmButton, copyField, emptyState, errorNotice, notice, pairsTable, statusBadge } from '../widgets.js';
import { stepsPanel, waitingNotice } from './invocation-steps.js';

const REFRESH_MS = 2_000;
const PAGE_SIZE = 100;
const STATUSES = ['Queued', 'Running', 'Waiting', 'Completed', 'Failed', 'Cancelled'];

/** @param {import('../api.js').InvocationDetail} inv */
const isFinished = (inv) => inv.status === 'Completed' || inv.status === 'Failed' || inv.status === 'Cancelled';

/**
 * One line of the connector's log; marked with its attempt once the invocation has had more than one.
 * @param {import('../api.js').LogLine} line
 * @param {boolean} byAttempt
 */
function logItem(line, byAttempt) {
  return h(
    'li',
    { class: `log ${line.level}` },
    h('span', { class: 'log-time', title: line.at }, formatTime(line.at)),
    byAttempt ? h('span', { class: 'log-attempt', title: `attempt ${line.attempt}` }, `#${line.attempt}`) : null,
    h('span', { class: 'log-level' }, line.level),
    h('span', { class: 'log-message' }, line.message),
  );
}

/**
 * The connector's log. A running invocation's lines are those written so far: the live refresh adds
 * new ones at the end (see `updateLogs`), so what the reader scrolled to or selected stays.
 * @param {import('../api.js').InvocationDetail} inv
 */
function logList(inv) {
  const byAttempt = inv.attempt > 1;
  if (inv.logs.length === 0) return h('p', { class: 'muted' }, isFinished(inv) ? 'No log lines.' : 'No log lines yet.');
  return h('ol', { class: byAttempt ? 'logs by-attempt' : 'logs' }, inv.logs.map((line) => logItem(line, byAttempt)));
}

/**
 * Shows the lines written since `before` was shown, at the end of its list; false when the list must be drawn again.
 * @param {HTMLElement} box
 * @param {import('../api.js').InvocationDetail} before
 * @param {import('../api.js').InvocationDetail} now
 */
function updateLogs(box, before, now) {
  const list = box.querySelector('ol.logs');
  if (now.logs.length === before.logs.length) return true;
  if (!list || now.logs.length < before.logs.length || (now.attempt > 1) !== (before.attempt > 1)) return false;
  const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.append(...now.logs.slice(before.logs.length).map((line) => logItem(line, now.attempt > 1)));
  // A reader at the end follows the new lines; one who scrolled up stays where they were.
  if (atEnd) list.scrollTop = list.scrollHeight;
  return true;
}

/** @param {import('../api.js').FileEntity[] | undefined} files */
function fileTable(files) {
  if (!files || files.length === 0) return h('p', { class: 'muted' }, 'No files.');
  return h(
    'table',
    { class: 'list files' },
    h('thead', {}, h('tr', {}, h('th', {}, 'File'), h('th', {}, 'Part'), h('th', {}, 'Type'), h('th', { class: 'num' }, 'Size'), h('th', {}, 'SHA-256'))),
    h(
      'tbody',
      {},
      files.map((f) =>
        h('tr', {}, h('td', { title: f.Id }, f.FileName), h('td', {}, f.PartName), h('td', {}, f.ContentType), h('td', { class: 'num' }, formatBytes(f.Size)), h('td', {}, h('code', { class: 'small', title: f.Sha256 }, `${f.Sha256.slice(0, 12)}…`))),
      ),
    ),
  );
}

/**
 * @param {string} title
 * @param {...import('../dom.js').Children} children
 */
const section = (title, ...children) => h('section', { class: 'detail-section' }, h('h3', {}, title), ...children);

/**
 * @param {import('../api.js').InvocationDetail} inv
 * @param {HTMLButtonElement | null} cancel shown while the invocation can still be cancelled
 * @param {ReturnType<typeof stepsPanel> | null} steps a durable invocation's steps
 */
function detailContent(inv, cancel, steps) {
  const { entity, outcome } = inv;
  const error = outcome && outcome.status !== 'Completed' ? outcome.error : inv.error;
  return [
    h('div', { class: 'pane-head' }, h('h2', {}, 'Invocation'), h('div', { class: 'row' }, isFinished(inv) ? null : cancel, statusBadge(inv.status))),
    copyField(inv.id, 'invocation id'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Integration'),
      h('dd', {}, h('code', {}, inv.integrationId), ` v${inv.integrationVersion} on ${inv.entityName}`),
      h('dt', {}, 'Mode'),
      h('dd', {}, `${inv.mode} · ${inv.endpoint} · attempt ${inv.attempt} · pool ${inv.pool}`),
      h('dt', {}, 'Reply type'),
      h('dd', {}, inv.responseContentType),
      h('dt', {}, 'Created'),
      h('dd', { title: inv.createdAt }, formatTime(inv.createdAt)),
      h('dt', {}, 'Ran'),
      h('dd', {}, inv.startedAt ? `${formatTime(inv.startedAt)} → ${formatTime(inv.finishedAt)}` : 'not started', inv.durationMs !== null ? ` (${formatDuration(inv.durationMs)})` : ''),
      inv.activeMs > 0 ? [h('dt', {}, 'Active'), h('dd', {}, `${formatDuration(inv.activeMs)} run by its attempts that suspended (time waiting does not count)`)] : null,
    ),
    inv.status === 'Waiting' && inv.waiting ? waitingNotice(inv.waiting) : null,
    inv.progress && !isFinished(inv)
      ? h('div', { class: 'progress' }, h('progress', { max: 100, value: inv.progress.percent }), h('span', {}, `${inv.progress.percent}% ${inv.progress.message ?? ''}`))
      : null,
    error ? notice('error', h('strong', {}, error.title), ' ', error.detail, h('div', { class: 'small muted' }, `code ${error.code}`)) : null,
    steps ? section(`Steps (${inv.steps})`, steps.element) : null,
    section(isFinished(inv) ? 'Connector logs' : 'Connector logs so far', h('div', { class: 'log-box' }, logList(inv))),
    section('ResponseBody', outcome?.status === 'Completed' ? codeBlock(formatData(outcome.responseBody) || '(empty)', { label: 'ResponseBody' }) : h('p', { class: 'muted' }, isFinished(inv) ? `None: the run ${inv.status === 'Cancelled' ? 'was cancelled' : 'failed'}.` : 'Not yet: the run has not finished.')),
    section('RequestParams', pairsTable(queryPairs(entity.RequestParams), 'No query parameters.')),
    section('RequestHeaders', pairsTable(queryPairs(entity.RequestHeaders), 'No headers.')),
    section('RequestBody', entity.RequestBody === null ? h('p', { class: 'muted' }, 'Empty body.') : codeBlock(formatData(entity.RequestBody), { label: 'RequestBody' })),
    inv.endpoint === 'GenericIntegrationFileTransfer' ? section('RequestFiles', fileTable(entity.RequestFiles)) : null,
  ];
}

/** @type {import('../main.js').View} */
export function invocationsView(root, { api, bot, item, go, toast }) {
  const integration = h('select', { name: 'integration', 'aria-label': 'Integration' }, h('option', { value: '' }, 'All integrations'));
  const status = h('select', { name: 'status', 'aria-label': 'Status' }, h('option', { value: '' }, 'All statuses'), STATUSES.map((s) => h('option', { value: s }, s)));
  const live = h('input', { type: 'checkbox', name: 'live', checked: true });
  const updated = h('span', { class: 'muted small' });
  const findId = h('input', { name: 'invocationId', placeholder: 'Invocation id', autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Invocation id' });
  const find = h('form', { class: 'find', role: 'search' }, findId, h('button', { type: 'submit' }, 'Find'));
  const newer = h('button', { type: 'button', class: 'small', disabled: true }, '← Newer');
  const older = h('button', { type: 'button', class: 'small', disabled: true }, 'Older →');
  const pageLabel = h('span', { class: 'muted small' });
  /** The `before` of each page down to the one shown (the newest page has none); its `nextBefore` leads further. */
  let pages = [/** @type {string | undefined} */ (undefined)];
  /** @type {string | null} */
  let nextBefore = null;
  const rows = h('tbody');
  const listBox = h('div', { class: 'table-scroll' }, h('p', { class: 'muted' }, 'Loading…'));
  const detail = h('div', { class: 'detail-pane' });
  let selected = item;
  /** @type {import('../api.js').InvocationDetail | null} */
  let shown = null;
  /** @type {ReturnType<typeof stepsPanel> | null} */
  let steps = null;

  fill(
    root,
    h(
      'div',
      { class: 'toolbar' },
      h('label', {}, 'Integration', integration),
      h('label', {}, 'Status', status),
      h('label', { class: 'check' }, live, 'Live'),
      find,
      h('span', { class: 'spacer' }),
      updated,
    ),
    h('div', { class: 'split invocations' }, h('div', { class: 'list-pane' }, listBox, h('div', { class: 'pager' }, newer, pageLabel, older)), detail),
  );

  async function loadIntegrations() {
    try {
      const list = await api.integrations(bot);
      integration.append(...list.map((i) => h('option', { value: i.integrationId }, i.integrationId)));
    } catch {
      // the list itself reports the failure
    }
  }

  const listRead = latestRead();

  async function loadList() {
    const isLatest = listRead();
    try {
      const page = await api.invocations(bot, { integrationId: integration.value, status: status.value, limit: PAGE_SIZE, before: pages[pages.length - 1] });
      // A live refresh or a slow answer outdated by a newer filter or page: showing it would mix them up.
      if (!isLatest()) return;
      const { invocations } = page;
      nextBefore = page.nextBefore;
      newer.disabled = pages.length === 1;
      older.disabled = nextBefore === null;
      fill(pageLabel, `Page ${pages.length}`);
      fill(updated, `${invocations.length} shown · updated ${formatTime(Date.now())}`);
      if (invocations.length === 0) {
        fill(listBox, emptyState('No invocations', h('p', {}, status.value || integration.value ? 'None match the filters.' : 'Call a webhook URL (see Webhooks) and it appears here.')));
        return;
      }
      fill(
        rows,
        invocations.map((inv) => {
          const row = h(
            'tr',
            { class: inv.id === selected ? 'selected' : '', tabindex: 0, 'data-id': inv.id },
            h('td', { class: 'nowrap', title: inv.createdAt }, formatTime(inv.createdAt)),
            h('td', {}, h('code', {}, inv.integrationId), inv.error ? h('div', { class: 'row-error', title: inv.error.detail }, inv.error.title) : null),
            h('td', {}, statusBadge(inv.status)),
            h('td', {}, inv.mode),
            h('td', { class: 'num' }, inv.attempt),
            h('td', { class: 'num nowrap' }, formatDuration(inv.durationMs)),
          );
          const open = () => go('invocations', inv.id);
          row.addEventListener('click', open);
          row.addEventListener('keydown', (event) => {
            if (event.key === 'Enter') open();
          });
          return row;
        }),
      );
      if (!listBox.contains(rows)) {
        fill(
          listBox,
          h(
            'table',
            { class: 'list clickable' },
            h('thead', {}, h('tr', {}, h('th', {}, 'Created'), h('th', {}, 'Integration'), h('th', {}, 'Status'), h('th', {}, 'Mode'), h('th', { class: 'num' }, 'Attempt'), h('th', { class: 'num' }, 'Duration'))),
            rows,
          ),
        );
      }
    } catch (error) {
      if (isLatest()) fill(listBox, errorNotice(error));
    }
  }

  const detailRead = latestRead();
  async function loadDetail() {
    const isLatest = detailRead();
    if (!selected) {
      shown = null;
      fill(detail, emptyState('Pick an invocation', h('p', {}, 'to see its entity, connector logs and error.')));
      return;
    }
    try {
      const inv = await api.invocation(bot, selected);
      // Another invocation was picked, or a live refresh read this one again, meanwhile.
      if (!isLatest()) return;
      // Re-render only on change, so reading or selecting text is not disturbed by the live refresh; new
      // log lines of a running invocation are added to its list, new steps to its steps' page.
      const logBox = detail.querySelector('.log-box');
      const kept =
        shown !== null &&
        shown.id === inv.id &&
        shown.status === inv.status &&
        shown.progress?.percent === inv.progress?.percent &&
        JSON.stringify(shown.waiting) === JSON.stringify(inv.waiting) &&
        (shown.steps > 0) === (inv.steps > 0) &&
        logBox instanceof HTMLElement &&
        updateLogs(logBox, shown, inv);
      if (!kept) {
        steps = inv.steps > 0 ? stepsPanel(api, bot, inv.id) : null;
        fill(detail, detailContent(inv, cancelButton(inv), steps));
      } else if (steps && shown?.steps !== inv.steps) {
        const heading = steps.element.closest('.detail-section')?.querySelector('h3');
        if (heading) fill(heading, `Steps (${inv.steps})`);
        void steps.refresh();
      }
      shown = inv;
    } catch (error) {
      if (!isLatest()) return;
      shown = null;
      fill(detail, errorNotice(error));
    }
  }

  /** @param {import('../api.js').InvocationDetail} inv */
  function cancelButton(inv) {
    return confirmButton({
      label: 'Cancel',
      armedLabel: 'Click again to cancel',
      name: 'Cancel invocation',
      action: async () => {
        try {
          await api.cancelInvocation(bot, inv.id);
          toast(`Invocation ${inv.id} cancelled`);
        } catch (error) {
          toast(error instanceof Error ? error.message : String(error), 'error');
        }
        await Promise.all([loadDetail(), loadList()]);
      },
    });
  }

  function selectRow() {
    for (const row of rows.querySelectorAll('tr')) row.classList.toggle('selected', row.dataset.id === selected);
  }

  const firstPage = () => {
    pages = [undefined];
    void loadList();
  };
  for (const control of [integration, status]) control.addEventListener('change', firstPage);
  older.addEventListener('click', () => {
    if (nextBefore === null) return;
    pages = [...pages, nextBefore];
    void loadList();
  });
  newer.addEventListener('click', () => {
    pages = pages.slice(0, -1);
    if (pages.length === 0) pages = [undefined];
    void loadList();
  });
  find.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = findId.value.trim();
    if (id) go('invocations', id);
  });
  const timer = setInterval(() => {
    if (!live.checked || document.hidden) return;
    void loadList();
    if (shown && !isFinished(shown)) void loadDetail();
  }, REFRESH_MS);

  void loadIntegrations();
  void loadList();
  void loadDetail();
  return {
    dispose: () => clearInterval(timer),
    show(next) {
      selected = next;
      selectRow();
      void loadDetail();
    },
  };
}
