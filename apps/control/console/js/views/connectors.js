// Connectors (integrations): the deployed code and its versions, comparing and rolling back versions,
// replaying calls against a draft and publishing it, deploying a new version, deleting a connector.
import { ApiError } from '../api.js';
import { fill, h } from '../dom.js';
import { formatTime } from '../format.js';
import { deleteUnlessInUse } from '../deletion.js';
import { latestRead } from '../latest.js';
import { codeBlock, confirmButton, emptyState, errorNotice, notice } from '../widgets.js';
import { draftSection } from './draft-replay.js';
import { versionDiffView } from './version-diff.js';

const STARTER = `const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
Context.Log("received", entity.RequestBody);
entity.ResponseBody = { Status: "Accepted", Message: "received" };
Context.SetResponseEntity(entity);
`;

/**
 * The character offset of a 1-based line and column in `text`.
 * @param {string} text
 * @param {number} line
 * @param {number} column
 */
function offsetOf(text, line, column) {
  const lines = text.split('\n');
  let offset = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length - 1); i++) offset += lines[i].length + 1;
  const current = lines[Math.min(line, lines.length) - 1] ?? '';
  return offset + Math.min(Math.max(0, column - 1), current.length);
}

/**
 * @param {HTMLTextAreaElement} area
 */
function caretPosition(area) {
  const before = area.value.slice(0, area.selectionStart).split('\n');
  return `Line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/** @param {string} text */
const hostList = (text) => text.split(/[\s,]+/).filter(Boolean);

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
    if (selected === '+new') return renderEditor(null);
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
          h('button', { type: 'button', class: 'primary', onclick: () => renderEditor(integration) }, 'Deploy new version'),
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
      integration.versions.length > 1 ? compareSection(integration, latest) : null,
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
        toast(summary);
        integrations = await api.integrations(bot);
        go('connectors');
      },
    });
  }

  /**
   * Two versions chosen side by side: the settings that differ and the code.
   * @param {import('../api.js').IntegrationDetail} integration
   * @param {number} latest
   */
  function compareSection(integration, latest) {
    const options = (/** @type {number} */ chosen) => integration.versions.map((v) => h('option', { value: v.version, selected: v.version === chosen }, `v${v.version}`));
    const to = integration.version;
    const from = integration.versions.find((v) => v.version < to)?.version ?? latest;
    const fromSelect = h('select', { 'aria-label': 'Compare from version' }, options(from));
    const toSelect = h('select', { 'aria-label': 'Compare to version' }, options(to));
    const result = h('div', { class: 'diff-result' });
    const compare = async () => {
      fill(result, h('p', { class: 'muted' }, 'Comparing…'));
      try {
        fill(result, versionDiffView(await api.diff(bot, integration.integrationId, Number(fromSelect.value), Number(toSelect.value))));
      } catch (error) {
        fill(result, errorNotice(error));
      }
    };
    return h(
      'section',
      { class: 'compare' },
      h('h3', {}, 'Compare versions'),
      h('div', { class: 'row' }, fromSelect, h('span', { class: 'muted' }, 'with'), toSelect, h('button', { type: 'button', class: 'ghost', onclick: compare }, 'Compare')),
      result,
    );
  }

  /**
   * The code of a version: as written for a plain script; for a bundle (gi connector deploy of a
   * project), the files its author wrote, one at a time, and the bundle the sandbox runs on request.
   * @param {import('../api.js').IntegrationDetail} integration
   */
  function codeSection(integration) {
    const of = `${integration.integrationId} version ${integration.version}`;
    const sources = integration.sources ?? [];
    if (sources.length === 0) return [h('h3', {}, 'Code'), codeBlock(integration.code, { lineNumbers: true, label: `Code of ${of}` })];
    const shown = h('div', { class: 'source-file' });
    const show = (/** @type {number} */ index) => {
      for (const [i, tab] of tabs.entries()) tab.setAttribute('aria-pressed', String(i === index));
      fill(shown, codeBlock(sources[index].content, { lineNumbers: true, label: `${sources[index].path} of ${of}` }));
    };
    const tabs = sources.map((source, i) => h('button', { type: 'button', class: 'version source-tab', 'aria-pressed': 'false', onclick: () => show(i) }, source.path));
    show(0);
    return [
      h('h3', {}, 'Sources'),
      h('p', { class: 'muted small' }, 'The files this version was bundled from by gi connector deploy.'),
      h('div', { class: 'versions', role: 'group', 'aria-label': 'Source files' }, tabs),
      shown,
      h('details', { class: 'bundle' }, h('summary', {}, 'Bundle (the code that runs)'), codeBlock(integration.code, { lineNumbers: true, label: `Bundle of ${of}` })),
    ];
  }

  /**
   * The deploy form: a new version of `base`, or a new connector when `base` is null.
   * @param {import('../api.js').IntegrationDetail | null} base
   */
  async function renderEditor(base) {
    /** @type {import('../api.js').Entity[]} */
    let entities = [];
    try {
      entities = await api.entities(bot);
    } catch (error) {
      fill(detail, errorNotice(error));
      return;
    }
    const id = h('input', { name: 'integrationId', required: true, placeholder: 'ack', value: base?.integrationId ?? '', readonly: base !== null, 'aria-label': 'Integration id' });
    const entity = h(
      'select',
      { name: 'entityName', required: true, 'aria-label': 'Entity' },
      entities.map((e) => h('option', { value: e.name, selected: e.name === base?.entityName }, e.name)),
    );
    const pool = h('input', { name: 'pool', value: base?.pool ?? 'default', required: true, 'aria-label': 'Pool' });
    const timeout = h('input', { name: 'timeoutSeconds', type: 'number', min: 1, max: 86400, value: base?.timeoutSeconds ?? 60, required: true, 'aria-label': 'Timeout in seconds' });
    const hosts = h('input', { name: 'allowedHosts', value: base?.allowedHosts.join(', ') ?? '', placeholder: 'api.example.com, *.example.org', 'aria-label': 'Allowed hosts' });
    const code = h('textarea', { name: 'code', class: 'code-editor', rows: 18, spellcheck: 'false', autocomplete: 'off', wrap: 'off', 'aria-label': 'Connector code' });
    code.value = base?.code ?? STARTER;
    const caret = h('span', { class: 'muted small' }, 'Line 1, column 1');
    const bundled = base?.sources?.length
      ? notice('info', 'This version was bundled from a project by gi connector deploy: a version deployed here runs the bundle below as plain code and keeps no sources. Change the project and deploy it with the CLI instead.')
      : null;
    const message = h('div', { class: 'deploy-message' });
    const submit = h('button', { type: 'submit', class: 'primary' }, base ? `Deploy version ${(base.versions[0]?.version ?? base.version) + 1}` : 'Deploy');

    const updateCaret = () => fill(caret, caretPosition(code));
    for (const type of ['keyup', 'click', 'select', 'input']) code.addEventListener(type, updateCaret);
    code.addEventListener('keydown', (event) => {
      if (event.key !== 'Tab' || event.shiftKey || event.ctrlKey || event.altKey || event.metaKey) return;
      event.preventDefault();
      code.setRangeText('  ', code.selectionStart, code.selectionEnd, 'end');
      updateCaret();
    });

    const form = h(
      'form',
      { class: 'deploy-form' },
      h(
        'div',
        { class: 'form-grid' },
        h('label', {}, 'Integration id', id),
        h('label', {}, 'Entity', entity),
        h('label', {}, 'Pool', pool),
        h('label', {}, 'Timeout (s)', timeout),
        h('label', { class: 'span-2' }, 'Allowed hosts for Context.Http', hosts),
      ),
      bundled,
      h('label', { class: 'code-label' }, h('span', {}, 'Code ', h('span', { class: 'muted small' }, '(the body of an async function; Tab indents)')), code),
      h('div', { class: 'editor-foot' }, caret),
      message,
      h('div', { class: 'row' }, submit, h('button', { type: 'button', class: 'ghost', onclick: () => (base ? void showSelected() : go('connectors')) }, 'Cancel')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      fill(message);
      const integrationId = id.value.trim();
      try {
        const deployed = await api.deploy(bot, integrationId, {
          entityName: entity.value,
          code: code.value,
          pool: pool.value.trim(),
          timeoutSeconds: Number(timeout.value),
          allowedHosts: hostList(hosts.value),
          // Settings this form does not show (Settings tab) carry over to the new version.
          limits: base?.limits,
          callbackUrl: base?.callbackUrl ?? null,
          inboundAuth: base?.inboundAuth,
        });
        toast(`Deployed ${deployed.integrationId} version ${deployed.version}`);
        viewedVersion = undefined;
        integrations = await api.integrations(bot);
        if (selected === integrationId) await showSelected();
        else go('connectors', integrationId);
      } catch (error) {
        const problem = error instanceof ApiError ? error.problem : null;
        if (problem && typeof problem.line === 'number' && typeof problem.column === 'number') {
          fill(
            message,
            notice('error', h('strong', {}, `Does not compile — line ${problem.line}, column ${problem.column}`), h('div', { class: 'mono' }, problem.message ?? problem.detail)),
          );
          const at = offsetOf(code.value, problem.line, problem.column);
          code.focus();
          code.setSelectionRange(at, Math.max(at + 1, code.value.indexOf('\n', at) === -1 ? code.value.length : code.value.indexOf('\n', at)));
          updateCaret();
          message.scrollIntoView({ block: 'nearest' });
        } else {
          fill(message, errorNotice(error));
        }
      } finally {
        submit.disabled = false;
      }
    });

    fill(
      detail,
      h('div', { class: 'pane-head' }, h('h2', {}, base ? `New version of ${base.integrationId}` : 'New connector')),
      entities.length === 0 ? notice('warning', 'Define an entity first (Overview tab): a connector runs on one.') : null,
      form,
    );
    (base ? code : id).focus();
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
