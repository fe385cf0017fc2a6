/**
 * The one home of conditional skips. A suite that needs something this machine may lack (a tool, root,
 * a server) runs where it is present; elsewhere it prints exactly one line `SKIPPED <what>: <reason>`
 * and registers a skipped test saying why, unless REQUIRE_SUITES names it: then the skip is a failing
 * test with the reason, so a suite that silently stops running turns CI red (.ci/run sets it).
 */

/** The suites that skip where their prerequisite is missing, as REQUIRE_SUITES names them. */
export const SKIPPABLE_SUITES = ['promtool', 'caddy', 'compose', 'netns', 'tmpfs', 'bash', 'mongo'] as const;
export type SkippableSuite = (typeof SKIPPABLE_SUITES)[number];
/** Accepted in REQUIRE_SUITES but never skipped: the browser tests fail without Chromium. */
const NEVER_SKIPPED = ['chromium'];

/** REQUIRE_SUITES (a comma list) as a set; an unknown name throws, so a typo cannot let a skip through. */
export function requiredSuites(env: NodeJS.ProcessEnv = process.env): Set<SkippableSuite> {
  const names = (env.REQUIRE_SUITES ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(SKIPPABLE_SUITES as readonly string[]).includes(name) && !NEVER_SKIPPED.includes(name));
  if (unknown.length > 0) {
    throw new Error(`REQUIRE_SUITES: unknown suite ${unknown.join(', ')} (known: ${[...SKIPPABLE_SUITES, ...NEVER_SKIPPED].join(', ')})`);
  }
  return new Set(names as SkippableSuite[]);
}

/** What becomes of a suite's tests: run, skip (with one SKIPPED line), or fail because REQUIRE_SUITES names it. */
export function skipDecision(suite: SkippableSuite, unavailable: string | undefined, required: Set<SkippableSuite>): 'run' | 'skip' | 'fail' {
  if (unavailable === undefined) return 'run';
  return required.has(suite) ? 'fail' : 'skip';
}

export interface SuiteNeed {
  suite: SkippableSuite;
  /** What does not run, for the SKIPPED line: "promtool check of the metrics". */
  what: string;
  /** Why it cannot run here, or undefined when it can. */
  unavailable: string | undefined;
  /** Where it does run, for the skipped test's title: "runs where promtool is installed (Debian package prometheus)". */
  runsWhen?: string;
}

type TestFn = (name: string, fn: jest.ProvidesCallback, timeout?: number) => void;

const failure = (need: SuiteNeed) => new Error(`REQUIRE_SUITES names ${need.suite}, but ${need.what} cannot run here: ${need.unavailable}`);
const skippedTitle = (need: SuiteNeed) => `${need.what}: skipped because ${need.unavailable}${need.runsWhen ? `; ${need.runsWhen}` : ''}`;
const announceSkip = (need: SuiteNeed) => process.stdout.write(`SKIPPED ${need.what}: ${need.unavailable}\n`);

/**
 * The `it` of tests that need `need.suite`: jest's own when it is available; else `it.skip` after one
 * SKIPPED line (printed here, once, however many tests use it), or a test that fails with the reason.
 */
export function itWhere(need: SuiteNeed): TestFn {
  const decision = skipDecision(need.suite, need.unavailable, requiredSuites());
  if (decision === 'run') return it;
  if (decision === 'fail') return (name) => it(name, () => Promise.reject(failure(need)));
  announceSkip(need);
  return (name, fn) => it.skip(name, fn);
}

/**
 * `describe(title, body)` when `need.suite` is available; else a describe of one skipped test saying
 * why (after one SKIPPED line), or of one test failing with the reason.
 */
export function describeWhere(need: SuiteNeed, title: string, body: () => void): void {
  const decision = skipDecision(need.suite, need.unavailable, requiredSuites());
  if (decision === 'run') return describe(title, body);
  describe(title, () => {
    if (decision === 'fail') return it(`${need.what} runs`, () => Promise.reject(failure(need)));
    announceSkip(need);
    it.skip(skippedTitle(need), () => undefined);
  });
}
