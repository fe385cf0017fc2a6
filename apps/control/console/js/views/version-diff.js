// Two versions of a connector side by side: the settings that differ, and the code (or each source
// file) as two columns, removed lines on the left facing the lines that replaced them on the right.
import { h } from '../dom.js';

/**
 * @typedef {{ kind: 'same' | 'changed' | 'hunk', left: string | null, right: string | null, leftNo: number | null, rightNo: number | null }} Row
 */

/**
 * The rows of a unified diff (its hunks) in two columns: kept lines on both sides, each
 * run of removed lines beside the run of added lines that follows it.
 * @param {string} unified
 * @returns {Row[]}
 */
export function sideBySideRows(unified) {
  /** @type {Row[]} */
  const rows = [];
  /** @type {string[]} */
  let removed = [];
  /** @type {string[]} */
  let added = [];
  let leftNo = 0;
  let rightNo = 0;
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      const left = i < removed.length ? removed[i] : null;
      const right = i < added.length ? added[i] : null;
      rows.push({ kind: 'changed', left, right, leftNo: left === null ? null : ++leftNo, rightNo: right === null ? null : ++rightNo });
    }
    removed = [];
    added = [];
  };
  for (const line of unified.split('\n')) {
    if (line.startsWith('--- ') || line.startsWith('+++ ') || line === '') continue;
    const hunk = /^@@ -(\d+),\d+ \+(\d+),\d+ @@/.exec(line);
    if (hunk) {
      flush();
      leftNo = Math.max(0, Number(hunk[1]) - 1);
      rightNo = Math.max(0, Number(hunk[2]) - 1);
      rows.push({ kind: 'hunk', left: line, right: null, leftNo: null, rightNo: null });
    } else if (line[0] === '-') removed.push(line.slice(1));
    else if (line[0] === '+') added.push(line.slice(1));
    else {
      flush();
      rows.push({ kind: 'same', left: line.slice(1), right: line.slice(1), leftNo: ++leftNo, rightNo: ++rightNo });
    }
  }
  flush();
  return rows;
}

/**
 * A unified diff as two columns headed `before` and `after`.
 * @param {string} unified
 * @param {string} label
 * @param {string} before
 * @param {string} after
 */
export function sideBySide(unified, label, before, after) {
  const cell = (/** @type {string | null} */ text, /** @type {number | null} */ no, /** @type {string} */ side) => [
    h('td', { class: 'diff-no' }, no === null ? '' : String(no)),
    h('td', { class: `diff-text ${text === null ? 'diff-empty' : side}` }, text ?? ''),
  ];
  return h(
    'div',
    { class: 'diff-scroll' },
    h(
      'table',
      { class: 'diff', 'aria-label': label },
      h('colgroup', {}, h('col', { class: 'diff-no-col' }), h('col', {}), h('col', { class: 'diff-no-col' }), h('col', {})),
      h('thead', {}, h('tr', {}, h('th', { colspan: 2 }, before), h('th', { colspan: 2 }, after))),
      h(
        'tbody',
        {},
        sideBySideRows(unified).map((row) =>
          row.kind === 'hunk'
            ? h('tr', { class: 'diff-hunk' }, h('td', { colspan: 4 }, row.left))
            : h('tr', { class: row.kind === 'changed' ? 'diff-changed' : '' }, cell(row.left, row.leftNo, 'diff-removed'), cell(row.right, row.rightNo, 'diff-added')),
        ),
      ),
    ),
  );
}

/** @param {unknown} value */
const shown = (value) => (Array.isArray(value) ? (value.length ? value.join(', ') : 'none') : value === null ? 'none' : String(value));

/**
 * @param {{ from: number, to: number, code: string, sources: { path: string, diff: string }[], settings: { name: string, from: unknown, to: unknown }[] }} diff
 */
export function versionDiffView(diff) {
  const { from, to } = diff;
  return h(
    'div',
    { class: 'version-diff' },
    h('h4', {}, 'Setting changes'),
    diff.settings.length === 0
      ? h('p', { class: 'muted small' }, `The same in v${from} and v${to}.`)
      : h(
          'table',
          { class: 'diff-settings', 'aria-label': 'Settings that differ' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Setting'), h('th', {}, `v${from}`), h('th', {}, `v${to}`))),
          h('tbody', {}, diff.settings.map((s) => h('tr', {}, h('td', {}, s.name), h('td', { class: 'diff-removed' }, shown(s.from)), h('td', { class: 'diff-added' }, shown(s.to))))),
        ),
    ...diff.sources.flatMap((s) => [h('h4', { class: 'mono' }, s.path), sideBySide(s.diff, `${s.path} from v${from} to v${to}`, `v${from}`, `v${to}`)]),
    h('h4', {}, diff.sources.length ? 'Bundle changes' : 'Code changes'),
    diff.code === '' ? h('p', { class: 'muted small' }, `The same in v${from} and v${to}.`) : sideBySide(diff.code, `Code from v${from} to v${to}`, `v${from}`, `v${to}`),
  );
}
