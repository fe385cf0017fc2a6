/**
 * Preloaded into a service (`node -r`) to count the SQLite statements its main thread executes, by
 * SQL text. On SIGUSR2 the counts so far are written as JSON to $COUNT_STATEMENTS_FILE. Used by
 * statements-per-call.mjs; it changes nothing else.
 */
'use strict';
const { isMainThread } = require('node:worker_threads');
const { writeFileSync } = require('node:fs');

if (isMainThread && process.env.COUNT_STATEMENTS_FILE) {
  const Database = require('better-sqlite3');
  const counts = new Map();
  const count = (sql) => counts.set(sql, (counts.get(sql) ?? 0) + 1);
  const probe = new Database(':memory:');
  const Statement = Object.getPrototypeOf(probe.prepare('SELECT 1'));
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = Statement[method];
    Statement[method] = function counted(...args) {
      count(this.source);
      return original.apply(this, args);
    };
  }
  const exec = Database.prototype.exec;
  Database.prototype.exec = function counted(sql) {
    count(sql);
    return exec.call(this, sql);
  };
  process.on('SIGUSR2', () => {
    writeFileSync(`${process.env.COUNT_STATEMENTS_FILE}.tmp`, JSON.stringify(Object.fromEntries(counts)));
    require('node:fs').renameSync(`${process.env.COUNT_STATEMENTS_FILE}.tmp`, process.env.COUNT_STATEMENTS_FILE);
  });
}
