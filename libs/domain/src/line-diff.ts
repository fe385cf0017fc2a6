/**
 * A line diff of two texts (longest common subsequence) and its unified form (`diff -u`), for
 * comparing two versions of a connector. Versions are small (code at most 1 MiB); the common head
 * and tail are set aside first, so a typical edit compares only the lines around it.
 */

export type LineOp = '=' | '-' | '+';

export interface LineEdit {
  op: LineOp;
  text: string;
}

/**
 * The most table cells (changed lines of one side times the other's) compared for a shortest diff;
 * above it the changed middle is shown as removed, then added: still a correct diff, found at once.
 */
export const MAX_DIFF_CELLS = 4_000_000;

const CONTEXT_LINES = 3;

/** The text's lines, without their line ends (`\r\n` or `\n`); no lines for an empty text. */
export const splitLines = (text: string): string[] => (text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/));

/** The edits that turn `before` into `after`: kept lines (`=`), removed (`-`) and added (`+`), in order. */
export function diffLines(before: readonly string[], after: readonly string[]): LineEdit[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const kept = (lines: readonly string[]): LineEdit[] => lines.map((text) => ({ op: '=', text }));
  return [
    ...kept(before.slice(0, head)),
    ...diffMiddle(before.slice(head, before.length - tail), after.slice(head, after.length - tail)),
    ...kept(before.slice(before.length - tail)),
  ];
}

function diffMiddle(a: readonly string[], b: readonly string[]): LineEdit[] {
  const removed = (lines: readonly string[]): LineEdit[] => lines.map((text) => ({ op: '-', text }));
  const added = (lines: readonly string[]): LineEdit[] => lines.map((text) => ({ op: '+', text }));
  if (a.length === 0 || b.length === 0 || a.length * b.length > MAX_DIFF_CELLS) return [...removed(a), ...added(b)];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], row-major in one array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const edits: LineEdit[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      edits.push({ op: '=', text: a[i++] });
      j++;
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
      edits.push({ op: '-', text: a[i++] });
    } else {
      edits.push({ op: '+', text: b[j++] });
    }
  }
  return [...edits, ...removed(a.slice(i)), ...added(b.slice(j))];
}

/**
 * The unified diff of two texts (`--- before` / `+++ after` and `@@` hunks with 3 lines of context);
 * an empty string when they have the same lines.
 */
export function unifiedDiff(before: string, after: string, labels: { before: string; after: string }): string {
  const edits = diffLines(splitLines(before), splitLines(after));
  if (edits.every((edit) => edit.op === '=')) return '';
  const out = [`--- ${labels.before}`, `+++ ${labels.after}`];
  for (const hunk of hunksOf(edits)) out.push(hunk);
  return `${out.join('\n')}\n`;
}

/** Groups the edits into hunks: each change with up to 3 kept lines around it, hunks closer than that merged. */
function hunksOf(edits: LineEdit[]): string[] {
  const changed = edits.flatMap((edit, index) => (edit.op === '=' ? [] : [index]));
  const hunks: string[] = [];
  let next = 0;
  while (next < changed.length) {
    const start = Math.max(0, changed[next] - CONTEXT_LINES);
    let last = changed[next];
    while (next + 1 < changed.length && changed[next + 1] - last - 1 <= 2 * CONTEXT_LINES) last = changed[++next];
    next++;
    const end = Math.min(edits.length, last + CONTEXT_LINES + 1);
    hunks.push(hunkText(edits, start, end));
  }
  return hunks;
}

function hunkText(edits: LineEdit[], start: number, end: number): string {
  // Line numbers where the hunk starts on each side: lines before it that side has, plus one.
  const before = edits.slice(0, start);
  const oldStart = before.filter((e) => e.op !== '+').length;
  const newStart = before.filter((e) => e.op !== '-').length;
  const body = edits.slice(start, end);
  const oldCount = body.filter((e) => e.op !== '+').length;
  const newCount = body.filter((e) => e.op !== '-').length;
  // `diff -u` numbers an empty side by the line before it.
  const range = (from: number, count: number) => `${count === 0 ? from : from + 1},${count}`;
  const lines = body.map((e) => `${e.op === '=' ? ' ' : e.op}${e.text}`);
  return [`@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`, ...lines].join('\n');
}
