import fc from 'fast-check';
import { DiffBudget, diffLines, splitLines, unifiedDiff } from './line-diff';
import { diffVersions } from './version-diff';
import { DEFAULT_CONNECTOR_LIMITS } from './catalog';

/** A minute of budget on a clock that stands still: the shortest diff, however loaded the machine. */
const ample = () => new DiffBudget(60_000, () => 0);

/** The length of the longest common subsequence, by the textbook table: what a shortest diff keeps. */
function longestCommonSubsequence(a: string[], b: string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (const line of a) {
    let diagonal = 0;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = line === b[j - 1] ? diagonal + 1 : Math.max(row[j], row[j - 1]);
      diagonal = above;
    }
  }
  return row[b.length];
}

/** Applies a unified diff to the text it was made from (hunks in order), as `patch` would. */
function applyUnified(before: string, patch: string): string[] {
  const old = splitLines(before);
  if (patch === '') return old;
  const out: string[] = [];
  let at = 0;
  const lines = splitLines(patch).slice(2);
  for (let k = 0; k < lines.length; k++) {
    const header = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(lines[k]);
    if (!header) throw new Error(`not a hunk header: ${lines[k]}`);
    const oldStart = Number(header[2]) === 0 ? Number(header[1]) : Number(header[1]) - 1;
    out.push(...old.slice(at, oldStart));
    at = oldStart;
    while (k + 1 < lines.length && !lines[k + 1].startsWith('@@')) {
      const line = lines[++k];
      if (line[0] === ' ' || line[0] === '-') {
        expect(old[at]).toBe(line.slice(1));
        at++;
      }
      if (line[0] === ' ' || line[0] === '+') out.push(line.slice(1));
    }
  }
  return [...out, ...old.slice(at)];
}

// Few distinct lines, so that random texts share many of them.
const lines = fc.array(fc.constantFrom('a', 'b', 'c', 'd', '', '  return x;'), { maxLength: 30 });

describe('line diff', () => {
  it('keeps, removes and adds lines so that each side reads back exactly', () => {
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const edits = diffLines(a, b);
        expect(edits.filter((e) => e.op !== '+').map((e) => e.text)).toEqual(a);
        expect(edits.filter((e) => e.op !== '-').map((e) => e.text)).toEqual(b);
      }),
    );
  });

  it('is shortest: as many lines kept one way as the other, and all of them for equal texts', () => {
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const kept = (x: string[], y: string[]) => diffLines(x, y, ample()).filter((e) => e.op === '=').length;
        expect(kept(a, b)).toBe(longestCommonSubsequence(a, b));
        expect(kept(a, b)).toBe(kept(b, a));
        expect(kept(a, a)).toBe(a.length);
        // Adding a line to both sides keeps one more.
        expect(kept([...a, 'z'], [...b, 'z'])).toBe(kept(a, b) + 1);
      }),
    );
  });

  it('gives a unified diff that turns the first text into the second, and nothing for equal texts', () => {
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const before = a.join('\n');
        const after = b.join('\n');
        const patch = unifiedDiff(before, after, { before: 'v1', after: 'v2' });
        expect(applyUnified(before, patch)).toEqual(splitLines(after));
        expect(unifiedDiff(before, before, { before: 'v1', after: 'v1' })).toBe('');
      }),
    );
  });

  it('writes hunks as diff -u does', () => {
    const before = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'].join('\n');
    const after = before.replace('two', 'TWO').replace('nine', 'NINE');
    expect(unifiedDiff(before, after, { before: 'v1/code', after: 'v2/code' }, ample())).toBe(
      ['--- v1/code', '+++ v2/code', '@@ -1,10 +1,10 @@', ' one', '-two', '+TWO', ' three', ' four', ' five', ' six', ' seven', ' eight', '-nine', '+NINE', ' ten', ''].join('\n'),
    );
    expect(unifiedDiff('', 'a\nb\n', { before: 'x', after: 'y' })).toBe('--- x\n+++ y\n@@ -0,0 +1,2 @@\n+a\n+b\n');
  });

  it('sets aside a common head and tail that overlap, keeping each line once', () => {
    expect(diffLines(['a'], ['a', 'a'], ample())).toEqual([{ op: '=', text: 'a' }, { op: '+', text: 'a' }]);
    expect(diffLines(['a', 'a'], ['a'], ample())).toEqual([{ op: '=', text: 'a' }, { op: '-', text: 'a' }]);
    expect(diffLines(['x', 'a'], ['x', 'a', 'b', 'a'], ample()).filter((e) => e.op !== '+').map((e) => e.text)).toEqual(['x', 'a']);
  });

  it('writes separate hunks for changes more than 6 kept lines apart, and one for changes closer, as diff -u does', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => `l${i + 1}`);
    const text = (lines: string[]) => `${lines.join('\n')}\n`;
    const changed = (...at: number[]) => text(twenty.map((line, i) => (at.includes(i + 1) ? line.toUpperCase() : line)));
    const hunk = (header: string, from: number, to: number, change: Record<number, true>) => [
      header,
      ...twenty.slice(from - 1, to).flatMap((line, i) => (change[from + i] ? [`-${line}`, `+${line.toUpperCase()}`] : [` ${line}`])),
    ];
    const labels = { before: 'a', after: 'b' };
    // From `diff -u` of the same texts (GNU diffutils).
    expect(unifiedDiff(text(twenty), changed(5, 13), labels, ample())).toBe(
      ['--- a', '+++ b', ...hunk('@@ -2,7 +2,7 @@', 2, 8, { 5: true }), ...hunk('@@ -10,7 +10,7 @@', 10, 16, { 13: true }), ''].join('\n'),
    );
    expect(unifiedDiff(text(twenty), changed(5, 12), labels, ample())).toBe(['--- a', '+++ b', ...hunk('@@ -2,14 +2,14 @@', 2, 15, { 5: true, 12: true }), ''].join('\n'));
    // A hunk after a removed line counts the lines of each side before it.
    const removed = twenty.filter((line) => line !== 'l3');
    expect(unifiedDiff(text(twenty), `${text(removed)}`.replace('l16', 'L16'), labels, ample())).toBe(
      [
        '--- a', '+++ b',
        '@@ -1,6 +1,5 @@', ' l1', ' l2', '-l3', ' l4', ' l5', ' l6',
        '@@ -13,7 +12,7 @@', ' l13', ' l14', ' l15', '-l16', '+L16', ' l17', ' l18', ' l19', '',
      ].join('\n'),
    );
  });

  it('gives up on a shortest diff that takes longer than the time left, not only once none is left', () => {
    // The diff package checks its own clock: a diff of this size takes it tens of milliseconds, far over the 1 ms left.
    const a = Array.from({ length: 1000 }, (_, i) => `a${i % 7}`);
    const b = Array.from({ length: 1000 }, (_, i) => `a${(i + 3) % 11}`);
    const edits = diffLines(['head', ...a], ['head', ...b], new DiffBudget(1, () => 0));
    expect(edits.filter((e) => e.op === '=').map((e) => e.text)).toEqual(['head']);
    expect(edits.filter((e) => e.op === '-')).toHaveLength(1000);
  });

  it('shows a change as removed then added once the request\'s diff time is spent, still a correct diff', () => {
    const a = Array.from({ length: 50 }, (_, i) => `a${i}`);
    const b = a.map((line, i) => (i % 2 ? line : `b${i}`));
    const spent = new DiffBudget(0);
    const edits = diffLines(['head', ...a, 'tail'], ['head', ...b, 'tail'], spent);
    // The common tail (a49) is set aside; the 49 lines between are all shown as changed.
    expect(edits.filter((e) => e.op === '-')).toHaveLength(49);
    expect(edits.filter((e) => e.op === '=').map((e) => e.text)).toEqual(['head', 'a49', 'tail']);
    // With time left, the shortest diff: the odd lines are kept.
    expect(diffLines(a, b, ample()).filter((e) => e.op === '=')).toHaveLength(25);
  });

  it('shares one budget over a request\'s diffs: the time a first diff spends is gone for the next', () => {
    let now = 0;
    const budget = new DiffBudget(50, () => now);
    expect(budget.remainingMs()).toBe(50);
    now = 49;
    expect(budget.remainingMs()).toBe(1);
    now = 60;
    expect(budget.remainingMs()).toBe(0);
    expect(diffLines(['x', 'y'], ['y', 'z'], budget)).toEqual([
      { op: '-', text: 'x' },
      { op: '-', text: 'y' },
      { op: '+', text: 'y' },
      { op: '+', text: 'z' },
    ]);
  });
});

describe('version diff', () => {
  const base = { code: 'return 1;\n', entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: ['a.example'], limits: { ...DEFAULT_CONNECTOR_LIMITS }, callbackUrl: null };

  it('lists the code, the sources and each setting that differ', async () => {
    const from = { ...base, version: 1, sources: [{ path: 'src/index.ts', content: 'a\n' }, { path: 'src/gone.ts', content: 'x\n' }] };
    const to = { ...base, version: 3, code: 'return 2;\n', timeoutSeconds: 30, allowedHosts: ['a.example', 'b.example'], limits: { ...base.limits, memoryMiB: 128 }, sources: [{ path: 'src/index.ts', content: 'b\n' }] };
    const diff = await diffVersions(from, to);
    expect(diff.code).toBe('--- v1/code\n+++ v3/code\n@@ -1,1 +1,1 @@\n-return 1;\n+return 2;\n');
    expect(diff.sources.map((s) => s.path)).toEqual(['src/index.ts', 'src/gone.ts']);
    expect(diff.settings).toEqual([
      { name: 'timeoutSeconds', from: 60, to: 30 },
      { name: 'limits.memoryMiB', from: 64, to: 128 },
      { name: 'allowedHosts', from: ['a.example'], to: ['a.example', 'b.example'] },
    ]);
  });

  it('names each setting in order, diffs a source one version lacks against nothing, and leaves out the same ones', async () => {
    const from = { ...base, version: 1, sources: [{ path: 'src/same.ts', content: 's\n' }, { path: 'src/gone.ts', content: 'g\n' }] };
    const to = {
      ...base,
      version: 2,
      entityName: 'Invoice',
      pool: 'slow',
      callbackUrl: 'https://hooks.example.com/done',
      inboundAuth: { scheme: 'github' as const, secret: 'GH_SECRET' },
      sources: [{ path: 'src/same.ts', content: 's\n' }, { path: 'src/new.ts', content: 'n\n' }],
    };
    const diff = await diffVersions(from, to);
    expect(diff.settings).toEqual([
      { name: 'entityName', from: 'Order', to: 'Invoice' },
      { name: 'pool', from: 'default', to: 'slow' },
      { name: 'callbackUrl', from: null, to: 'https://hooks.example.com/done' },
      { name: 'inboundAuth', from: { scheme: 'bearer' }, to: { scheme: 'github', secret: 'GH_SECRET' } },
    ]);
    expect(diff.sources).toEqual([
      { path: 'src/gone.ts', diff: '--- v1/src/gone.ts\n+++ v2/src/gone.ts\n@@ -1,1 +0,0 @@\n-g\n' },
      { path: 'src/new.ts', diff: '--- v1/src/new.ts\n+++ v2/src/new.ts\n@@ -0,0 +1,1 @@\n+n\n' },
    ]);
  });

  it('is empty between a version and itself', async () => {
    expect(await diffVersions({ ...base, version: 2 }, { ...base, version: 2 })).toEqual({ from: 2, to: 2, code: '', sources: [], settings: [] });
  });
});
