// The deploy form of the Connectors view: a new connector, or a new version of one.
import { ApiError } from '../api.js';
import { fill, h } from '../dom.js';
import { errorNotice, notice } from '../widgets.js';

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

/**
 * The deploy form, drawn in `pane`: a new version of `base`, or a new connector when `base` is null.
 * `deployed` is told the integration deployed; `cancel` leaves the form.
 * @param {HTMLElement} pane
 * @param {{ api: ReturnType<typeof import('../api.js').createApi>, bot: string, base: import('../api.js').IntegrationDetail | null, toast: (text: string) => void, deployed: (integrationId: string) => Promise<void>, cancel: () => void }} parts
 */
export async function renderEditor(pane, { api, bot, base, toast, deployed: onDeployed, cancel }) {
  /** @type {import('../api.js').Entity[]} */
  let entities = [];
  try {
    entities = await api.entities(bot);
  } catch (error) {
    fill(pane, errorNotice(error));
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
    h('div', { class: 'row' }, submit, h('button', { type: 'button', class: 'ghost', onclick: cancel }, 'Cancel')),
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
      await onDeployed(integrationId);
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
    pane,
    h('div', { class: 'pane-head' }, h('h2', {}, base ? `New version of ${base.integrationId}` : 'New connector')),
    entities.length === 0 ? notice('warning', 'Define an entity first (Overview tab): a connector runs on one.') : null,
    form,
  );
  (base ? code : id).focus();
}
