// Small pieces every view uses: copy buttons, badges, notices, tables, code blocks.
import { ApiError } from './api.js';
import { h } from './dom.js';

/** @typedef {import('./dom.js').Children} Children */

/**
 * Puts text on the clipboard; outside a secure context (plain http on another host) through a
 * temporary selection instead.
 * @param {string} text
 */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // permission refused: fall back to a selection
    }
  }
  const area = h('textarea', { class: 'offscreen', readonly: true, 'aria-hidden': 'true' });
  area.value = text;
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

/**
 * A button that copies `text` and says so for a moment.
 * @param {string} text
 * @param {string} [label] what is copied, for screen readers and tests
 */
export function copyButton(text, label = 'value') {
  const button = h('button', { type: 'button', class: 'copy', title: `Copy ${label}`, 'aria-label': `Copy ${label}` }, 'Copy');
  button.addEventListener('click', async () => {
    await copyText(text);
    button.textContent = 'Copied';
    button.classList.add('done');
    setTimeout(() => {
      button.textContent = 'Copy';
      button.classList.remove('done');
    }, 1500);
  });
  return button;
}

/**
 * A value in a monospace field with a copy button.
 * @param {string} value
 * @param {string} label
 */
export function copyField(value, label) {
  return h('div', { class: 'copy-field' }, h('code', { class: 'copy-value', title: value }, value), copyButton(value, label));
}

/**
 * A button for an action that cannot be undone: the first click arms it (its text says what a second
 * click does), the second within a few seconds acts, so a stray click changes nothing.
 * @param {{ label: string, armedLabel: string, name: string, action: () => Promise<void>, kind?: string }} options `name`: its accessible name
 */
export function confirmButton({ label, armedLabel, name, action, kind = 'danger small' }) {
  const button = h('button', { type: 'button', class: kind, 'aria-label': name }, label);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let armed;
  const disarm = () => {
    clearTimeout(armed);
    armed = undefined;
    button.textContent = label;
    button.classList.remove('armed');
  };
  button.addEventListener('click', async () => {
    if (!armed) {
      button.textContent = armedLabel;
      button.classList.add('armed');
      armed = setTimeout(disarm, 4000);
      return;
    }
    disarm();
    button.disabled = true;
    try {
      await action();
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** @param {string} status */
export function statusBadge(status) {
  return h('span', { class: `badge status-${status.toLowerCase()}` }, status);
}

/**
 * @param {'error' | 'info' | 'success' | 'warning'} kind
 * @param {...Children} children
 */
export function notice(kind, ...children) {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...children);
}

/**
 * What went wrong with a call, from its problem details.
 * @param {unknown} error
 */
export function errorNotice(error) {
  if (error instanceof ApiError) {
    const { problem } = error;
    return notice(
      'error',
      h('strong', {}, problem.title || `HTTP ${error.status}`),
      ' ',
      problem.detail,
      problem.errors?.length ? h('ul', {}, problem.errors.map((e) => h('li', {}, h('code', {}, e.field), ': ', e.message))) : null,
    );
  }
  return notice('error', h('strong', {}, 'The service did not answer. '), error instanceof Error ? error.message : String(error));
}

/**
 * @param {string} title
 * @param {...Children} children
 */
export function emptyState(title, ...children) {
  return h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, title), ...children);
}

/**
 * A two-column table of names and values; `emptyText` when there are none.
 * @param {[string, Children][]} rows
 * @param {string} emptyText
 */
export function pairsTable(rows, emptyText = 'none') {
  if (rows.length === 0) return h('p', { class: 'muted' }, emptyText);
  return h('table', { class: 'pairs' }, h('tbody', {}, rows.map(([name, value]) => h('tr', {}, h('th', {}, name), h('td', {}, value)))));
}

/**
 * Code or data with line numbers.
 * @param {string} text
 * @param {{ lineNumbers?: boolean, label?: string }} [options]
 */
export function codeBlock(text, { lineNumbers = false, label } = {}) {
  const lines = text.split('\n');
  if (!lineNumbers) return h('pre', { class: 'code', 'aria-label': label }, text);
  return h(
    'pre',
    { class: 'code numbered', 'aria-label': label },
    // The numbers are drawn by the style sheet (a counter), so copying the code leaves them out.
    lines.map((line) => h('span', { class: 'line' }, line, '\n')),
  );
}

/**
 * A card with a heading.
 * @param {string} title
 * @param {Children} actions
 * @param {...Children} children
 */
export function card(title, actions, ...children) {
  return h('section', { class: 'card' }, h('header', { class: 'card-head' }, h('h2', {}, title), h('div', { class: 'card-actions' }, actions)), ...children);
}

/** Brief messages at the corner of the screen. */
export function toaster() {
  const area = h('div', { class: 'toasts', 'aria-live': 'polite' });
  return {
    element: area,
    /**
     * @param {string} message
     * @param {'success' | 'error' | 'info'} [kind]
     */
    show(message, kind = 'success') {
      const toast = h('div', { class: `toast ${kind}` }, message);
      area.append(toast);
      setTimeout(() => toast.remove(), 3500);
    },
  };
}
