// A bot at a glance: the last hour of invocations (per minute, per integration) and its entities.
import { fill, h } from '../dom.js';
import { formatDuration, formatTime } from '../format.js';
import { latestRead } from '../latest.js';
import { card, confirmButton, emptyState, errorNotice } from '../widgets.js';
import { activityChart, sparkline } from './activity-chart.js';

const WEBHOOK_FIELDS = new Set(['RequestParams', 'RequestBody', 'RequestHeaders', 'ResponseBody', 'RequestFiles']);
const REFRESH_MS = 15_000;

/**
 * @param {string} label
 * @param {string | number} value
 * @param {string} [tone]
 */
const figure = (label, value, tone = '') => h('div', { class: `figure ${tone}` }, h('div', { class: 'figure-value' }, value), h('div', { class: 'figure-label' }, label));

/** @param {import('../api.js').Activity} activity */
function activityContent(activity) {
  const { total } = activity;
  const from = Date.parse(activity.from);
  const failedShare = total.count ? ` (${Math.round((total.failed / total.count) * 100)}%)` : '';
  return [
    h(
      'div',
      { class: 'figures' },
      figure('invocations', total.count),
      figure('failed', `${total.failed}${failedShare}`, total.failed ? 'bad' : ''),
      figure('p50 run time', formatDuration(total.p50Ms)),
      figure('p99 run time', formatDuration(total.p99Ms)),
    ),
    activityChart(total, from, `Invocations per minute over the last ${activity.minutes} minutes`),
    h('div', { class: 'legend' }, h('span', { class: 'key ok' }), 'completed, queued or running', h('span', { class: 'key failed' }), 'failed'),
    activity.truncated ? h('p', { class: 'muted small' }, 'More invocations than the chart reads: only the newest are counted.') : null,
    activity.integrations.length === 0
      ? h('p', { class: 'muted' }, 'No invocations in the last hour.')
      : h(
          'table',
          { class: 'list integrations-activity' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Integration'), h('th', { class: 'num' }, 'Calls'), h('th', { class: 'num' }, 'Failed'), h('th', { class: 'num' }, 'p50'), h('th', { class: 'num' }, 'p99'), h('th', {}, 'Per minute'))),
          h(
            'tbody',
            {},
            activity.integrations.map((i) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, i.integrationId)),
                h('td', { class: 'num' }, i.count),
                h('td', { class: i.failed ? 'num bad' : 'num' }, i.failed),
                h('td', { class: 'num' }, formatDuration(i.p50Ms)),
                h('td', { class: 'num' }, formatDuration(i.p99Ms)),
                h('td', {}, sparkline(i.perMinute, `${i.integrationId}: invocations per minute`)),
              ),
            ),
          ),
        ),
  ];
}

/**
 * @param {import('../api.js').Entity[]} entities
 * @param {(name: string) => Promise<void>} remove
 */
function entitiesTable(entities, remove) {
  if (entities.length === 0) return emptyState('No entities yet', h('p', {}, 'Define the entity your webhook data is stored in below.'));
  return h(
    'table',
    { class: 'list' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Entity'), h('th', {}, 'Fields'), h('th', {}, 'Updated'), h('th', {}, h('span', { class: 'offscreen' }, 'Actions')))),
    h(
      'tbody',
      {},
      entities.map((e) =>
        h(
          'tr',
          {},
          h('td', {}, h('strong', {}, e.name)),
          h('td', {}, h('div', { class: 'chips' }, e.fields.map((f) => h('span', { class: WEBHOOK_FIELDS.has(f) ? 'chip muted' : 'chip' }, f)))),
          h('td', { class: 'nowrap' }, formatTime(e.updatedAt)),
          h('td', {}, confirmButton({ label: 'Delete', armedLabel: 'Click again to delete', name: `Delete entity ${e.name}`, action: () => remove(e.name) })),
        ),
      ),
    ),
  );
}

/** @type {import('../main.js').View} */
export function overviewView(root, { api, bot, toast, botsChanged }) {
  const activityBox = h('div', { class: 'activity' }, h('p', { class: 'muted' }, 'Loading…'));
  const updated = h('span', { class: 'muted small' });
  const entitiesBox = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));

  const name = h('input', { name: 'entity', required: true, placeholder: 'Order', 'aria-label': 'Entity name' });
  const extra = h('input', { name: 'fields', placeholder: 'Customer, Region (optional)', 'aria-label': 'Extra fields' });
  const entityMessage = h('div');
  const deleteMessage = h('div');
  const entityForm = h(
    'form',
    { class: 'inline-form' },
    h('label', {}, 'Entity', name),
    h('label', { class: 'grow' }, 'Extra fields', extra),
    h('button', { type: 'submit', class: 'primary' }, 'Define entity'),
  );
  entityForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const fields = extra.value.split(/[\s,]+/).filter(Boolean);
    try {
      const entity = await api.defineEntity(bot, name.value.trim(), fields);
      toast(`Entity ${entity.name} saved`);
      fill(entityMessage);
      entityForm.reset();
      await loadEntities();
      botsChanged();
    } catch (error) {
      fill(entityMessage, errorNotice(error));
    }
  });

  fill(
    root,
    h(
      'div',
      { class: 'stack' },
      card('Activity — last hour', updated, activityBox),
      card(
        'Entities',
        null,
        h('p', { class: 'muted small' }, 'Every entity has the five webhook fields (shown grey); an integration stores each call in one.'),
        entitiesBox,
        deleteMessage,
        h('h3', {}, 'Define or update an entity'),
        entityForm,
        entityMessage,
      ),
    ),
  );

  const activityRead = latestRead();
  async function loadActivity() {
    const isLatest = activityRead();
    try {
      const activity = await api.activity(bot, 60);
      if (!isLatest()) return;
      fill(activityBox, activityContent(activity));
      fill(updated, `updated ${formatTime(Date.now())}`);
    } catch (error) {
      if (isLatest()) fill(activityBox, errorNotice(error));
    }
  }
  /**
   * Refused (409, naming them) while an integration stores its calls in the entity.
   * @param {string} entityName
   */
  async function deleteEntity(entityName) {
    try {
      await api.deleteEntity(bot, entityName);
      toast(`Entity ${entityName} deleted`);
      fill(deleteMessage);
      await loadEntities();
      botsChanged();
    } catch (error) {
      fill(deleteMessage, errorNotice(error));
    }
  }
  async function loadEntities() {
    try {
      fill(entitiesBox, entitiesTable(await api.entities(bot), deleteEntity));
    } catch (error) {
      fill(entitiesBox, errorNotice(error));
    }
  }

  void loadActivity();
  void loadEntities();
  const timer = setInterval(() => {
    if (!document.hidden) void loadActivity();
  }, REFRESH_MS);
  return { dispose: () => clearInterval(timer) };
}
