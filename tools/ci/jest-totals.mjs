// Prints one "label: N passed, N failed, N skipped" line per jest JSON report (written with
// --json --outputFile), then the sum, so a CI log ends with a plain count of what ran.
// Usage: node tools/ci/jest-totals.mjs label=report.json [label=report.json ...]
import { existsSync, readFileSync } from 'node:fs';

const total = { passed: 0, failed: 0, skipped: 0 };
const line = (label, c) => `${label}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;

for (const arg of process.argv.slice(2)) {
  const [label, file] = arg.split('=');
  if (!existsSync(file)) {
    console.log(`${label}: no jest report (the run stopped before jest finished)`);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const counts = {
    passed: report.numPassedTests,
    failed: report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0),
    skipped: report.numPendingTests + (report.numTodoTests ?? 0),
  };
  for (const key of Object.keys(total)) total[key] += counts[key];
  console.log(line(label, counts));
}
console.log(line('total', total));
