import { statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { mongoUrlOf, sqlitePathOf } from '@gi/config';
import type { Clock, Store } from '@gi/domain';
import type { ReadinessCheck } from '@gi/http';
import type { ServiceBase } from './open-store';

// The dependencies a process's readiness may cover (docs/operations.md, What runs where, says which
// each process covers; docs/decisions.md why control covers the store alone).

/**
 * What the readiness of a process that writes covers (gateway, executor, embedded): the store answers
 * and takes writes, and, where the process writes to local disk (a SQLite store, uploaded files on
 * disk), that disk has room.
 */
export function writerChecks({ config, store, clock }: ServiceBase): Record<string, ReadinessCheck> {
  const local = mongoUrlOf(config) ? [] : [dirname(sqlitePathOf(config)), config.DATA_DIR];
  return {
    store: storeAnswers(store),
    storeWrites: storeTakesWrites(store, clock),
    ...(local.length > 0 && config.READY_MIN_FREE_DISK > 0 ? { disk: diskHasRoom(local, config.READY_MIN_FREE_DISK) } : {}),
  };
}

/** The store answers a read. */
export function storeAnswers(store: Pick<Store, 'ping'>): ReadinessCheck {
  return async () => ((await store.ping()) ? 'ok' : 'unreachable');
}

/** The broker answers (a round trip on the bus's connection). */
export function brokerAnswers(bus: { ping(): Promise<boolean> }): ReadinessCheck {
  return async () => ((await bus.ping()) ? 'ok' : 'unreachable');
}

/** A new probe write is made at most this often, however often readiness is asked (/readyz is public). */
const PROBE_EVERY_MS = 1000;
/** How long /readyz waits for the probe's answer; a slower one goes on, and the next ask reads its verdict. */
const PROBE_ANSWER_MS = 2000;
/** The probe's instance rows are forgotten (by the next probe of any process) ten times this after the last. */
const PROBE_TTL_MS = 60_000;

/**
 * The store takes a write: a heartbeat of this process in the instance registry (role `readiness`), a
 * real write through the store's own path (a SQLite transaction in the WAL, a MongoDB majority write).
 * A store that answers reads but refuses writes (a full or failing disk, a read-only file, a replica set
 * without a majority) fails it. Probes are shared: at most one a second, whoever asks. A probe still
 * unanswered after PROBE_ANSWER_MS leaves the verdict as the last probe left it; the store's own
 * timeout ends it (10 s on MongoDB), and a refusal then is reported.
 */
export function storeTakesWrites(store: Pick<Store, 'instances'>, clock: Clock): ReadinessCheck {
  const instanceId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  let verdict = 'ok';
  let probing: Promise<void> | null = null;
  let lastProbe = Number.NEGATIVE_INFINITY;
  return async () => {
    if (!probing && performance.now() - lastProbe >= PROBE_EVERY_MS) {
      lastProbe = performance.now();
      probing = store.instances.heartbeat('readiness', instanceId, clock.now(), PROBE_TTL_MS).then(
        () => void (verdict = 'ok'),
        () => void (verdict = 'refusing writes'),
      );
      void probing.finally(() => (probing = null));
    }
    if (probing) await settledOrAfter(probing, PROBE_ANSWER_MS);
    return verdict;
  };
}

/** Resolves when `work` settles or `ms` has passed, whichever comes first. */
async function settledOrAfter(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Disk pressure: the file systems of `directories` (the SQLite store's, the uploaded files') have at
 * least `minFreeBytes` free to unprivileged writers (READY_MIN_FREE_DISK). Below it writes are about to
 * fail, so the process says so before they do.
 */
export function diskHasRoom(directories: string[], minFreeBytes: number): ReadinessCheck {
  const unique = [...new Set(directories.map((directory) => resolve(directory)))];
  return async () => {
    const free = await Promise.all(unique.map(freeBytes));
    return Math.min(...free) >= minFreeBytes ? 'ok' : 'low on space';
  };
}

/** Free bytes of the file system holding `path`, or its nearest existing parent (a directory made on first use). */
async function freeBytes(path: string): Promise<number> {
  for (let at = path; ; at = dirname(at)) {
    try {
      const stats = await statfs(at);
      return stats.bavail * stats.bsize;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) throw error;
    }
  }
}
