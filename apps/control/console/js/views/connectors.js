// Connectors (integrations): the deployed code and its versions, comparing and rolling back versions,
// replaying calls against a draft and publishing it, deploying a new version, deleting a connector.
import { fill, h } from '../dom.js';
import { formatTime } from '../format.js';
import { deleteUnlessInUse } from '../deletion.js';
import { latestRead } from '../latest.js';
import { confirmButton, emptyState, errorNotice, notice } from '../widgets.js';
import { draftSection } from './draft-replay.js';
import { codeSection } from './connector-code.js';
import { renderEditor } from './connector-editor.js';
import { compareSection } from './version-compare.js';

/** @type {import('../main.js').View} */
export function connectorsView(root, { api, bot, item, go, toast }) {
  const list = h('div', { class: 'list-pane' });
  const detail = h('div', { class: 'detail-pane' });
  fill(root, h('div', { class: 'split connectors' }, list, detail));

  /** @type {import('../api.js').Integration[]} */
  let integrations = [];
  let selected = item;
  /** @type {number | undefined} */
  let viewedVersion;

  function renderList() {
    fill(
      list,
      h('div', { class: 'pane-head' }, h('h2', {}, 'Connectors'), h('button', { type: 'button', class: 'primary small', title: 'Deploy a new connector', onclick: () => go('connectors', '+new') }, '+ New')),
      integrations.length === 0
        ? h('p', { class: 'muted small' }, 'None deployed yet.')
        : h(
            'ul',
            { class: 'pick-list' },
            integrations.map((i) =>
              h(
                'li',
                {},
                h(
                  'a',
                  { href: `#/bots/${encodeURIComponent(bot)}/connectors/${encodeURIComponent(i.integrationId)}`, class: i.integrationId === selected ? 'active' : '' },
                  h('span', { class: 'pick-title' }, i.integrationId),
                  h('span', { class: 'pick-meta' }, `${i.entityName} · v${i.version} · ${formatTime(i.deployedAt)}`),
                ),
              ),
            ),
          ),
    );
  }

  const detailRead = latestRead();

  async function showSelected() {
    const isLatest = detailRead();
    renderList();
    if (selected === '+new') return edit(null);
    if (!selected) {
      fill(
        detail,
        integrations.length === 0
          ? emptyState('No connector deployed yet', h('p', {}, 'A connector is the code that runs for each webhook call.'), h('button', { type: 'button', class: 'primary', onclick: () => go('connectors', '+new') }, 'Deploy the first one'))
          : emptyState('Pick a connector on the left', h('p', {}, 'to see its code and versions, or deploy a new version.')),
      );
      return;
    }
    fill(detail, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const [integration, draft] = await Promise.all([api.integration(bot, selected, viewedVersion), api.draft(bot, selected)]);
      if (isLatest()) renderDetail(integration, draft);
    } catch (error) {
      if (isLatest()) fill(detail, errorNotice(error));
    }
  }

  /**
   * @param {import('../api.js').IntegrationDetail} integration
   * @param {import('../api.js').Draft | null} draft
   */
  function renderDetail(integration, draft) {
    const latest = integration.versions[0]?.version ?? integration.version;
    const actionMessage = h('div', { class: 'action-message' });
    fill(
      detail,
      h(
        'div',
        { class: 'pane-head' },
        h('h2', {}, integration.integrationId, ' ', h('span', { class: 'badge' }, `v${integration.version}`)),
        h(
          'div',
          { class: 'row' },
          h('button', { type: 'button', class: 'primary', onclick: () => edit(integration) }, 'Deploy new version'),
          confirmButton({
            label: 'Delete connector',
            armedLabel: 'Click again to delete',
            name: 'Delete connector',
            kind: 'danger',
            action: () => deleteConnector(integration.integrationId, actionMessage),
          }),
        ),
      ),
      actionMessage,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Entity'),
        h('dd', {}, integration.entityName),
        h('dt', {}, 'Pool'),
        h('dd', {}, integration.pool),
        h('dt', {}, 'Timeout'),
        h('dd', {}, `${integration.timeoutSeconds} s`),
        h('dt', {}, 'Allowed hosts'),
        h('dd', {}, integration.allowedHosts.length ? integration.allowedHosts.join(', ') : h('span', { class: 'muted' }, 'none (no outbound HTTP)')),
        h('dt', {}, 'Deployed'),
        h('dd', {}, formatTime(integration.deployedAt)),
      ),
      h('h3', {}, 'Versions'),
      h(
        'div',
        { class: 'versions', role: 'list' },
        integration.versions.map((v) =>
          h(
            'button',
            {
              type: 'button',
              role: 'listitem',
              class: v.version === integration.version ? 'version active' : 'version',
              title: `Deployed ${v.deployedAt}`,
              'aria-label': `Version ${v.version}`,
              onclick: () => {
                viewedVersion = v.version === latest ? undefined : v.version;
                void showSelected();
              },
            },
            `v${v.version}`,
            h('span', { class: 'version-time' }, formatTime(v.deployedAt)),
          ),
        ),
      ),
      integration.version !== latest
        ? notice(
            'info',
            h('span', {}, `Showing version ${integration.version}; calls run version ${latest}. `),
            confirmButton({
              label: 'Roll back to this version',
              armedLabel: `Click again: deploy v${integration.version} as v${latest + 1}`,
              name: 'Roll back to this version',
              kind: 'danger small rollback',
              action: () => rollBack(integration, actionMessage),
            }),
          )
        : null,
      draft ? draftSection({ api, bot, draft, latest, toast, onPublished: reloadAfterPublish }) : null,
      integration.versions.length > 1 ? compareSection({ api, bot, integration, latest }) : null,
      ...codeSection(integration),
    );
  }

  /** The draft became the live version: show it. */
  async function reloadAfterPublish() {
    viewedVersion = undefined;
    integrations = await api.integrations(bot);
    await showSelected();
  }

  /**
   * Deploys the viewed version's code and settings again as a new version (history is kept).
   * @param {import('../api.js').IntegrationDetail} integration
   * @param {HTMLElement} message
   */
  async function rollBack(integration, message) {
    try {
      const deployed = await api.rollback(bot, integration.integrationId, integration.version);
      toast(`Rolled back to version ${deployed.rolledBackTo}: now version ${deployed.version}`);
      viewedVersion = undefined;
      integrations = await api.integrations(bot);
      await showSelected();
    } catch (error) {
      fill(message, errorNotice(error));
    }
  }

  /**
   * Deletes the connector (refused while calls of it are in flight, unless the operator insists).
   * @param {string} integrationId
   * @param {HTMLElement} message
   */
  function deleteConnector(integrationId, message) {
    return deleteUnlessInUse({
      what: integrationId,
      message,
      remove: (force) => api.deleteIntegration(bot, integrationId, force),
      done: async (summary) => {
        // The list is read and drawn again before the notice, so the notice never shows beside a stale list.
        integrations = await api.integrations(bot);
        selected = undefined;
        renderList();
        go('connectors');
        toast(summary);
      },
    });
  }

  /**
   * The deploy form for a new version of `base`, or a new connector; once deployed, its detail.
   * @param {import('../api.js').IntegrationDetail | null} base
   */
  function edit(base) {
    return renderEditor(detail, {
      api,
      bot,
      base,
      toast,
      cancel: () => (base ? void showSelected() : go('connectors')),
      deployed: async (integrationId) => {
        viewedVersion = undefined;
        integrations = await api.integrations(bot);
        if (selected === integrationId) await showSelected();
        else go('connectors', integrationId);
      },
    });
  }

  async function load() {
    try {
      integrations = await api.integrations(bot);
    } catch (error) {
      fill(list, errorNotice(error));
      return;
    }
    await showSelected();
  }

  void load();
  return {
    show(next) {
      selected = next;
      viewedVersion = undefined;
      void showSelected();
    },
  };
}
