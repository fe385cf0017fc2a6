// Finds optional dependencies that package-lock.json names but records no entry for, and with --write
// adds a minimal entry for each. Our registry does not serve every platform build of a native package
// (for example @swc/core-darwin-arm64), so npm leaves those entries out when it writes the lockfile on
// this machine, and `npm ci` then rejects the lockfile as out of sync. A stub entry (name, version,
// optional) satisfies that check; npm skips the package at install time when it cannot be fetched.
//
// Usage: node tools/ci/stub-missing-optionals.mjs [--write] [path/to/package-lock.json]
// Exit codes: 0 nothing missing (or stubs written), 1 entries missing (check mode), 2 cannot stub.
import { readFileSync, writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
const write = args.includes('--write');
const lockPath = args.find((arg) => !arg.startsWith('--')) ?? 'package-lock.json';
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const packages = lock.packages ?? {};
const exactVersion = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?$/;

/** The lockfile key npm would resolve `name` to from the package at `from`, or undefined. */
function resolve(from, name) {
  let base = from;
  for (;;) {
    const key = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (key in packages) return key;
    if (!base) return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut >= 0 ? base.slice(0, cut) : '';
  }
}

const missing = [];
const unstubbable = [];
for (const [from, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolve(from, name)) continue;
    if (!exactVersion.test(spec)) {
      unstubbable.push(`${name}@${spec} (optional dependency of ${from || 'the root package'})`);
      continue;
    }
    // Hoist to the top level unless that slot is already taken by another version.
    const top = `node_modules/${name}`;
    const key = top in packages || missing.some((m) => m.key === top) ? `${from}/node_modules/${name}` : top;
    const stub = { version: spec };
    for (const flag of ['dev', 'devOptional', 'peer']) if (entry[flag]) stub[flag] = true;
    stub.optional = true;
    missing.push({ key, stub, label: `${name}@${spec}` });
  }
}

if (unstubbable.length) {
  console.error(`Cannot stub optional dependencies given by a range:\n  ${unstubbable.join('\n  ')}`);
  process.exit(2);
}
if (!missing.length) {
  console.log(`${lockPath}: every optional dependency has an entry`);
  process.exit(0);
}
if (!write) {
  console.error(`${lockPath} has no entry for ${missing.length} optional dependencies, so \`npm ci\` rejects it:`);
  console.error(`  ${missing.map((m) => m.label).join('\n  ')}`);
  console.error(`Fix: node tools/ci/stub-missing-optionals.mjs --write && git add ${lockPath}`);
  process.exit(1);
}

for (const { key, stub } of missing) packages[key] = stub;
// Same order npm writes: root entry first, then locale-compared paths.
const sorted = Object.keys(packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en')));
lock.packages = Object.fromEntries(sorted.map((key) => [key, packages[key]]));
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`${lockPath}: stubbed ${missing.length} optional dependencies:\n  ${missing.map((m) => m.label).join('\n  ')}`);
