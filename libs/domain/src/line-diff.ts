import { diffArrays } from 'diff';

/**
 * A line diff of two texts (Myers' algorithm, the `diff` package) and its unified form (`diff -u`),
 * for comparing two versions of a connector. The common head and tail are set aside first, so a
 * typical edit compares only the lines around it. The time one request may spend looking for
 * shortest diffs is bounded (DiffBudget): past it a changed middle is shown as removed, then added.
 */

export type LineOp = '=' | '-' | '+';

export interface LineEdit {
  op: LineOp;
  text: string;
}

/**
 * The time one request's line diffs may spend looking for shortest diffs (ms): past it a changed
 * middle is shown as removed, then added (still a correct diff, found at once). Myers' algorithm
 * costs up to (lines) x (edits) comparisons, so without it a request diffing code and 100 source
 * files at their size limits held the event loop for seconds.
 */
export const DIFF_BUDGET_MS = 50;

/** What is left of one request's diff time; its diffs share it (version-diff: the code, then each source file). */
export class DiffBudget {
  private readonly deadline: number;

  constructor(
    ms: number = DIFF_BUDGET_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.deadline = now() + ms;
  }

  remainingMs(): number {
    return Math.max(0, this.deadline - this.now());
  }
}

const CONTEXT_LINES = 3;

/** The text's lines, without their line ends (`\r\n` or `\n`); no lines for an empty text. */
export const splitLines = (text: string): string[] => (text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/));

/** The edits that turn `before` into `after`: kept lines (`=`), removed (`-`) and added (`+`), in order. */
export function diffLines(before: readonly string[], after: readonly string[], budget: DiffBudget = new DiffBudget()): LineEdit[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const edits: LineEdit[] = [];
  for (let i = 0; i < head; i++) edits.push({ op: '=', text: before[i] });
  diffMiddle(before.slice(head, before.length - tail), after.slice(head, after.length - tail), budget, edits);
  for (let i = before.length - tail; i < before.length; i++) edits.push({ op: '=', text: before[i] });
  return edits;
}

/** Appends the edits of the changed middle to `edits`. */
function diffMiddle(a: string[], b: string[], budget: DiffBudget, edits: LineEdit[]): void {
  const timeout = a.length > 0 && b.length > 0 ? budget.remainingMs() : 0;
  const changes = timeout > 0 ? diffArrays(a, b, { timeout }) : undefined;
  if (!changes) {
    for (const text of a) edits.push({ op: '-', text });
    for (const text of b) edits.push({ op: '+', text });
    return;
  }
  for (const change of changes) {
    const op: LineOp = change.added ? '+' : change.removed ? '-' : '=';
    for (const text of change.value) edits.push({ op, text });
  }
}

/**
 * The unified diff of two texts (`--- before` / `+++ after` and `@@` hunks with 3 lines of context);
 * an empty string when they have the same lines.
 */
export function unifiedDiff(before: string, after: string, labels: DiffLabels, budget: DiffBudget = new DiffBudget()): string {
  return unifiedText(diffLines(splitLines(before), splitLines(after), budget), labels);
}

export interface DiffLabels {
  before: string;
  after: string;
}

/** The unified diff of edits made by diffLines; an empty string when they change nothing. */
export function unifiedText(edits: LineEdit[], labels: DiffLabels): string {
  if (edits.every((edit) => edit.op === '=')) return '';
  const out = [`--- ${labels.before}`, `+++ ${labels.after}`];
  for (const hunk of hunksOf(edits)) out.push(hunk);
  return `${out.join('\n')}\n`;
}

/** Groups the edits into hunks: each change with up to 3 kept lines around it, hunks closer than that merged. */
function hunksOf(edits: LineEdit[]): string[] {
  const changed: number[] = [];
  for (let index = 0; index < edits.length; index++) if (edits[index].op !== '=') changed.push(index);
  const hunks: string[] = [];
  // Lines of each side before `at`, counted as the hunks move on (one pass over the edits in all).
  const position = { at: 0, old: 0, new: 0 };
  const moveTo = (index: number) => {
    for (; position.at < index; position.at++) {
      if (edits[position.at].op !== '+') position.old++;
      if (edits[position.at].op !== '-') position.new++;
    }
  };
  let next = 0;
  while (next < changed.length) {
    const start = Math.max(0, changed[next] - CONTEXT_LINES);
    let last = changed[next];
    while (next + 1 < changed.length && changed[next + 1] - last - 1 <= 2 * CONTEXT_LINES) last = changed[++next];
    next++;
    const end = Math.min(edits.length, last + CONTEXT_LINES + 1);
    moveTo(start);
    hunks.push(hunkText(edits, start, end, position.old, position.new));
  }
  return hunks;
}

/** One hunk; `oldStart` and `newStart` are the lines each side has before it. */
function hunkText(edits: LineEdit[], start: number, end: number, oldStart: number, newStart: number): string {
  let oldCount = 0;
  let newCount = 0;
  const lines: string[] = [''];
  for (let i = start; i < end; i++) {
    const { op, text } = edits[i];
    if (op !== '+') oldCount++;
    if (op !== '-') newCount++;
    lines.push(`${op === '=' ? ' ' : op}${text}`);
  }
  // `diff -u` numbers an empty side by the line before it.
  const range = (from: number, count: number) => `${count === 0 ? from : from + 1},${count}`;
  lines[0] = `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`;
  return lines.join('\n');
}
